package htmlreport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser finds a Chromium on PATH (scripts/install-browser.sh installs
// Debian's).
func browser() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestBrowser opens the naive run's report from file:// in headless
// Chromium and uses it as a reader would: filter by bucket, open a failed
// call, follow a finding's citation, click a lane mark, switch the axis to
// event order. It saves a screenshot of the opened call as
// report-naive.png, in $CALLPROOF_SCREENSHOT_DIR when set (docs/img/ holds
// the one the README shows).
func TestBrowser(t *testing.T) {
	exe := browser()
	if exe == "" {
		t.Skip("no chromium, chromium-browser or google-chrome on PATH: run scripts/install-browser.sh (make deps)")
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "report.html")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := Write(f, naive(t)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.Headless,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1000), chromedp.Flag("hide-scrollbars", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox as root
	}
	// Every wait below is bounded by this one deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithErrorf(t.Logf))
	defer cancelTab()

	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	visibleCalls := func() []string {
		t.Helper()
		calls, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('table.calls tbody tr')).filter(r => r.offsetParent !== null).map(r => r.dataset.call)`))
		if err != nil {
			t.Fatal(err)
		}
		return calls
	}

	do("open the report", chromedp.EmulateViewport(1400, 1000), chromedp.Navigate("file://"+file),
		chromedp.WaitVisible(chromedp.CSS(`#row-corr-02`)))
	if got := visibleCalls(); !slices.Equal(got, []string{"corr-01", "corr-02", "tf-06"}) {
		t.Fatalf("calls shown at first: %v", got)
	}

	// The bucket filter: from the root-cause table, then the select box.
	do("pick a bucket in the summary", chromedp.Click(chromedp.CSS(`a[data-filter="bucket"][data-value="stale_tool_args"]`)))
	if got := visibleCalls(); !slices.Equal(got, []string{"corr-02"}) {
		t.Errorf("bucket stale_tool_args shows %v, want [corr-02]", got)
	}
	choose := func(name, value string) {
		t.Helper()
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector('#filters select[name="`+name+`"]');
			s.value = "`+value+`"; s.dispatchEvent(new Event('change', {bubbles: true})); return true })()`))
		if err != nil {
			t.Fatal(err)
		}
	}
	choose("bucket", "missing_idempotency_key")
	if got := visibleCalls(); !slices.Equal(got, []string{"tf-06"}) {
		t.Errorf("bucket missing_idempotency_key shows %v, want [tf-06]", got)
	}
	choose("bucket", "-")
	if got := visibleCalls(); !slices.Equal(got, []string{"corr-01"}) {
		t.Errorf("no bucket shows %v, want [corr-01]", got)
	}
	choose("bucket", "")
	choose("axis", "tool_args_correct")
	if got := visibleCalls(); !slices.Equal(got, []string{"corr-02"}) {
		t.Errorf("failing axis tool_args_correct shows %v, want [corr-02]", got)
	}
	do("clear the filters", chromedp.Click(chromedp.CSS(`#filters button[type=reset]`)), chromedp.Sleep(50*time.Millisecond))
	if got := visibleCalls(); len(got) != 3 {
		t.Errorf("after clear %v are shown, want all three", got)
	}

	// Open corr-02 by clicking its row: the events its failing axes cite
	// are highlighted at once.
	do("open corr-02", chromedp.Click(chromedp.CSS(`#row-corr-02 td:nth-child(2)`)), chromedp.WaitVisible(chromedp.CSS(`#call-corr-02 .track`)))
	open, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('section.call')).filter(s => s.offsetParent !== null).map(s => s.dataset.call)`))
	if err != nil || !slices.Equal(open, []string{"corr-02"}) {
		t.Fatalf("open calls %v (%v), want [corr-02]", open, err)
	}
	cited, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#call-corr-02 table.events tr.cited')).filter(r => r.offsetParent !== null).map(r => r.dataset.seq)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []string{"30", "33", "34", "39", "41", "53"} {
		if !slices.Contains(cited, seq) {
			t.Errorf("on opening, #%s (cited by a failing axis) is not highlighted; highlighted: %v", seq, cited)
		}
	}

	// Follow tool_args_correct's first citation, #33: the finding's events
	// (#33 and #39) are focused in lanes and table, and #33's mark is on
	// screen, on top.
	do("follow a citation", chromedp.Click(chromedp.CSS(`#call-corr-02 .axis.v-fail a.cite[data-cite="33"]`)), chromedp.Sleep(100*time.Millisecond))
	type state struct {
		Marks, Rows     int  // focused, visible, cited
		OnScreen, OnTop bool // the lead mark
		Level           bool // lanes level with their labels
		Hash            string
	}
	check := func(seqs []string, lead string) state {
		t.Helper()
		js := `(() => {
			const sec = document.getElementById('call-corr-02');
			const seqs = ` + jsList(seqs) + `;
			const ok = el => el.offsetParent !== null && el.classList.contains('focus') && el.getBoundingClientRect().width > 0;
			let marks = 0, rows = 0;
			for (const s of seqs) {
				const m = sec.querySelectorAll('.track [data-seq="' + s + '"]');
				if (m.length && Array.from(m).every(el => ok(el) && el.classList.contains('cited'))) marks++;
				const r = sec.querySelector('table.events tr[data-seq="' + s + '"]');
				if (r && ok(r) && r.classList.contains('cited')) rows++;
			}
			const lead = sec.querySelector('.track [data-seq="` + lead + `"]');
			const b = lead.getBoundingClientRect();
			const x = b.left + b.width / 2, y = b.top + b.height / 2;
			const onScreen = x >= 0 && y >= 0 && x <= innerWidth && y <= innerHeight;
			const hit = document.elementFromPoint(x, y);
			// Each lane row sits level with its label.
			const heads = sec.querySelectorAll('.heads .row-h'), rowsAt = sec.querySelectorAll('.track .row');
			let level = heads.length === rowsAt.length;
			heads.forEach((h, i) => { level = level && Math.abs(h.getBoundingClientRect().top - rowsAt[i].getBoundingClientRect().top) < 1.5; });
			return {Marks: marks, Rows: rows, OnScreen: onScreen, OnTop: !!hit && (hit === lead || lead.contains(hit)), Level: level, Hash: location.hash};
		})()`
		st, err := chromedp.Run(ctx, chromedp.Evaluate[state](js))
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := check([]string{"33", "39"}, "33")
	if st.Marks != 2 || st.Rows != 2 {
		t.Errorf("after following #33: %d of 2 lane marks and %d of 2 table rows are visible, cited and focused", st.Marks, st.Rows)
	}
	if !st.OnScreen || !st.OnTop {
		t.Errorf("#33's lane mark: on screen %v, on top %v", st.OnScreen, st.OnTop)
	}
	if !st.Level {
		t.Error("after following #33 the lanes are no longer level with their labels")
	}
	t.Logf("address after the citation: %q", st.Hash)

	shot, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { window.scrollTo(0, document.getElementById('call-corr-02').offsetTop - 12); return true })()`))
	if err != nil || !shot {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	out := os.Getenv("CALLPROOF_SCREENSHOT_DIR")
	if out == "" {
		out = t.TempDir()
	}
	if err := os.WriteFile(filepath.Join(out, "report-naive.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", filepath.Join(out, "report-naive.png"), len(png))

	// In event order every event has room of its own: clicking the commit
	// mark (#34) on the backend lane focuses it and brings its table row
	// into view.
	do("switch to event order", chromedp.Click(chromedp.CSS(`#call-corr-02 input[value="order"]`)),
		chromedp.Click(chromedp.CSS(`#call-corr-02 .backend .m[data-seq="34"]`)), chromedp.Sleep(100*time.Millisecond))
	row, err := chromedp.Run(ctx, chromedp.Evaluate[state](`(() => {
		const r = document.getElementById('corr-02-e34'), b = r.getBoundingClientRect();
		const on = b.top >= 0 && b.bottom <= innerHeight;
		return {Rows: r.classList.contains('focus') ? 1 : 0, OnScreen: on,
			Marks: document.body.classList.contains('by-order') ? 1 : 0};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if row.Marks != 1 || row.Rows != 1 || !row.OnScreen {
		t.Errorf("after clicking #34's mark in event order: by-order %d, row focused %d, row on screen %v", row.Marks, row.Rows, row.OnScreen)
	}
}

func jsList(ss []string) string {
	out := "["
	for i, s := range ss {
		if i > 0 {
			out += ","
		}
		out += `"` + s + `"`
	}
	return out + "]"
}
