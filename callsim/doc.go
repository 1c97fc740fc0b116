// Package callsim is callproof's scripted caller. It dials an agent through
// a dialect Transport, plays a compiled trace.Script (speech, noise, DTMF,
// backend holds and faults) on triggers observed on the call's shared
// recorder, records everything the agent sends, and bounds misbehaving
// agents so a suite always goes on.
package callsim
