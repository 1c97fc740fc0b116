package perturb

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// ReadCorpus reads the fixed corpus: "dimension<TAB>value<TAB>form" lines,
// '#' comments and blank lines skipped.
func ReadCorpus(r io.Reader) ([]CorpusEntry, error) {
	var out []CorpusEntry
	sc := bufio.NewScanner(r)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("spoken corpus line %d: want dimension, value and form separated by tabs", n)
		}
		d := Dimension(f[0])
		if !slices.Contains(Dimensions(), d) || d == Verb {
			return nil, fmt.Errorf("spoken corpus line %d: unknown dimension %q", n, f[0])
		}
		out = append(out, CorpusEntry{Dimension: d, Value: f[1], Form: f[2]})
	}
	return out, sc.Err()
}
