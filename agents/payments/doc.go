// Package payments is a third, independent agent family for calibrating
// callproof's verdicts: a bank's bill-payments line with its own tool
// catalogue (find_payee, find_payment, schedule_payment, update_payment,
// cancel_payment), money amounts, account nicknames, payees, payment
// references read character by character (the NATO alphabet included) and
// relative days ("tomorrow", "on the 8th"). It is written from
// docs/PROTOCOL.md alone and learns about a call only over the wire: it
// imports protocol/native and nothing else of callproof's.
//
// Relative days are resolved against the call's date: the start frame's
// "callDate" (YYYY-MM-DD) when present, else DefaultCallDate.
//
// One engine serves several variants, picked by the last segment of the
// WebSocket URL path (ws://host:port/careful, /terse, ...) or by the
// customParameters entry "variant" of the start frame, which wins; "/" is
// careful. Variants() lists them: two correct ones (careful, terse) and one
// per single flaw (stale, keeper, eager, keyless, quitter, phantom, mixup,
// offbyone).
package payments
