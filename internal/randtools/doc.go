// Package randtools makes tool definitions for made-up domains from a
// seed, for tests that must hold for any catalogue: `callproof init` then
// `init --catalogue` on them writes valid packs (package packgen), and the
// generic reference agents pass or fail those packs as they should.
package randtools
