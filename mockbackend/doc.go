// Package mockbackend serves a voice agent's tools over HTTP for one or many
// calls at once. Each call gets its own go-memdb store, base URL and bearer
// token; every request is validated against the call's tool catalogue,
// executed with trace.Apply (so the scorer computes intended state the same
// way), written to an append-only ledger in the same transaction as its state
// change, and recorded as tool.* events into the call's trace.Recorder.
// Calls configured alike share, read-only, their compiled catalogue and a
// template of their starting store (a bounded cache on the Server), so an
// open call costs little more than its own writes.
//
// Other transports hand a call their requests through Call.ServeTool,
// which takes the same path as an HTTP request: package mcptools serves a
// call's tools as an MCP server at Call.MCPURL (Options.MCP).
//
// Scenarios steer a call through faults (small units that wrap the rest of
// a request, like toxiproxy's toxics), holds that park a request before its
// commit until the script releases or fails it, and Stripe-style
// idempotency keys.
//
// Every request that reached a call ends in exactly one way: tool.rejected
// (it never reached the tool), tool.responded (an answer was sent, or
// Dropped), or tool.cancelled with no answer (the client went away). A held
// request failed by the script, or one caught by the call closing, records
// tool.cancelled (no commit) followed by tool.responded with the status sent.
// Under late_success the commit (or its cancellation) follows the 202,
// at its delay and not before the agent's first act after the 202
// (LateSuccessActWait).
//
// Only requests that authenticate for a call reach it. Anything else (no
// token, a wrong token, another call's token, a call that is over or never
// was) is answered by the server alone, the same way whichever call the
// path names, and kept in the server's bounded log (Server.Rejected), never
// in a call's history. Within a call, a body must arrive within a deadline
// (DefaultBodyTimeout, scaled) and stay under MaxBodyBytes; a Budget bounds
// the agent's requests per second and per call, and Call.Exceeded tells the
// harness when the agent broke it. Call.Close never waits longer than
// CloseWait.
package mockbackend
