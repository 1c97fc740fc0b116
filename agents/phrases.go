package agents

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callproof/callproof/callsim/audio"
)

// The agent phrasing of docs/ARCHITECTURE.md. The scorer normalises any
// phrasing, but the reference agents say exactly these.

const greeting = "Hi, how can I help?"

// describe lists the changed fields: "delivery date December 3 and quantity 4".
func describe(v map[string]string) string {
	var parts []string
	if d := v[slotDate]; d != "" {
		parts = append(parts, "delivery date "+spokenDate(d))
	}
	if q := v[slotQuantity]; q != "" {
		parts = append(parts, "quantity "+q)
	}
	return strings.Join(parts, " and ")
}

func sayReadBack(action string, v map[string]string) string {
	if action == toolShip {
		return fmt.Sprintf("Okay, shipping order %s.", v[slotOrder])
	}
	return fmt.Sprintf("Okay, updating order %s: %s.", v[slotOrder], describe(v))
}

func sayDone(action string, v map[string]string) string {
	if action == toolShip {
		return fmt.Sprintf("Done. Order %s has been shipped.", v[slotOrder])
	}
	return fmt.Sprintf("Done. Order %s now has %s.", v[slotOrder], describe(v))
}

func sayNothingChanged(order string) string {
	if order == "" {
		return "Okay, I won't make any change. Nothing was changed."
	}
	return fmt.Sprintf("Okay, I won't make any change. Nothing was changed on order %s.", order)
}

func sayFailed(action, order string) string {
	verb := "update"
	if action == toolShip {
		verb = "ship"
	}
	return fmt.Sprintf("Sorry, I couldn't %s order %s. Nothing was changed.", verb, order)
}

// sayUnconfirmed is for a write accepted but never seen to land: careful
// claims neither success nor "nothing changed".
func sayUnconfirmed(order string) string {
	return fmt.Sprintf("Sorry, I can't confirm yet whether order %s went through.", order)
}

func sayUndoFailed(order string) string {
	return fmt.Sprintf("Sorry, I couldn't undo the change on order %s.", order)
}

const askOrder = "Which order number is that?"

func askChange(order string) string {
	return fmt.Sprintf("What would you like to change on order %s?", order)
}

// wrongValues is the ConfirmsWrongValue flaw: the changed value is off by
// one (a day, a unit, or the order number for a shipment).
func wrongValues(action string, v map[string]string) map[string]string {
	out := copyMap(v)
	switch {
	case action != toolShip && v[slotDate] != "":
		if t, err := time.Parse(time.DateOnly, v[slotDate]); err == nil {
			out[slotDate] = t.AddDate(0, 0, 1).Format(time.DateOnly)
		}
	case action != toolShip && v[slotQuantity] != "":
		if n, err := strconv.Atoi(v[slotQuantity]); err == nil {
			out[slotQuantity] = strconv.Itoa(n + 1)
		}
	default:
		if n, err := strconv.Atoi(v[slotOrder]); err == nil {
			out[slotOrder] = fmt.Sprintf("%04d", (n+1)%10000)
		}
	}
	return out
}

func copyMap[V any](m map[string]V) map[string]V {
	out := make(map[string]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// A reference agent in audio mode synthesizes, before it listens, what it
// may say in any call whatever the orders, so a first call on an empty
// cache does not wait for (or share its CPU with) a synthesizer. Phrases
// that carry a call's order or values are synthesized when first said.
const (
	// PhraseWarmers bounds the phrases synthesized at once at start.
	PhraseWarmers = 2
	// PhraseWarmTimeout bounds the warm-up; past it the agent fails to
	// start, naming the phrase.
	PhraseWarmTimeout = 30 * time.Second
)

// fixedPhrases is everything the agent may say that no call tailors.
func fixedPhrases() []string {
	return []string{greeting, askOrder, sayNothingChanged("")}
}

// warmPhrases synthesizes phrases with voice, at most PhraseWarmers at
// once; the first failure names its phrase.
func warmPhrases(ctx context.Context, voice *audio.Cache, phrases []string) error {
	ctx, cancel := context.WithTimeout(ctx, PhraseWarmTimeout)
	defer cancel()
	errs := make([]error, len(phrases))
	sem := make(chan struct{}, PhraseWarmers)
	var wg sync.WaitGroup
	for i, p := range phrases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := voice.Speech(ctx, p); err != nil {
				errs[i] = fmt.Errorf("phrase %q: %w", p, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
