package scenarios

import (
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	_ "time/tzdata" // call.time_zone is checked the same on every machine

	"github.com/callproof/callproof/trace"
)

// Script defaults and step defaults.
const (
	DefaultStepTimeout = 10 * time.Second
	DefaultCallTimeout = 30 * time.Second
	DefaultQuiet       = 1200 * time.Millisecond
	// WordDuration is how long the caller takes per word when a speech step
	// gives no duration.
	WordDuration    = 200 * time.Millisecond
	defaultNoiseLen = 400 * time.Millisecond
	defaultHoldMax  = 3 * time.Second
)

// The call's calendar when a scenario states none (call: {date, time_zone}).
const (
	DefaultCallDate = "2026-11-30"
	DefaultTimeZone = "UTC"
)

// Compiled is a scenario ready to run: everything call.start records.
type Compiled struct {
	Scenario *Scenario
	Script   trace.Script
	Tools    []trace.ToolSpec
	Records  []trace.Record
	Faults   []trace.Fault
	Seed     int64
	// Limits are the scenario's budgets (limits); a zero field keeps the
	// harness default.
	Limits CallLimits
	// CustomParameters go to the agent in start.customParameters (nil when
	// the scenario sets none).
	CustomParameters map[string]string
	// CallDate (YYYY-MM-DD) and TimeZone (IANA) are the call's calendar:
	// the scenario's call block, else DefaultCallDate and DefaultTimeZone.
	CallDate string
	TimeZone string
}

// CallLimits is a scenario's limits block, checked. Zero means "the
// default" in every field.
type CallLimits struct {
	MaxEventTextBytes        int
	MaxCallTextBytes         int64
	MaxHistoryBytes          int64
	MaxHistoryEvents         int
	MaxToolRequestsPerSecond int
	MaxToolRequestsPerCall   int
	IdleTimeout              time.Duration // real time
	MaxToolConnections       int
	MaxToolHeaderBytes       int
	ToolHeaderTimeout        time.Duration // real time
	MaxIdleToolConnections   int
}

// Compile turns a scenario into a script, catalogue, starting records and
// faults. It fails with Errors (every problem) when Validate would. It
// never reads Expected or Description.
func Compile(s *Scenario) (*Compiled, error) {
	b := &builder{s: s}
	c := b.build()
	if len(b.errs) > 0 {
		return nil, b.errs
	}
	return c, nil
}

// Validate reports every problem of the scenario at once: bad values, bad
// references, and a compact setup that cannot compile. Each error is an
// *Error. Mistakes the loader already reported are not repeated.
func (s *Scenario) Validate() []error {
	b := &builder{s: s}
	b.build()
	return b.errs
}

// SeedOf returns the scenario's seed: the one written, else a stable FNV-1a
// hash of its id, so reruns of a scenario draw the same numbers.
func SeedOf(s *Scenario) int64 {
	if s.Seed != nil {
		return *s.Seed
	}
	h := fnv.New64a()
	h.Write([]byte(s.ID))
	return int64(h.Sum64())
}

// builder compiles and validates in one pass so that Validate and Compile
// can never disagree.
type builder struct {
	s       *Scenario
	tools   []trace.ToolSpec
	compact bool // steps come from setup: step problems point at setup
	errs    Errors
}

