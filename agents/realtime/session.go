package realtime

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// turnQueue bounds the ends of speech waiting for the turn runner.
const turnQueue = 16

// session is one client connection: a reader that answers and records the
// client's events and runs the speech detector, and a turn runner that
// plays the script.
type session struct {
	id     int
	ws     *websocket.Conn
	script Script
	rec    *recorder

	wmu sync.Mutex // one writer at a time (gorilla allows no more)

	mu          sync.Mutex
	cfg         map[string]any // the session as the server holds it
	in, out     audioFormat
	detect      bool // turn detection on: the VAD runs
	interrupt   bool // turn_detection.interrupt_response
	vad         *vad
	speechItem  string // the user item of the speech in progress
	nextID      int
	items       map[string]map[string]any // conversation items by id
	order       []string                  // their ids in conversation order
	audioMs     map[string]int            // assistant items: audio sent, ms
	outputs     map[string]bool           // call_id -> function_call_output seen
	creates     int                       // response.create not yet consumed
	awaitCreate bool                      // the turn runner will consume the next response.create
	active      *response
	changed     chan struct{} // closed and replaced when the above changes

	turns     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

// response is the response being generated; cancel stops it.
type response struct {
	id     string
	reason string // why it was cancelled
	cancel chan struct{}
	once   sync.Once
}

func newSession(id int, ws *websocket.Conn, script Script, rec *recorder) *session {
	s := &session{
		id: id, ws: ws, script: script, rec: rec,
		in: defaultFormat(), out: defaultFormat(), detect: true, interrupt: true,
		items: map[string]map[string]any{}, audioMs: map[string]int{}, outputs: map[string]bool{},
		changed: make(chan struct{}),
		turns:   make(chan struct{}, turnQueue),
		done:    make(chan struct{}),
	}
	s.vad = newVAD(script.VAD, s.in.rate)
	s.cfg = map[string]any{
		"type": "realtime", "object": "realtime.session", "id": fmt.Sprintf("sess_fake_%d", id),
		"model": "fake-realtime", "output_modalities": []any{"audio"}, "instructions": "",
		"tools": []any{}, "tool_choice": "auto", "max_output_tokens": "inf", "tracing": nil,
		"audio": map[string]any{
			"input": map[string]any{
				"format": s.in.wire(), "transcription": nil, "noise_reduction": nil,
				"turn_detection": map[string]any{
					"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300.0,
					"silence_duration_ms": 200.0, "idle_timeout_ms": nil,
					"create_response": true, "interrupt_response": true,
				},
			},
			"output": map[string]any{"format": s.out.wire(), "voice": "alloy", "speed": 1.0},
		},
	}
	return s
}

func (s *session) close() {
	s.closeOnce.Do(func() { _ = s.ws.Close() })
}

// run serves the connection until it ends.
func (s *session) run() {
	defer s.close()
	s.ws.SetReadLimit(maxClientMessage)
	s.mu.Lock()
	cfg := s.cfg
	s.mu.Unlock()
	if s.send("session.created", map[string]any{"session": cfg}) != nil {
		return
	}
	runner := make(chan struct{})
	go func() { defer close(runner); s.runTurns() }()
	for {
		_, msg, err := s.ws.ReadMessage()
		if err != nil {
			break
		}
		s.handle(msg)
	}
	close(s.done)
	s.close() // the runner's writes now fail at once instead of at their deadline
	s.mu.Lock()
	if s.active != nil {
		s.active.stop("connection closed")
	}
	s.signalLocked()
	s.mu.Unlock()
	<-runner // every wait of the runner also watches done
}

func (r *response) stop(reason string) {
	r.once.Do(func() { r.reason = reason; close(r.cancel) })
}

func (s *session) note(typ, text string) {
	s.rec.add(Event{Conn: s.id, Dir: Note, Type: typ, Text: text})
}

// signalLocked wakes waiters on the session state; s.mu is held.
func (s *session) signalLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitUntil waits until cond (called with s.mu held) holds, d passes or the
// connection ends.
func (s *session) waitUntil(d time.Duration, cond func() bool) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		s.mu.Lock()
		ok, ch := cond(), s.changed
		s.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-s.done:
			return false
		}
	}
}

func (s *session) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newIDLocked(prefix)
}

func (s *session) newIDLocked(prefix string) string {
	s.nextID++
	return fmt.Sprintf("%s_%03d", prefix, s.nextID)
}

// send writes one server event and records it. audio is the size of the
// audio it carries: such events are recorded without their body.
func (s *session) send(typ string, fields map[string]any) error {
	return s.sendAudio(typ, fields, -1)
}

