package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/callproof/callproof/scenarios"
)

// MaxTrials bounds --trials: a run places trials × scenarios calls, and
// pass^k over more than this many tries says nothing a smaller k does not.
const MaxTrials = 100

// trialSep joins a scenario id and a trial number into a call id. Scenario
// ids are [a-z0-9][a-z0-9_-]* (scenarios.Compile), so ".t" never occurs in
// one and the split is unambiguous.
const trialSep = ".t"

// Placement is one call a run places: a scenario and, when the run repeats
// every scenario, which trial of it this is.
type Placement struct {
	Case *scenarios.Compiled
	// Trial counts from 1 in a run of several trials per scenario; 0 in a
	// run of one, whose call ids are the scenario ids.
	Trial int
	// ID, when set, is the call id instead of the one derived from the
	// scenario and trial (a replay's or a sweep's calls).
	ID string
}

// CallID is the placement's call id: ID if set, else the scenario id, with
// ".tN" for trial N of a repeated run.
func (p Placement) CallID() string {
	if p.ID != "" {
		return p.ID
	}
	return CallID(p.Case.Scenario.ID, p.Trial)
}

// CallID names trial n of a scenario (n 0: the run's only call of it).
func CallID(scenario string, trial int) string {
	if trial <= 0 {
		return scenario
	}
	return scenario + trialSep + strconv.Itoa(trial)
}

// SplitCallID is CallID's inverse: "corr-02.t3" is trial 3 of corr-02,
// "corr-02" trial 0.
func SplitCallID(id string) (scenario string, trial int) {
	i := strings.LastIndex(id, trialSep)
	if i <= 0 {
		return id, 0
	}
	n, err := strconv.Atoi(id[i+len(trialSep):])
	if err != nil || n <= 0 || strconv.Itoa(n) != id[i+len(trialSep):] {
		return id, 0
	}
	return id[:i], n
}

// Placements repeats every case trials times, trial by trial (every
// scenario's first trial before any second one, so a run cut short still
// covers the suite). trials <= 1 places each case once under its own id.
func Placements(cases []*scenarios.Compiled, trials int) []Placement {
	if trials <= 1 {
		out := make([]Placement, len(cases))
		for i, c := range cases {
			out[i] = Placement{Case: c}
		}
		return out
	}
	out := make([]Placement, 0, len(cases)*trials)
	for t := 1; t <= trials; t++ {
		for _, c := range cases {
			out = append(out, Placement{Case: c, Trial: t})
		}
	}
	return out
}

// CallIDs lists the placements' call ids, in order: a run's manifest.
func CallIDs(ps []Placement) []string {
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.CallID()
	}
	return ids
}

// SelectCalls finds the placements named by call ids (a resume's or a
// re-run's): each id's scenario must be in cases.
func SelectCalls(cases []*scenarios.Compiled, ids []string) ([]Placement, error) {
	byID := make(map[string]*scenarios.Compiled, len(cases))
	for _, c := range cases {
		byID[c.Scenario.ID] = c
	}
	seen := map[string]bool{}
	var out []Placement
	var missing []string
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			continue
		}
		seen[id] = true
		sc, trial := SplitCallID(id)
		c, ok := byID[sc]
		if !ok {
			missing = append(missing, id)
			continue
		}
		out = append(out, Placement{Case: c, Trial: trial})
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("no scenario for call %s in the suite", strings.Join(missing, ", "))
	}
	return out, nil
}

// callOf is a scenario's calendar for its hash: nil at the defaults, so
// hashes of scenarios written before calls had a calendar stay as they were.
func callOf(c *scenarios.Compiled) *[2]string {
	if (c.CallDate == "" || c.CallDate == scenarios.DefaultCallDate) && (c.TimeZone == "" || c.TimeZone == scenarios.DefaultTimeZone) {
		return nil
	}
	return &[2]string{c.CallDate, c.TimeZone}
}

// ScenarioHash is the content hash of what a call of a compiled scenario
// is placed with: script (with its intents), tools, records, faults, seed,
// limits, custom parameters and calendar. Two runs judged the same
// scenario only when its hashes are equal. The file's layout, key order, description and
// category label do not count: they change no call. (A recorded WAV a step
// plays counts by its path, not its bytes.)
func ScenarioHash(c *scenarios.Compiled) string {
	b, err := json.Marshal(struct {
		Script           any
		Tools            any
		Records          any
		Faults           any
		Seed             int64
		Limits           any
		CustomParameters map[string]string
		Call             *[2]string `json:",omitempty"`
	}{c.Script, c.Tools, c.Records, c.Faults, c.Seed, c.Limits, c.CustomParameters, callOf(c)})
	if err != nil {
		// Compiled holds plain data; a failure here is a programming error
		// that must not pass for "unchanged".
		panic(fmt.Sprintf("harness: hashing scenario %s: %v", c.Scenario.ID, err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// PackHash hashes a set of scenario hashes (id → hash), in id order.
func PackHash(scenarioHashes map[string]string) string {
	ids := make([]string, 0, len(scenarioHashes))
	for id := range scenarioHashes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	h := sha256.New()
	for _, id := range ids {
		fmt.Fprintf(h, "%s %s\n", id, scenarioHashes[id])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Hashes returns the scenario hashes of cases and their pack hash.
func Hashes(cases []*scenarios.Compiled) (pack string, byScenario map[string]string) {
	byScenario = make(map[string]string, len(cases))
	for _, c := range cases {
		byScenario[c.Scenario.ID] = ScenarioHash(c)
	}
	return PackHash(byScenario), byScenario
}
