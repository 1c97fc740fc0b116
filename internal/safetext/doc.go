// Package safetext makes text from an agent under test safe to print or
// write: every character that a terminal, a CI log viewer or an XML
// reader would act on instead of showing (C0 and C1 controls, DEL,
// bidirectional overrides, zero-width and other format characters,
// invalid UTF-8) is written as a visible escape, as Go's %q writes it.
// Escape is for one field; Writer guards a whole output stream.
package safetext
