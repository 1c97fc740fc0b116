package scorer

import (
	"fmt"

	"github.com/callproof/callproof/trace"
)

// backendCorrect: the final snapshot is the state the caller's last intent
// implies, and no effect happened twice (docs/SCORING.md, axis 5).
func (v *view) backendCorrect() AxisResult {
	res := AxisResult{Axis: BackendCorrect}
	if v.final == nil || v.snap == nil {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, Finding{Text: "no caller intent or no backend snapshot"})
		return res
	}
	if v.wantNote != "" {
		res.Verdict = Unknown
		res.Findings = append(res.Findings, v.find(InsufficientEvidence+": the intended state cannot be computed: "+v.wantNote, v.finalSeq))
		return res
	}
	res.Verdict = Pass
	cs := v.commits()
	if d := v.diff; len(d) > 0 {
		res.Verdict = Fail
		res.Findings = append(res.Findings, v.find(fmt.Sprintf("snapshot differs from the intended state in %d field(s): %s", len(d), diffText(d)), v.snapSeq))
	}
	for _, f := range v.duplicates(cs) {
		res.Verdict = Fail
		res.Findings = append(res.Findings, f)
	}
	if res.Verdict == Pass {
		res.Findings = append(res.Findings, v.find("snapshot equals the intended state", v.snapSeq))
	}
	return res
}

// duplicates finds creates committed more than once: each left a record
// (a second booking, a second shipment). A repeated update leaves the
// same values, so the snapshot alone judges it.
func (v *view) duplicates(cs []commitRef) []Finding {
	var out []Finding
	for i, c := range cs {
		if c.r.spec.Effect != trace.EffectCreate {
			continue
		}
		for _, p := range cs[:i] {
			if effect(p.r) == effect(c.r) {
				out = append(out, v.find(describe(c.r.tool, c.r.args)+" committed twice", p.seq, c.seq))
				break
			}
		}
	}
	return out
}

func diffText(ds []trace.FieldDiff) string {
	s := ""
	for i, d := range ds {
		if i == 3 {
			return s + ", ..."
		}
		if i > 0 {
			s += ", "
		}
		s += d.Table + "/" + d.Key
		if d.Field != "" {
			s += "." + d.Field
		}
		s += " want " + quote(d.Want) + " got " + quote(d.Got)
	}
	return s
}

func quote(s string) string {
	if s == "" {
		return `""`
	}
	return s
}
