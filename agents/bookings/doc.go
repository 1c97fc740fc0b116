// Package bookings is a second, independent agent family for calibrating
// callproof's verdicts: a restaurant table-bookings desk with its own tool
// catalogue (find_booking, reschedule_booking, change_party_size,
// cancel_booking, book_table, refund_deposit), phrasing and timings. It is
// written from docs/PROTOCOL.md alone and learns about a call only over the
// wire: it imports protocol/native and nothing else of callproof's.
//
// One engine serves several variants. A call picks its variant by the last
// segment of the WebSocket URL path (ws://host:port/steady, /mender, ...),
// or by the customParameters entry "variant" of the start frame, which wins
// when both are given; "/" means steady. Variants() lists them: two correct
// ones (steady, mender) and one per single flaw (stale, sticky, trusting,
// eager, keyless, jumpy, quitter, phantom).
package bookings
