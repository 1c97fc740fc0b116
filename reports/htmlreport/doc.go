// Package htmlreport writes a run as one self-contained HTML file: the
// suite table (six axes, integrity, root-cause buckets, outcomes), every
// call's verdicts with filters by bucket, failing axis and outcome, and per
// call a timeline on one clock in lanes — caller, agent, each tool request,
// each backend record's versions, the harness — above the event table, the
// findings with links to the events they cite, and the final-state diff.
//
// The page needs no network: its CSS and JS are embedded in the binary
// (embed.FS) and inlined into the file, so it opens from file:// and can be
// mailed or attached to a CI run. Everything from the run — agent speech
// included — is untrusted text and goes through html/template.
package htmlreport
