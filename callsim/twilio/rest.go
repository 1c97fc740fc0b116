package twilio

import (
	"encoding/json"
	"net/http"
	"regexp"
	"sync"
	"time"
)

// ReasonRESTHangUp is the hang-up's reason when the agent ends the call
// through the REST stub (REST): Twilio's call update with
// Status=completed, as Pipecat's TwilioFrameSerializer sends it.
const ReasonRESTHangUp = "agent completed the call (Twilio REST API)"

// callPath is the Call resource's path in Twilio's REST API.
var callPath = regexp.MustCompile(`^/2010-04-01/Accounts/([^/]+)/Calls/([^/]+)\.json$`)

// REST stands in for the one part of Twilio's REST API a bot uses to end
// its call: POST /2010-04-01/Accounts/{AccountSid}/Calls/{CallSid}.json
// with the form Status=completed, HTTP Basic auth whose user is the
// AccountSid (or an API key, SK…). The calls it knows are the live calls
// of the Transports that share it, by their CallSid; the account and
// password are not checked against anything (the stub holds no
// credentials), only present. Answers as Twilio does: 200 with the call
// resource, 404 with code 20404 for a call it does not know (ended, or
// never placed), 401 without credentials, 400 for another update.
type REST struct {
	mu    sync.Mutex
	calls map[string]*Conn
}

// NewREST returns a stub with no calls.
func NewREST() *REST { return &REST{calls: map[string]*Conn{}} }

func (r *REST) add(sid string, c *Conn) {
	r.mu.Lock()
	r.calls[sid] = c
	r.mu.Unlock()
}

func (r *REST) remove(sid string, c *Conn) {
	r.mu.Lock()
	if r.calls[sid] == c {
		delete(r.calls, sid)
	}
	r.mu.Unlock()
}

// restError is Twilio's error body.
type restError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ServeHTTP answers the call update.
func (r *REST) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	m := callPath.FindStringSubmatch(req.URL.Path)
	if m == nil {
		writeJSON(w, http.StatusNotFound, restError{Code: 20404, Message: "The requested resource " + req.URL.Path + " was not found", Status: 404})
		return
	}
	if req.Method != http.MethodPost {
		writeJSON(w, http.StatusMethodNotAllowed, restError{Code: 20004, Message: "Method not allowed", Status: 405})
		return
	}
	if user, pass, ok := req.BasicAuth(); !ok || user == "" || pass == "" {
		writeJSON(w, http.StatusUnauthorized, restError{Code: 20003, Message: "Authenticate", Status: 401})
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, 64<<10)
	if err := req.ParseForm(); err != nil || req.PostForm.Get("Status") != "completed" {
		writeJSON(w, http.StatusBadRequest, restError{Code: 21220, Message: "the stub only ends calls: Status=completed", Status: 400})
		return
	}
	account, sid := m[1], m[2]
	r.mu.Lock()
	c := r.calls[sid]
	r.mu.Unlock()
	if c == nil {
		writeJSON(w, http.StatusNotFound, restError{Code: 20404, Message: "The requested resource " + req.URL.Path + " was not found", Status: 404})
		return
	}
	c.completed()
	writeJSON(w, http.StatusOK, map[string]string{"sid": sid, "account_sid": account, "status": "completed",
		"date_updated": time.Now().UTC().Format(time.RFC1123Z)})
}

// completed ends the call as Twilio does when the call is completed: the
// agent's hang-up, then the stream's stop and its close.
func (c *Conn) completed() {
	c.HangUp(ReasonRESTHangUp)
	c.wmu.Lock()
	_ = c.writeLocked(stopMsg{Event: EventStop, SequenceNumber: c.nextSeq(), StreamSid: c.sids.stream,
		Stop: stopBody{AccountSid: c.sids.account, CallSid: c.sids.call}})
	c.wmu.Unlock()
	_ = c.Close()
}
