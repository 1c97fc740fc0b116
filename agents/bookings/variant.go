package bookings

import "fmt"

// Variant is one behaviour of the engine: the correct desk plus at most
// one flaw (Compensate is a correct extra, not a flaw).
type Variant struct {
	Name string
	Doc  string // one line: what this variant does differently

	// Compensate: a write the caller withdraws after it landed is undone
	// by a second write restoring the previous values (mender).
	Compensate bool

	// FrozenArgs: a write's arguments are fixed from the words heard when
	// the desk started working; later corrections reach its speech and
	// self-report but never the tool call (stale).
	FrozenArgs bool
	// NoCancel: a write in flight is never aborted; after a stop the desk
	// says nothing changed and forgets the write (sticky).
	NoCancel bool
	// TrustLookup: a tool answer is taken at face value, even one about
	// another booking than the one asked for (trusting).
	TrustLookup bool
	// ClaimOnSend: the success line is spoken as soon as the write is
	// sent, and the write's answer is never looked at (eager).
	ClaimOnSend bool
	// NoKeys: writes carry no Idempotency-Key, retries included (keyless).
	NoKeys bool
	// NoiseBargeIn: any sound while speaking is taken for the caller
	// barging in; the desk stops and drops the task (jumpy).
	NoiseBargeIn bool
	// GiveUpFirst: the first transient failure ends the attempt, and the
	// desk says so truthfully (quitter).
	GiveUpFirst bool
	// SkipCreate: a new booking is claimed without ever calling
	// book_table (phantom).
	SkipCreate bool
}

// Variants lists every variant, correct ones first.
func Variants() []Variant {
	return []Variant{
		{Name: "steady", Doc: "correct: reads before writing, keys every write, cancels on stop or correction, verifies odd answers, tells the truth"},
		{Name: "mender", Compensate: true, Doc: "correct, and undoes a landed write the caller withdraws with a restoring write"},
		{Name: "stale", FrozenArgs: true, Doc: "writes the values heard when it started, not the corrected ones"},
		{Name: "sticky", NoCancel: true, Doc: "never aborts a write in flight; after a stop it says nothing changed"},
		{Name: "trusting", TrustLookup: true, Doc: "believes a lookup that returns another booking and writes to it"},
		{Name: "eager", ClaimOnSend: true, Doc: "claims success when it sends a write and ignores the answer"},
		{Name: "keyless", NoKeys: true, Doc: "sends no Idempotency-Key, so a retry after a lost answer books twice"},
		{Name: "jumpy", NoiseBargeIn: true, Doc: "takes background noise for a barge-in and drops the task"},
		{Name: "quitter", GiveUpFirst: true, Doc: "gives up after one transient error and says so"},
		{Name: "phantom", SkipCreate: true, Doc: "claims a new booking without calling book_table"},
	}
}

// VariantByName finds a variant.
func VariantByName(name string) (Variant, error) {
	if name == "" {
		name = "steady"
	}
	for _, v := range Variants() {
		if v.Name == name {
			return v, nil
		}
	}
	return Variant{}, fmt.Errorf("bookings: unknown variant %q", name)
}
