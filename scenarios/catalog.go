package scenarios

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/callproof/callproof/trace"
)

// DecoyOrder is the order a wrong_record fault answers with; it is always
// among the default records so that a write to it shows in a diff.
const DecoyOrder = "5519"

const orderPattern = `^\d{4}$`

// OrderCatalog returns the built-in order domain's tools (see
// docs/ARCHITECTURE.md): get_order, update_order, ship_order and
// get_shipment (reads back what ship_order created). A fresh copy each call.
func OrderCatalog() []trace.ToolSpec {
	order := func(desc string) trace.ArgSpec {
		return trace.ArgSpec{Name: "order_number", Type: "string", Required: true, Pattern: orderPattern, Description: desc}
	}
	return []trace.ToolSpec{
		{
			Name: "get_order", Description: "Look up an order by its 4-digit number.",
			Effect: trace.EffectRead, Table: "orders", KeyArg: "order_number",
			Args: []trace.ArgSpec{order("the order to read")},
		},
		{
			Name: "update_order", Description: "Change an order's delivery date and/or quantity.",
			Effect: trace.EffectUpdate, Table: "orders", KeyArg: "order_number", Consequential: true,
			Args: []trace.ArgSpec{
				order("the order to change"),
				{Name: "delivery_date", Type: "date", Description: "new delivery date, YYYY-MM-DD"},
				{Name: "quantity", Type: "integer", Description: "new quantity"},
			},
		},
		{
			Name: "ship_order", Description: "Ship an order now; creates a shipment.",
			Effect: trace.EffectCreate, Table: "shipments", Consequential: true,
			Args: []trace.ArgSpec{order("the order to ship")},
		},
		{
			Name: "get_shipment", Description: "Look up a shipment by the id ship_order returned.",
			Effect: trace.EffectRead, Table: "shipments", KeyArg: "shipment_id",
			Args: []trace.ArgSpec{{Name: "shipment_id", Type: "string", Required: true, Description: "e.g. shipments-1"}},
		},
	}
}

// itemFor gives each default order a different item so records differ.
func itemFor(i int) string {
	items := [...]string{"desk lamp", "kettle", "garden hose", "bookshelf", "rain jacket", "coffee grinder"}
	return items[i%len(items)]
}

// orderRecords builds starting orders whose fields no compact scenario
// writes (delivery 2026-12-01, quantity 1), so any write shows in a diff.
func orderRecords(keys []string) []trace.Record {
	out := make([]trace.Record, 0, len(keys))
	for i, k := range keys {
		out = append(out, trace.Record{Table: "orders", Key: k, Version: 1, Fields: map[string]string{
			"delivery_date": "2026-12-01",
			"quantity":      "1",
			"item":          itemFor(i),
			"status":        "open",
		}})
	}
	return out
}

// Dates: callers say "December 3" (year 2026 implied); tools take ISO.
const (
	dateYear   = 2026
	isoLayout  = "2006-01-02"
	sayLayout  = "January 2"
	dateFormat = `"2026-12-03" or "December 3"`
)

// parseDate accepts an ISO date in 2026 or a spoken "Month D".
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(isoLayout, s); err == nil {
		if t.Year() != dateYear {
			return time.Time{}, fmt.Errorf("date %q: spoken dates imply %d", s, dateYear)
		}
		return t, nil
	}
	if t, err := time.Parse(sayLayout, s); err == nil {
		return t.AddDate(dateYear-t.Year(), 0, 0), nil
	}
	return time.Time{}, fmt.Errorf("bad date %q (want %s)", s, dateFormat)
}

func isoDate(t time.Time) string    { return t.Format(isoLayout) }
func spokenDate(t time.Time) string { return t.Format(sayLayout) }

// checkArgValue checks one value against an argument's schema.
func checkArgValue(a trace.ArgSpec, v string) error {
	switch a.Type {
	case "integer":
		if !regexp.MustCompile(`^-?\d+$`).MatchString(v) {
			return fmt.Errorf("%q is not an integer", v)
		}
	case "date":
		if _, err := time.Parse(isoLayout, v); err != nil {
			return fmt.Errorf("%q is not a YYYY-MM-DD date", v)
		}
	}
	if a.Pattern != "" {
		if re, err := regexp.Compile(a.Pattern); err == nil && !re.MatchString(v) {
			return fmt.Errorf("%q does not match %s", v, a.Pattern)
		}
	}
	if len(a.Enum) > 0 {
		for _, e := range a.Enum {
			if e == v {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(a.Enum, ", "))
	}
	return nil
}
