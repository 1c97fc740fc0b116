// Package subproc runs the third-party agents the tests start as child
// programs (agents/openai-twilio under node, agents/pipecat under
// Python): it starts one, waits for the line on its stdout that says
// where it listens, keeps its stderr, and stops it with SIGTERM, killing
// it if it does not exit in time.
package subproc
