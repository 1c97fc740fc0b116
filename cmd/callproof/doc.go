// Command callproof tests voice agents by what happened on the call: the
// tool calls they made and the state they left behind. It is a thin CLI,
// one file per subcommand, over the harness, scorer and reports packages;
// every stage works on files, so a saved run can be re-scored, reported,
// shown and gated later (docs/CLI.md).
package main
