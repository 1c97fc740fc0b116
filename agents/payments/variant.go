package payments

import "fmt"

// Variant is one behaviour of the engine: a correct line, or a correct
// line with exactly one flaw.
type Variant struct {
	Name string
	Doc  string

	Terse     bool // short lines: "Your payment is on its way.", "Okay, that's cancelled."
	Frozen    bool // writes the values heard first, whatever was corrected (stale)
	NoAbort   bool // never aborts a write in flight nor undoes a landed one (keeper)
	Eager     bool // claims success when the write is sent (eager)
	NoKey     bool // writes carry no Idempotency-Key (keyless)
	Quit      bool // the first transient failure ends the attempt (quitter)
	NoCreate  bool // claims a new payment without scheduling it (phantom)
	WrongFrom bool // the confirmation names another account than the one written (mixup)
	DayLate   bool // the confirmation says the day after the date written (offbyone)
}

// Variants lists every variant, correct ones first.
func Variants() []Variant {
	return []Variant{
		{Name: "careful", Doc: "correct: looks up, reads back, keys writes, aborts or undoes what the caller withdraws, retries transient failures, says what the backend holds"},
		{Name: "terse", Terse: true, Doc: "correct, with short everyday lines (\"Your payment is on its way.\", \"Okay, that's cancelled.\")"},
		{Name: "stale", Frozen: true, Doc: "writes the values first heard, not the corrected ones (but says the corrected ones)"},
		{Name: "keeper", NoAbort: true, Doc: "never aborts a write in flight nor cancels a landed payment the caller withdraws; says nothing was sent"},
		{Name: "eager", Eager: true, Doc: "says it is done when it sends a write and never reads the answer"},
		{Name: "keyless", NoKey: true, Doc: "sends no Idempotency-Key, so a retry after a lost answer pays twice"},
		{Name: "quitter", Quit: true, Doc: "gives up after one transient failure and says so"},
		{Name: "phantom", NoCreate: true, Doc: "says a new payment is scheduled without calling schedule_payment"},
		{Name: "mixup", WrongFrom: true, Doc: "confirms the payment from another account nickname than the one it wrote"},
		{Name: "offbyone", DayLate: true, Doc: "confirms the day after the date it wrote"},
	}
}

// VariantByName finds a variant; "" is careful.
func VariantByName(name string) (Variant, error) {
	if name == "" {
		name = "careful"
	}
	for _, v := range Variants() {
		if v.Name == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("payments: unknown variant %q", name)
}
