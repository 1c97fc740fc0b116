package harness

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/callproof/callproof/scenarios"
)

// LoadSuite resolves a suite: a built-in pack name (core, extended) or a
// scenario file or directory. Every scenario is validated and compiled; the
// error lists every problem found.
func LoadSuite(spec string) (name string, cases []*scenarios.Compiled, err error) {
	var list []*scenarios.Scenario
	isPack, lone := false, false
	for _, p := range scenarios.PackNames() {
		if p == spec {
			isPack = true
		}
	}
	switch {
	case isPack:
		list, err = scenarios.Pack(spec)
		name = spec
	default:
		st, statErr := os.Stat(spec)
		if statErr != nil {
			return "", nil, fmt.Errorf("suite %q is neither a built-in pack (%s) nor a file or directory: %w", spec, strings.Join(scenarios.PackNames(), ", "), statErr)
		}
		name = spec
		if st.IsDir() {
			list, err = scenarios.LoadDir(spec)
		} else {
			var s *scenarios.Scenario
			lone = true
			s, err = scenarios.LoadFile(spec)
			if s != nil {
				list = []*scenarios.Scenario{s}
			}
		}
	}
	if err != nil {
		return "", nil, err
	}
	// A lone file is a case, not a pack: LoadFile has validated it, and the
	// pack rules (a description on every scenario) do not apply, so seed
	// 001's shape runs as it is (docs/SCENARIOS.md).
	if !lone {
		if errs := scenarios.ValidatePack(list); len(errs) > 0 {
			return "", nil, errors.Join(errs...)
		}
	}
	for _, s := range list {
		c, err := scenarios.Compile(s)
		if err != nil {
			return "", nil, err
		}
		cases = append(cases, c)
	}
	return name, cases, nil
}

// Select keeps the cases whose scenario id is in ids (all when ids is
// empty), in suite order. An id that names no scenario is an error.
func Select(cases []*scenarios.Compiled, ids []string) ([]*scenarios.Compiled, error) {
	if len(ids) == 0 {
		return cases, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	var out []*scenarios.Compiled
	for _, c := range cases {
		if want[c.Scenario.ID] {
			out = append(out, c)
			delete(want, c.Scenario.ID)
		}
	}
	if len(want) > 0 {
		var missing []string
		for id := range want {
			missing = append(missing, id)
		}
		return nil, fmt.Errorf("no scenario with id %s in the suite", strings.Join(missing, ", "))
	}
	return out, nil
}