func (b *builder) add(path, format string, args ...any) {
	if b.s.src.decodeFailed(path) {
		return
	}
	b.errs = append(b.errs, &Error{File: b.s.File(), Line: b.s.src.line(path), Field: path, Msg: fmt.Sprintf(format, args...)})
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func (b *builder) build() *Compiled {
	s := b.s
	if s.ID == "" {
		b.add("id", "required")
	} else if !idPattern.MatchString(s.ID) {
		b.add("id", "%q: want lower-case letters, digits, '-' and '_'", s.ID)
	}
	if !slices.Contains(Categories(), s.Category) {
		b.add("category", "unknown category %q (want one of %s)", s.Category, joinCats())
	}
	if strings.ContainsAny(s.Description, "\n\r") {
		b.add("description", "want one line")
	}
	b.tools = b.catalog()

	var specs []StepSpec
	var extra []FaultSpec
	if len(s.Steps) > 0 {
		specs = s.Steps
	} else {
		b.compact = true
		specs, extra = b.compactSteps()
	}
	steps := b.steps(specs)

	var faults []trace.Fault
	for i, f := range s.Faults {
		faults = append(faults, b.fault(index("faults", i), f))
	}
	for _, f := range extra {
		faults = append(faults, b.fault("setup", f))
	}

	script := trace.Script{Steps: steps, StepTimeout: DefaultStepTimeout, CallTimeout: DefaultCallTimeout, Quiet: DefaultQuiet}
	if t := s.Timeouts; t != nil {
		b.duration("timeouts.step", t.Step, MaxStepTimeout, "MaxStepTimeout", false)
		b.duration("timeouts.call", t.Call, MaxCallTimeout, "MaxCallTimeout", false)
		b.duration("timeouts.quiet", t.Quiet, MaxQuiet, "MaxQuiet", false)
		if t.Step > 0 {
			script.StepTimeout = t.Step.D()
		}
		if t.Call > 0 {
			script.CallTimeout = t.Call.D()
		}
		if t.Quiet > 0 {
			script.Quiet = t.Quiet.D()
		}
		if script.CallTimeout < script.StepTimeout {
			b.add("timeouts.call", "%v is shorter than the step timeout %v", script.CallTimeout, script.StepTimeout)
		}
	}
	date, zone := b.call()
	return &Compiled{
		CallDate:         date,
		TimeZone:         zone,
		Scenario:         s,
		Script:           script,
		Tools:            b.tools,
		Records:          b.records(steps, faults),
		Faults:           faults,
		Seed:             SeedOf(s),
		Limits:           b.limits(),
		CustomParameters: b.customParameters(),
	}
}

// call checks the call block: a real calendar date and a time zone the
// zone database knows (embedded, so the answer is the same on every
// machine). Left out, each field is its default.
func (b *builder) call() (date, zone string) {
	date, zone = DefaultCallDate, DefaultTimeZone
	c := b.s.Call
	if c == nil {
		return date, zone
	}
	if c.Date != "" || b.s.src.written("call.date") {
		if t, err := time.Parse(isoLayout, c.Date); err != nil || t.Format(isoLayout) != c.Date {
			b.add("call.date", "bad date %q (want YYYY-MM-DD, e.g. %q)", c.Date, DefaultCallDate)
		}
		date = c.Date
	}
	if c.TimeZone != "" || b.s.src.written("call.time_zone") {
		if _, err := time.LoadLocation(c.TimeZone); err != nil || c.TimeZone == "" || c.TimeZone == "Local" {
			b.add("call.time_zone", "unknown time zone %q (want an IANA name, e.g. \"America/New_York\")", c.TimeZone)
		}
		zone = c.TimeZone
	}
	return date, zone
}

// limits checks the limits block: each field written is positive and
// within its bound.
func (b *builder) limits() CallLimits {
	l := b.s.Limits
	if l == nil {
		return CallLimits{}
	}
	b.positive("limits.max_event_text_bytes", int64(l.MaxEventTextBytes), MaxLimitEventTextBytes, "MaxLimitEventTextBytes")
	b.positive("limits.max_call_text_bytes", l.MaxCallTextBytes, MaxLimitCallTextBytes, "MaxLimitCallTextBytes")
	b.positive("limits.max_history_bytes", l.MaxHistoryBytes, MaxLimitHistoryBytes, "MaxLimitHistoryBytes")
	b.positive("limits.max_history_events", int64(l.MaxHistoryEvents), MaxLimitHistoryEvents, "MaxLimitHistoryEvents")
	b.positive("limits.max_tool_requests_per_second", int64(l.MaxToolRequestsPerSecond), MaxLimitToolRequestsPerSecond, "MaxLimitToolRequestsPerSecond")
	b.positive("limits.max_tool_requests_per_call", int64(l.MaxToolRequestsPerCall), MaxLimitToolRequestsPerCall, "MaxLimitToolRequestsPerCall")
	b.duration("limits.idle_timeout", l.IdleTimeout, MaxLimitIdleTimeout, "MaxLimitIdleTimeout", false)
	b.positive("limits.max_tool_connections", int64(l.MaxToolConnections), MaxLimitToolConnections, "MaxLimitToolConnections")
	b.positive("limits.max_tool_header_bytes", int64(l.MaxToolHeaderBytes), MaxLimitToolHeaderBytes, "MaxLimitToolHeaderBytes")
	b.duration("limits.tool_header_timeout", l.ToolHeaderTimeout, MaxLimitToolHeaderTimeout, "MaxLimitToolHeaderTimeout", false)
	b.positive("limits.max_idle_tool_connections", int64(l.MaxIdleToolConnections), MaxLimitToolConnections, "MaxLimitToolConnections")
	return CallLimits{
		MaxEventTextBytes:        max(l.MaxEventTextBytes, 0),
		MaxCallTextBytes:         max(l.MaxCallTextBytes, 0),
		MaxHistoryBytes:          max(l.MaxHistoryBytes, 0),
		MaxHistoryEvents:         max(l.MaxHistoryEvents, 0),
		MaxToolRequestsPerSecond: max(l.MaxToolRequestsPerSecond, 0),
		MaxToolRequestsPerCall:   max(l.MaxToolRequestsPerCall, 0),
		IdleTimeout:              max(l.IdleTimeout.D(), 0),
		MaxToolConnections:       max(l.MaxToolConnections, 0),
		MaxToolHeaderBytes:       max(l.MaxToolHeaderBytes, 0),
		ToolHeaderTimeout:        max(l.ToolHeaderTimeout.D(), 0),
		MaxIdleToolConnections:   max(l.MaxIdleToolConnections, 0),
	}
}

// positive checks a count that, when written, must be in 1..max; left out
// (zero, not written) it is the default.
func (b *builder) positive(path string, n, max int64, limit string) {
	switch {
	case n < 0 || (n == 0 && b.s.src.written(path)):
		b.add(path, "must be more than 0 (leave it out for the default)")
	case n > max:
		b.add(path, "%d is over the limit of %d (%s)", n, max, limit)
	}
}

// customParameters checks custom_parameters: at most MaxCustomParameters
// entries, non-empty keys, values of at most MaxCustomParameterBytes.
func (b *builder) customParameters() map[string]string {
	p := b.s.CustomParameters
	if p == nil {
		return nil
	}
	if len(p) > MaxCustomParameters {
		b.add("custom_parameters", "%d entries, more than %d (MaxCustomParameters)", len(p), MaxCustomParameters)
	}
	for _, k := range trace.SortedKeys(p) {
		if k == "" {
			b.add("custom_parameters", "empty key")
		}
		if len(k) > MaxKeyLen {
			b.add(join("custom_parameters", k), "key of %d bytes, longer than %d (MaxKeyLen)", len(k), MaxKeyLen)
		}
		if v := p[k]; len(v) > MaxCustomParameterBytes {
			b.add(join("custom_parameters", k), "value of %d bytes, longer than %d (MaxCustomParameterBytes)", len(v), MaxCustomParameterBytes)
		}
	}
	return maps.Clone(p)
}

// duration checks a duration field against its bound (named by limit, the
// constant's name). Zero means "the default" for most fields: where zero
// makes no sense (zeroOK false) writing it out is an error, so the file
// says what it means. Compact steps are built in code and point at setup;
// their zeros are defaults, never written.
func (b *builder) duration(path string, d Duration, max time.Duration, limit string, zeroOK bool) {
	switch {
	case d < 0:
		b.add(path, "must not be negative")
	case d.D() > max:
		b.add(path, "%v is over the limit of %v (%s)", d, max, limit)
	case d == 0 && !zeroOK && b.s.src.written(path) && !(b.compact && (path == "setup" || strings.HasPrefix(path, "setup."))):
		b.add(path, "must be more than 0 (leave it out for the default)")
	}
}

// count checks a count field against 0..max.
func (b *builder) count(path string, n, max int, limit string) {
	switch {
	case n < 0:
		b.add(path, "must not be negative")
	case n > max:
		b.add(path, "%d is over the limit of %d (%s)", n, max, limit)
	}
}

func joinCats() string {
	var names []string
	for _, c := range Categories() {
		names = append(names, string(c))
	}
	return strings.Join(names, ", ")
}

// catalog returns the scenario's tools (checked) or the order catalogue.
func (b *builder) catalog() []trace.ToolSpec {
	if b.s.Tools == nil {
		return OrderCatalog()
	}
	if len(b.s.Tools) == 0 {
		b.add("tools", "empty catalogue (leave tools out for the order catalogue)")
	}
	seen := map[string]bool{}
	var out []trace.ToolSpec
	for i, t := range b.s.Tools {
		p := index("tools", i)
		if t.Name == "" {
			b.add(join(p, "name"), "required")
		} else if seen[t.Name] {
			b.add(join(p, "name"), "duplicate tool %q", t.Name)
		}
		seen[t.Name] = true
		eff := trace.Effect(t.Effect)
		if !slices.Contains(trace.Effects(), eff) {
			b.add(join(p, "effect"), "unknown effect %q (want read, update, create, cancel or delete)", t.Effect)
		}
		if t.Table == "" {
			b.add(join(p, "table"), "required")
		}
		spec := trace.ToolSpec{Name: t.Name, Description: t.Description, Effect: eff, Table: t.Table, KeyArg: t.KeyArg, Consequential: t.Consequential,
			StatusField: t.StatusField, StatusValue: t.StatusValue}
		args := map[string]bool{}
		for j, a := range t.Args {
			ap := index(join(p, "args"), j)
			if a.Name == "" {
				b.add(join(ap, "name"), "required")
			} else if args[a.Name] {
				b.add(join(ap, "name"), "duplicate argument %q", a.Name)
			}
			args[a.Name] = true
			if !slices.Contains(trace.ArgTypes(), a.Type) {
				b.add(join(ap, "type"), "unknown type %q (want string, integer, date, time or number)", a.Type)
			}
			if a.Pattern != "" {
				if _, err := regexp.Compile(a.Pattern); err != nil {
					b.add(join(ap, "pattern"), "bad pattern: %v", err)
				}
			}
			spec.Args = append(spec.Args, trace.ArgSpec{Name: a.Name, Type: a.Type, Required: a.Required,
				Enum: slices.Clone(a.Enum), Pattern: a.Pattern, Description: a.Description})
		}
		if eff.Keyed() && slices.Contains(trace.Effects(), eff) && t.KeyArg == "" {
			b.add(join(p, "key_arg"), "required for effect %s", t.Effect)
		} else if t.KeyArg != "" && !args[t.KeyArg] {
			b.add(join(p, "key_arg"), "%q is not an argument of %s", t.KeyArg, t.Name)
		}
		b.cancelStatus(p, t, args)
		out = append(out, spec)
	}
	return out
}

// cancelStatus checks status_field and status_value: both required for a
// cancel, neither allowed on another effect, and the status field is not
// also an argument (the cancel fixes its value).
func (b *builder) cancelStatus(p string, t Tool, args map[string]bool) {
	if trace.Effect(t.Effect) != trace.EffectCancel {
		if t.StatusField != "" {
			b.add(join(p, "status_field"), "only for effect cancel")
		}
		if t.StatusValue != "" {
			b.add(join(p, "status_value"), "only for effect cancel")
		}
		return
	}
	switch {
	case t.StatusField == "":
		b.add(join(p, "status_field"), "required for effect cancel (the field the cancel writes, e.g. status)")
	case args[t.StatusField]:
		b.add(join(p, "status_field"), "%q is also an argument of %s: a cancel writes status_value there itself", t.StatusField, t.Name)
	case t.StatusField == t.KeyArg:
		b.add(join(p, "status_field"), "%q is the key argument", t.StatusField)
	}
	if t.StatusValue == "" {
		b.add(join(p, "status_value"), "required for effect cancel (the value it writes, e.g. cancelled)")
	}
}

func (b *builder) tool(name string) (trace.ToolSpec, bool) { return trace.Catalog(b.tools, name) }

func (b *builder) toolNames() string {
	var n []string
	for _, t := range b.tools {
		n = append(n, t.Name)
	}
	return strings.Join(n, ", ")
}

// defaultAction is the first consequential tool of the catalogue.
func (b *builder) defaultAction() string {
	for _, t := range b.tools {
		if t.Consequential {
			return t.Name
		}
	}
	return ""
}

func (b *builder) match(path string, m *Match) *trace.ToolMatch {
	if m == nil {
		return nil
	}
	if m.Tool != "" {
		t, ok := b.tool(m.Tool)
		if !ok {
			b.add(join(path, "tool"), "tool %q is not in the catalogue (%s)", m.Tool, b.toolNames())
		} else {
			for _, k := range trace.SortedKeys(m.Args) {
				if !hasArg(t, k) {
					b.add(join(join(path, "args"), k), "%q is not an argument of %s", k, t.Name)
				}
			}
		}
	}
	b.count(join(path, "skip"), m.Skip, MaxHoldSkip, "MaxHoldSkip")
	return &trace.ToolMatch{Tool: m.Tool, Args: maps.Clone(m.Args), Skip: m.Skip}
}

func hasArg(t trace.ToolSpec, name string) bool {
	for _, a := range t.Args {
		if a.Name == name {
			return true
		}
	}
	return false
}

func faultKinds() []trace.FaultKind {
	return []trace.FaultKind{trace.FaultLatency, trace.FaultTimeout, trace.FaultStatus, trace.FaultStatusAfter,
		trace.FaultEmpty, trace.FaultWrongRecord, trace.FaultLateSuccess, trace.FaultDuplicate, trace.FaultDropResp}
}

func (b *builder) fault(path string, f FaultSpec) trace.Fault {
	kind := trace.FaultKind(f.Kind)
	if !slices.Contains(faultKinds(), kind) {
		var names []string
		for _, k := range faultKinds() {
			names = append(names, string(k))
		}
		b.add(join(path, "kind"), "unknown fault %q (want one of %s)", f.Kind, strings.Join(names, ", "))
	}
	if !(f.Probability >= 0 && f.Probability <= 1) { // NaN too
		b.add(join(path, "probability"), "%v is outside 0..1", f.Probability)
	}
	b.count(join(path, "times"), f.Times, MaxFaultTimes, "MaxFaultTimes")
	b.duration(join(path, "delay"), f.Delay, MaxFaultDelay, "MaxFaultDelay", true)
	switch kind {
	case trace.FaultStatus, trace.FaultStatusAfter:
		if f.Status < 400 || f.Status > 599 {
			b.add(join(path, "status"), "want an HTTP error status 400..599 for fault %s, got %d", kind, f.Status)
		}
	case trace.FaultWrongRecord:
		if f.Record == "" {
			b.add(join(path, "record"), "required for fault wrong_record")
		}
	case trace.FaultLatency, trace.FaultLateSuccess:
		if f.Delay <= 0 {
			b.add(join(path, "delay"), "required for fault %s", kind)
		}
	}
	if f.Match != nil && f.Match.Skip != 0 {
		b.add(join(join(path, "match"), "skip"), "only a hold's match can skip requests (a fault counts with times)")
	}
	return trace.Fault{Kind: kind, Match: b.match(join(path, "match"), f.Match), Probability: f.Probability,
		Times: f.Times, Delay: f.Delay.D(), Status: f.Status, Record: f.Record}
}

// records returns the starting records: those written, or for the order
// catalogue, one order per order number the caller mentions or a fault
// returns, plus the decoy.
func (b *builder) records(steps []trace.Step, faults []trace.Fault) []trace.Record {
	if b.s.Records != nil {
		var out []trace.Record
		seen := map[[2]string]bool{}
		for i, r := range b.s.Records {
			p := index("records", i)
			if r.Table == "" {
				b.add(join(p, "table"), "required")
			}
			if r.Key == "" {
				b.add(join(p, "key"), "required")
			}
			if seen[[2]string{r.Table, r.Key}] {
				b.add(join(p, "key"), "duplicate record %s/%s", r.Table, r.Key)
			}
			seen[[2]string{r.Table, r.Key}] = true
			b.count(join(p, "version"), r.Version, MaxRecordVersion, "MaxRecordVersion")
			v := r.Version
			if v == 0 {
				v = 1
			}
			f := maps.Clone(r.Fields)
			if f == nil {
				f = map[string]string{}
			}
			out = append(out, trace.Record{Table: r.Table, Key: r.Key, Version: v, Fields: f})
		}
		return out
	}
	if b.s.Tools != nil {
		return nil // a custom catalogue: nothing to guess
	}
	var keys []string
	addKey := func(k string) {
		if k != "" && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, st := range steps {
		if st.Intent != nil {
			addKey(st.Intent.Slots["order_number"])
		}
	}
	for _, f := range faults {
		addKey(f.Record)
	}
	addKey(DecoyOrder)
	return orderRecords(keys)
}
