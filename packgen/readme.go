package packgen

import (
	"bytes"
	"fmt"
	"strings"
)

// readme lists the pack's scenarios by tool and category, each with what
// it tests.
func readme(o Options, targets []*target, files []File) []byte {
	var b bytes.Buffer
	src := o.Source
	if src == "" {
		src = "a catalogue"
	}
	fmt.Fprintf(&b, "# Generated scenarios\n\n")
	fmt.Fprintf(&b, "Written by `callproof init --catalogue` from %s (call date %s, forms %s), %d scenario(s) for %d tool(s).\n",
		src, o.CallDate, o.Forms, len(files), len(targets))
	b.WriteString("Each file is one call in seed 001's shape: records synthesized from the\n" +
		"catalogue's argument types, patterns and enums, a caller script timed at a\n" +
		"stage, at most one backend fault, and the six integrity axes a correct agent\n" +
		"holds (`expected`). Run them with `callproof run --scenarios DIR`; check them\n" +
		"with `callproof validate DIR`. See docs/SCENARIOS.md, \"Generated packs\".\n")
	if o.Confirm {
		b.WriteString("\nThe caller answers a read-back question (--confirm): \"Yes, please go ahead.\"\n" +
			"after the agent's first reply, for an agent that asks before it acts.\n")
	}
	for _, t := range targets {
		fmt.Fprintf(&b, "\n## %s (%s on %s)\n", t.tool.Name, t.tool.Effect, t.tool.Table)
		for _, c := range Categories() {
			var rows []string
			for _, f := range files {
				if f.tool != t.tool.Name || f.cat != c {
					continue
				}
				rows = append(rows, fmt.Sprintf("| `%s` | %s |", f.Name, f.Tests))
			}
			if len(rows) == 0 {
				continue
			}
			fmt.Fprintf(&b, "\n### %s\n\n| file | tests |\n|---|---|\n%s\n", c, strings.Join(rows, "\n"))
		}
	}
	return b.Bytes()
}