func (s *session) sendAudio(typ string, fields map[string]any, audio int) error {
	ev := map[string]any{"type": typ, "event_id": s.newID("event")}
	for k, v := range fields {
		ev[k] = v
	}
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	s.wmu.Lock()
	_ = s.ws.SetWriteDeadline(time.Now().Add(DefaultWriteWait))
	err = s.ws.WriteMessage(websocket.TextMessage, b)
	s.wmu.Unlock()
	e := Event{Conn: s.id, Dir: FromServer, Type: typ, Raw: b}
	if audio >= 0 {
		e.Raw, e.AudioBytes = nil, audio
	}
	s.rec.add(e)
	if err != nil {
		s.close()
	}
	return err
}

func (s *session) sendError(code, msg string, cause string) {
	_ = s.send("error", map[string]any{"error": map[string]any{
		"type": "invalid_request_error", "code": code, "message": msg, "event_id": cause,
	}})
}

// handle answers one client event.
func (s *session) handle(msg []byte) {
	var head struct {
		Type    string `json:"type"`
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(msg, &head); err != nil || head.Type == "" {
		s.note("malformed", string(msg))
		s.sendError("invalid_json", "the event is not a JSON object with a type", "")
		return
	}
	if head.Type == "input_audio_buffer.append" {
		s.appendAudio(msg)
		return
	}
	s.rec.add(Event{Conn: s.id, Dir: FromClient, Type: head.Type, Raw: append(json.RawMessage(nil), msg...)})
	switch head.Type {
	case "session.update":
		s.sessionUpdate(msg, head.EventID)
	case "conversation.item.create":
		s.itemCreate(msg, head.EventID)
	case "conversation.item.truncate":
		s.truncate(msg, head.EventID)
	case "conversation.item.retrieve":
		s.retrieve(msg, head.EventID)
	case "response.create":
		s.responseCreate(head.EventID)
	case "response.cancel":
		s.mu.Lock()
		r := s.active
		s.mu.Unlock()
		if r == nil {
			s.sendError("response_cancel_not_active", "there is no active response to cancel", head.EventID)
			return
		}
		r.stop("client_cancelled")
	case "input_audio_buffer.commit":
		id := s.newID("item")
		_ = s.send("input_audio_buffer.committed", map[string]any{"item_id": id, "previous_item_id": nil})
	case "input_audio_buffer.clear":
		_ = s.send("input_audio_buffer.cleared", nil)
	default:
		s.note("unhandled", head.Type)
		s.sendError("unknown_event", "the fake does not handle "+head.Type, head.EventID)
	}
}

func (s *session) sessionUpdate(msg []byte, cause string) {
	var ev struct {
		Session map[string]any `json:"session"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil || ev.Session == nil {
		s.sendError("invalid_value", "session.update without a session object", cause)
		return
	}
	s.mu.Lock()
	merge(s.cfg, ev.Session)
	audio, _ := s.cfg["audio"].(map[string]any)
	input, _ := audio["input"].(map[string]any)
	output, _ := audio["output"].(map[string]any)
	if f, ok := parseFormat(input["format"]); ok {
		s.in = f
		s.vad.setRate(f.rate)
	}
	if f, ok := parseFormat(output["format"]); ok {
		s.out = f
	}
	if td, ok := input["turn_detection"].(map[string]any); ok {
		// The real server fills in what an update leaves out.
		for _, k := range []string{"create_response", "interrupt_response"} {
			if _, set := td[k]; !set {
				td[k] = true
			}
		}
		s.detect = true
		s.interrupt, _ = td["interrupt_response"].(bool)
	} else if input != nil && input["turn_detection"] == nil {
		s.detect, s.interrupt = false, false
	}
	cfg := deepCopy(s.cfg)
	s.mu.Unlock()
	_ = s.send("session.updated", map[string]any{"session": cfg})
}

func (s *session) appendAudio(msg []byte) {
	var ev struct {
		Audio string `json:"audio"`
	}
	_ = json.Unmarshal(msg, &ev)
	b, err := base64.StdEncoding.DecodeString(ev.Audio)
	s.rec.add(Event{Conn: s.id, Dir: FromClient, Type: "input_audio_buffer.append", AudioBytes: len(b)})
	if err != nil {
		s.sendError("invalid_value", "audio is not base64", "")
		return
	}
	s.mu.Lock()
	if !s.detect {
		s.mu.Unlock()
		return
	}
	evs := s.vad.feed(s.in.decode(b))
	s.mu.Unlock()
	for _, v := range evs {
		if v.start {
			s.speechStarted(v.ms)
		} else {
			s.speechStopped(v.ms)
		}
	}
}

func (s *session) speechStarted(ms int64) {
	s.mu.Lock()
	s.speechItem = s.newIDLocked("item")
	id, r, interrupt := s.speechItem, s.active, s.interrupt
	s.mu.Unlock()
	_ = s.send("input_audio_buffer.speech_started", map[string]any{"item_id": id, "audio_start_ms": ms})
	if r != nil && interrupt {
		r.stop("turn_detected")
	}
}

func (s *session) speechStopped(ms int64) {
	s.mu.Lock()
	id := s.speechItem
	prev := s.lastItemLocked()
	item := map[string]any{
		"id": id, "object": "realtime.item", "type": "message", "role": "user", "status": "completed",
		"content": []any{map[string]any{"type": "input_audio", "transcript": nil}},
	}
	s.addItemLocked(item)
	s.mu.Unlock()
	_ = s.send("input_audio_buffer.speech_stopped", map[string]any{"item_id": id, "audio_end_ms": ms})
	_ = s.send("input_audio_buffer.committed", map[string]any{"item_id": id, "previous_item_id": prev})
	_ = s.send("conversation.item.added", map[string]any{"item": item, "previous_item_id": prev})
	_ = s.send("conversation.item.done", map[string]any{"item": item, "previous_item_id": prev})
	select {
	case s.turns <- struct{}{}:
	default:
		s.note("dropped", "too many ends of speech waiting for the turn runner")
	}
}

func (s *session) lastItemLocked() any {
	if len(s.order) == 0 {
		return nil
	}
	return s.order[len(s.order)-1]
}

// addItemLocked stores a copy of item: the caller goes on to send item,
// and a stored item may be changed later (truncate), so they must not share.
func (s *session) addItemLocked(item map[string]any) {
	id, _ := item["id"].(string)
	if _, ok := s.items[id]; !ok {
		s.order = append(s.order, id)
	}
	s.items[id] = deepCopy(item)
}

func (s *session) itemCreate(msg []byte, cause string) {
	var ev struct {
		Item map[string]any `json:"item"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil || ev.Item == nil {
		s.sendError("invalid_value", "conversation.item.create without an item", cause)
		return
	}
	item := ev.Item
	s.mu.Lock()
	if id, _ := item["id"].(string); id == "" {
		item["id"] = s.newIDLocked("item")
	}
	item["object"] = "realtime.item"
	if _, ok := item["status"]; !ok {
		item["status"] = "completed"
	}
	prev := s.lastItemLocked()
	s.addItemLocked(item)
	if item["type"] == "function_call_output" {
		if c, _ := item["call_id"].(string); c != "" {
			s.outputs[c] = true
		}
	}
	s.signalLocked()
	s.mu.Unlock()
	_ = s.send("conversation.item.added", map[string]any{"item": item, "previous_item_id": prev})
	_ = s.send("conversation.item.done", map[string]any{"item": item, "previous_item_id": prev})
}

func (s *session) truncate(msg []byte, cause string) {
	var ev struct {
		ItemID       string `json:"item_id"`
		ContentIndex int    `json:"content_index"`
		AudioEndMs   int    `json:"audio_end_ms"`
	}
	if err := json.Unmarshal(msg, &ev); err != nil {
		s.sendError("invalid_value", "bad conversation.item.truncate", cause)
		return
	}
	s.mu.Lock()
	sent, ok := s.audioMs[ev.ItemID]
	if ok && ev.AudioEndMs <= sent {
		// The unheard rest is forgotten, transcript included.
		if item := s.items[ev.ItemID]; item != nil {
			cut := deepCopy(item)
			cut["content"] = []any{map[string]any{"type": "output_audio", "transcript": ""}}
			s.items[ev.ItemID] = cut
		}
		s.audioMs[ev.ItemID] = ev.AudioEndMs
	}
	s.mu.Unlock()
	switch {
	case !ok:
		s.note("bad truncate", "no assistant audio item "+ev.ItemID)
		s.sendError("invalid_value", "no assistant audio item "+ev.ItemID, cause)
	case ev.AudioEndMs > sent:
		s.note("bad truncate", fmt.Sprintf("audio_end_ms %d past the %d ms of audio sent", ev.AudioEndMs, sent))
		s.sendError("invalid_value", "audio_end_ms is greater than the audio's length", cause)
	default:
		_ = s.send("conversation.item.truncated", map[string]any{
			"item_id": ev.ItemID, "content_index": ev.ContentIndex, "audio_end_ms": ev.AudioEndMs,
		})
	}
}

func (s *session) retrieve(msg []byte, cause string) {
	var ev struct {
		ItemID string `json:"item_id"`
	}
	_ = json.Unmarshal(msg, &ev)
	s.mu.Lock()
	item := s.items[ev.ItemID]
	if item != nil {
		item = deepCopy(item)
	}
	s.mu.Unlock()
	if item == nil {
		s.sendError("item_not_found", "no item "+ev.ItemID, cause)
		return
	}
	_ = s.send("conversation.item.retrieved", map[string]any{"item": item})
}

func (s *session) responseCreate(cause string) {
	s.mu.Lock()
	switch {
	case s.awaitCreate:
		s.creates++
		s.signalLocked()
		s.mu.Unlock()
		return
	case s.active != nil:
		s.mu.Unlock()
		s.sendError("conversation_already_has_active_response", "a response is in progress", cause)
		return
	}
	s.mu.Unlock()
	// Not scripted: answer with an empty response, so the client's
	// bookkeeping of responses stays sound.
	r := s.begin()
	s.finish(r, nil, "")
}

// runTurns plays a turn at each end of speech.
func (s *session) runTurns() {
	for i := 0; ; i++ {
		select {
		case <-s.done:
			return
		case <-s.turns:
		}
		if i >= len(s.script.Turns) {
			s.note("no turn", fmt.Sprintf("end of speech %d has no scripted turn", i+1))
			continue
		}
		s.playTurn(s.script.Turns[i])
	}
}

func (s *session) playTurn(t Turn) {
	if len(t.Calls) > 0 {
		if !s.makeCalls(t.Calls) {
			return
		}
	}
	r := s.begin()
	if len(t.Reply.Audio) == 0 && t.Reply.Transcript == "" {
		s.finish(r, nil, "")
		return
	}
	s.speak(r, t.Reply)
}

// makeCalls makes the function calls in one response, then waits for their
// outputs and for the response.create that asks for the reply.
func (s *session) makeCalls(calls []FunctionCall) bool {
	r := s.begin()
	var output []any
	ids := make([]string, len(calls))
	for i, c := range calls {
		itemID := s.newID("item")
		ids[i] = c.CallID
		if ids[i] == "" {
			ids[i] = s.newID("call")
		}
		item := map[string]any{
			"id": itemID, "object": "realtime.item", "type": "function_call", "status": "in_progress",
			"name": c.Name, "call_id": ids[i], "arguments": "",
		}
		_ = s.send("response.output_item.added", map[string]any{"response_id": r.id, "output_index": i, "item": item})
		_ = s.send("response.function_call_arguments.delta", map[string]any{
			"response_id": r.id, "item_id": itemID, "output_index": i, "call_id": ids[i], "delta": c.Arguments,
		})
		_ = s.send("response.function_call_arguments.done", map[string]any{
			"response_id": r.id, "item_id": itemID, "output_index": i, "call_id": ids[i], "arguments": c.Arguments,
		})
		done := deepCopy(item)
		done["status"], done["arguments"] = "completed", c.Arguments
		s.mu.Lock()
		s.addItemLocked(done)
		s.mu.Unlock()
		// The Agents SDK runs the tool on this event (status completed).
		_ = s.send("response.output_item.done", map[string]any{"response_id": r.id, "output_index": i, "item": done})
		output = append(output, done)
	}
	// Set before response.done: the SDK sends response.create only after it.
	s.mu.Lock()
	s.awaitCreate = true
	s.mu.Unlock()
	s.finish(r, output, "")
	ok := s.waitUntil(s.script.ToolTimeout, func() bool {
		for _, id := range ids {
			if !s.outputs[id] {
				return false
			}
		}
		return s.creates > 0
	})
	s.mu.Lock()
	s.awaitCreate = false
	if ok {
		s.creates--
	}
	s.mu.Unlock()
	if !ok {
		s.note("script timeout", fmt.Sprintf("no function_call_output for %v and response.create within %v", ids, s.script.ToolTimeout))
	}
	return ok
}

// begin starts a response.
func (s *session) begin() *response {
	s.mu.Lock()
	r := &response{id: s.newIDLocked("resp"), cancel: make(chan struct{})}
	s.active = r
	out := s.out.wire()
	s.mu.Unlock()
	_ = s.send("response.created", map[string]any{"response": map[string]any{
		"id": r.id, "object": "realtime.response", "status": "in_progress", "output": []any{},
		"output_modalities": []any{"audio"}, "audio": map[string]any{"output": map[string]any{"format": out, "voice": "alloy"}},
	}})
	return r
}

// finish ends a response: completed, or cancelled when reason is set.
func (s *session) finish(r *response, output []any, reason string) {
	s.mu.Lock()
	if s.active == r {
		s.active = nil
	}
	s.mu.Unlock()
	if output == nil {
		output = []any{}
	}
	resp := map[string]any{
		"id": r.id, "object": "realtime.response", "status": "completed", "output": output,
		"usage": map[string]any{"input_tokens": 0, "output_tokens": 0, "total_tokens": 0},
	}
	if reason != "" {
		resp["status"] = "cancelled"
		resp["status_details"] = map[string]any{"type": "cancelled", "reason": reason}
	}
	_ = s.send("response.done", map[string]any{"response": resp})
}

// speak streams a reply in r, paced at Script.Speed times real time, until
// it ends or is cancelled.
func (s *session) speak(r *response, reply Reply) {
	s.mu.Lock()
	itemID, prev, out := s.newIDLocked("item"), s.lastItemLocked(), s.out
	item := map[string]any{
		"id": itemID, "object": "realtime.item", "type": "message", "role": "assistant",
		"status": "in_progress", "content": []any{},
	}
	s.addItemLocked(item)
	s.audioMs[itemID] = 0
	s.mu.Unlock()
	at := map[string]any{"response_id": r.id, "item_id": itemID, "output_index": 0, "content_index": 0}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range at {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	_ = s.send("response.output_item.added", map[string]any{"response_id": r.id, "output_index": 0, "item": item})
	_ = s.send("conversation.item.added", map[string]any{"item": item, "previous_item_id": prev})
	_ = s.send("response.content_part.added", with("part", map[string]any{"type": "audio", "transcript": ""}))

	chunk := max(1, int(s.script.Chunk.Milliseconds())*8) // μ-law bytes
	n := (len(reply.Audio) + chunk - 1) / chunk
	words := strings.Fields(reply.Transcript)
	interval := time.Duration(float64(s.script.Chunk) / s.script.Speed)
	start := time.Now()
	said, sentWords := "", 0
	cancelled, reason := false, ""
	// stopped notes a cancellation seen on r.cancel (reason is set by then).
	stopped := func() { cancelled, reason = true, r.reason }
	// sayUpTo sends the transcript words due by chunk k: the words are spread
	// evenly over the audio, each a little ahead of its sound.
	sayUpTo := func(k int) {
		due := len(words)
		if n > 0 {
			due = min(len(words), (k+1)*len(words)/n+1)
		}
		for ; sentWords < due; sentWords++ {
			d := words[sentWords]
			if sentWords > 0 {
				d = " " + d
			}
			said += d
			_ = s.send("response.output_audio_transcript.delta", with("delta", d))
		}
	}
	for k := 0; k < n && !cancelled; k++ {
		select {
		case <-r.cancel:
			stopped()
			continue
		default:
		}
		sayUpTo(k)
		part := reply.Audio[k*chunk : min(len(reply.Audio), (k+1)*chunk)]
		enc := out.encode(part)
		s.mu.Lock()
		s.audioMs[itemID] += len(part) / 8
		s.mu.Unlock()
		if s.sendAudio("response.output_audio.delta", with("delta", base64.StdEncoding.EncodeToString(enc)), len(enc)) != nil {
			cancelled, reason = true, "connection closed"
			break
		}
		// Absolute schedule, so slow writes do not add up.
		wait := time.Until(start.Add(time.Duration(k+1) * interval))
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-r.cancel:
				stopped()
			case <-t.C:
			}
			t.Stop()
		}
	}
	if !cancelled {
		select {
		case <-r.cancel:
			stopped()
		default:
			sayUpTo(n)
		}
	}
	status := "completed"
	if cancelled {
		status = "incomplete"
	} else {
		_ = s.send("response.output_audio.done", with())
		_ = s.send("response.output_audio_transcript.done", with("transcript", said))
		_ = s.send("response.content_part.done", with("part", map[string]any{"type": "audio", "transcript": said}))
	}
	done := map[string]any{
		"id": itemID, "object": "realtime.item", "type": "message", "role": "assistant", "status": status,
		"content": []any{map[string]any{"type": "output_audio", "transcript": said}},
	}
	s.mu.Lock()
	s.addItemLocked(done)
	s.mu.Unlock()
	_ = s.send("response.output_item.done", map[string]any{"response_id": r.id, "output_index": 0, "item": done})
	_ = s.send("conversation.item.done", map[string]any{"item": done, "previous_item_id": prev})
	s.finish(r, []any{done}, reason)
}

// merge sets src's values into dst, merging nested objects.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
			v = deepCopy(sm)
		}
		dst[k] = v
	}
}

func deepCopy(m map[string]any) map[string]any {
	b, _ := json.Marshal(m)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
