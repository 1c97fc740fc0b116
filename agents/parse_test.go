package agents

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseCallerPhrasing(t *testing.T) {
	cases := []struct {
		text string
		want heard
	}{
		{"Hi, I'd like to change the delivery date on order 5590 to December 3.",
			heard{action: toolUpdate, slots: map[string]string{slotOrder: "5590", slotDate: "2026-12-03"}}},
		{"Hi, please change the quantity on order 5590 to 2.",
			heard{action: toolUpdate, slots: map[string]string{slotOrder: "5590", slotQuantity: "2"}}},
		{"Hi, please ship order 5590 today.",
			heard{action: toolShip, slots: map[string]string{slotOrder: "5590"}}},
		{"Sorry, I meant order 5599.", heard{slots: map[string]string{slotOrder: "5599"}}},
		{"Sorry, make that December 5.", heard{slots: map[string]string{slotDate: "2026-12-05"}}},
		{"Sorry, make that 4.", heard{slots: map[string]string{slotQuantity: "4"}}},
		{"Sorry, make that 2026-12-07.", heard{slots: map[string]string{slotDate: "2026-12-07"}}},
		{"No, wait, don't do that.", heard{slots: map[string]string{}, negate: true}},
		{"Wait, make that December 7 instead.", heard{slots: map[string]string{slotDate: "2026-12-07"}}},
		{"Wait, stop, don't change anything.", heard{slots: map[string]string{}, negate: true}},
		{"Yes, that's right, go ahead.", heard{slots: map[string]string{}, proceed: true}},
		{"Please do not cancel it.", heard{slots: map[string]string{}, negate: true}},
		{"Make that February 30.", heard{slots: map[string]string{}}}, // not a date, not a quantity
		{"", heard{slots: map[string]string{}}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, parse(c.text), c.text)
	}
}

func TestPhrasing(t *testing.T) {
	v := map[string]string{slotOrder: "5590", slotDate: "2026-12-03"}
	assert.Equal(t, "Okay, updating order 5590: delivery date December 3.", sayReadBack(toolUpdate, v))
	assert.Equal(t, "Done. Order 5590 now has delivery date December 3.", sayDone(toolUpdate, v))
	assert.Equal(t, "Okay, shipping order 5590.", sayReadBack(toolShip, v))
	assert.Equal(t, "Done. Order 5590 has been shipped.", sayDone(toolShip, v))
	assert.Equal(t, "Okay, I won't make any change. Nothing was changed on order 5590.", sayNothingChanged("5590"))
	assert.Equal(t, "Sorry, I couldn't update order 5590. Nothing was changed.", sayFailed(toolUpdate, "5590"))
	assert.Equal(t, "Done. Order 5590 now has quantity 4.", sayDone(toolUpdate, map[string]string{slotOrder: "5590", slotQuantity: "4"}))
	assert.Equal(t, "2026-12-04", wrongValues(toolUpdate, v)[slotDate])
	assert.Equal(t, "5591", wrongValues(toolShip, v)[slotOrder])
}

func TestIdempotencyKeyIsDeterministic(t *testing.T) {
	k := idempotencyKey("call-1", toolUpdate, 3)
	assert.Equal(t, k, idempotencyKey("call-1", toolUpdate, 3))
	assert.NotEqual(t, k, idempotencyKey("call-1", toolUpdate, 4))
	assert.NotEqual(t, k, idempotencyKey("call-2", toolUpdate, 3))
	assert.NotEqual(t, k, idempotencyKey("call-1", toolShip, 3))
	assert.LessOrEqual(t, len(k), 255)
}

func TestNamedAndFlaws(t *testing.T) {
	n, err := Named("naive")
	assert.NoError(t, err)
	assert.Equal(t, []Flaw{AnySoundBargesIn, ConfirmsOnAccept, KeepsBuiltCalls, KeepsSentCalls, TrustsToolResults, UnkeyedRetries}, n.FlawList())
	c, err := Named("careful")
	assert.NoError(t, err)
	assert.Empty(t, c.FlawList())
	_, err = Named("clever")
	assert.Error(t, err)

	assert.Len(t, AllFlaws(), 11)
	for _, f := range AllFlaws() {
		on := c.With(f, true)
		assert.True(t, on.Has(f))
		assert.False(t, c.Has(f), "With must not change the original")
		assert.False(t, on.With(f, false).Has(f))
	}
}
