// callproof HTML report: opening calls, following citations, filters,
// axis mode and zoom. No framework, no network; the page is readable
// without it (a call opens through :target, citations are plain anchors).
(function () {
  'use strict';

  function all(sel, root) {
    return Array.prototype.slice.call((root || document).querySelectorAll(sel));
  }

  function callOf(el) {
    return el && el.closest ? el.closest('section.call') : null;
  }

  // Replace the address's fragment without a hashchange, so links can be
  // shared; file:// pages may refuse, which costs nothing.
  function remember(hash) {
    try {
      history.replaceState(null, '', hash);
    } catch (e) { /* ignore */ }
  }

  function openCall(sec, scroll) {
    all('section.call.open').forEach(function (s) {
      if (s !== sec) s.classList.remove('open');
    });
    all('table.calls tr.sel').forEach(function (r) { r.classList.remove('sel'); });
    if (!sec) return;
    sec.classList.add('open');
    var row = document.getElementById('row-' + sec.dataset.call);
    if (row) row.classList.add('sel');
    if (scroll) sec.scrollIntoView({ block: 'start' });
  }

  // focus highlights the events with the given seqs, in the lanes and the
  // event table, and brings the lead one's lane mark into view.
  function focus(sec, seqs, lead) {
    all('.focus', sec).forEach(function (el) { el.classList.remove('focus'); });
    seqs.forEach(function (s) {
      all('.track [data-seq="' + s + '"], table.events tr[data-seq="' + s + '"]', sec).forEach(function (el) {
        el.classList.add('focus');
      });
    });
    var mark = lead ? sec.querySelector('.track [data-seq="' + lead + '"]') : null;
    if (mark) mark.scrollIntoView({ block: 'center', inline: 'center' });
  }

  function route(scroll) {
    var id = decodeURIComponent(location.hash.replace(/^#/, ''));
    var el = id ? document.getElementById(id) : null;
    if (!el) return;
    if (el.matches('section.call')) {
      openCall(el, scroll);
      return;
    }
    var sec = callOf(el);
    if (!sec) return;
    openCall(sec, false);
    if (el.dataset.seq) {
      focus(sec, [el.dataset.seq], null);
      el.scrollIntoView({ block: 'center' });
    }
  }

  // Filters hide the calls that do not match every chosen value.
  var form = document.getElementById('filters');
  var shown = document.getElementById('shown');

  function has(list, v) {
    return (' ' + list + ' ').indexOf(' ' + v + ' ') >= 0;
  }

  function applyFilters() {
    var f = {};
    all('select', form).forEach(function (s) { f[s.name] = s.value; });
    var rows = all('table.calls tbody tr');
    var n = 0;
    rows.forEach(function (r) {
      var d = r.dataset;
      var ok = true;
      if (f.bucket === '-') ok = ok && d.buckets === '';
      else if (f.bucket) ok = ok && has(d.buckets, f.bucket);
      if (f.axis === '*') ok = ok && d.fail !== '';
      else if (f.axis) ok = ok && has(d.fail, f.axis);
      if (f.outcome) ok = ok && d.outcome === f.outcome;
      if (f.integrity) ok = ok && d.integrity === f.integrity;
      r.hidden = !ok;
      if (ok) n++;
    });
    shown.textContent = n + ' of ' + rows.length + ' calls';
  }

  form.addEventListener('change', applyFilters);
  form.addEventListener('reset', function () { setTimeout(applyFilters, 0); });

  document.addEventListener('click', function (ev) {
    var t = ev.target;
    var cite = t.closest('a.cite');
    if (cite) {
      ev.preventDefault();
      var sec = callOf(cite);
      openCall(sec, false);
      var li = cite.closest('[data-seqs]');
      focus(sec, li.dataset.seqs.split(' '), cite.dataset.cite);
      remember(cite.getAttribute('href'));
      return;
    }
    var mark = t.closest('.track .m');
    if (mark) {
      ev.preventDefault();
      var msec = callOf(mark);
      focus(msec, [mark.dataset.seq], null);
      var target = document.getElementById(mark.getAttribute('href').slice(1));
      if (target) target.scrollIntoView({ block: 'center' });
      remember(mark.getAttribute('href'));
      return;
    }
    var pick = t.closest('[data-filter]');
    if (pick) {
      ev.preventDefault();
      form.reset();
      var sel = form.querySelector('select[name="' + pick.dataset.filter + '"]');
      if (sel) sel.value = pick.dataset.value;
      applyFilters();
      document.getElementById('calls').scrollIntoView({ block: 'start' });
      return;
    }
    var row = t.closest('table.calls tbody tr');
    if (row && !t.closest('a')) {
      var want = '#call-' + row.dataset.call;
      if (location.hash === want) route(true);
      else location.hash = want;
    }
  });

  // Axis mode (time or event order) holds for every call; zoom is per call.
  document.addEventListener('change', function (ev) {
    var t = ev.target;
    var sec = callOf(t);
    if (!sec) return;
    if (t.matches('input[type=radio][name^="mode-"]')) {
      document.body.classList.toggle('by-order', t.value === 'order');
      all('section.call input[type=radio][value="' + t.value + '"]').forEach(function (r) { r.checked = true; });
    } else if (t.matches('select.zoom')) {
      sec.querySelector('.track').style.setProperty('--zoom', t.value);
    }
  });

  window.addEventListener('hashchange', function () { route(true); });
  route(true);
})();
