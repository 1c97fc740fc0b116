package hearing

import "strings"

// baseVocabulary is what agents say around the entities when they confirm,
// refuse, hedge or stall: the claim reader's cue words (docs/SCORING.md,
// "Claim reader") and the glue between them. Number words are absent on
// purpose: they only enter the grammar inside entity rules, which is how
// "to"/"two"/"too" and "for"/"four" are kept apart (see Normalize).
func baseVocabulary() []string {
	return strings.Fields(`
a about after again ahead all already also am an and any anything are as at
available back be because been before booked booking bookings but by
call can can't cancel cancelled canceled cannot change changed check checked
checking confirm confirmed could couldn't date day deposit desk did didn't do
does doesn't don't done double-check down else every everything failed find
fine for found from get go going gone good got guest guests had has hasn't
have haven't he hello help here hi hold how however i i'll i'm i've if in is
isn't it it's its just know last let let's like look looking made make many
may me might minute moment more moved my name need new no none nor not
nothing now number of off okay on once one only or order orders other our
out over party people person place placed please pending problem processed
processing put re reference refund refunded reschedule rescheduled right
same say says see seems set shall she shipped should sir so sorry still
submitted successfully sure system table take taken than thank thanks that
that's the their them then there there's these they this through time to
today told tomorrow try turned under undo unfortunately unable until up
updated updating us wait want was wasn't way we we'll we're we've well went
were what when whether which while who will with won't would wrong yes yet
you you'd you're your`)
}

// effectVerbs are the claim reader's verb families by tool effect
// (update, create, delete): the agent's confirmation hangs on them.
func effectVerbs(effect string) []string {
	switch effect {
	case "update":
		return strings.Fields("update change move reschedule set modify adjust amend switch edit correct fix put apply save shift push bump upgrade downgrade increase reduce decrease raise lower extend rename reassign transfer make rebook replace")
	case "create":
		return strings.Fields("create book place add make reserve schedule submit send issue open register log file arrange order refund ship charge pay process request start dispatch credit return reimburse")
	case "delete":
		return strings.Fields("cancel delete remove void drop terminate revoke")
	}
	return nil
}

// restoreVerbs are always in: an agent may put a change back whatever the
// catalogue's effects.
func restoreVerbs() []string { return strings.Fields("undo revert restore reverse roll") }

// verbForms returns a verb's base, past and -ing forms ("ship" →
// ship, shipped, shipping).
func verbForms(v string) []string {
	irregular := map[string][]string{"set": {"set", "setting"}, "put": {"put", "putting"},
		"make": {"made", "making"}, "send": {"sent", "sending"}, "pay": {"paid", "paying"},
		"cancel": {"cancelled", "canceled", "cancelling", "canceling"}, "undo": {"undid", "undone", "undoing"},
		"drop": {"dropped", "dropping"}, "ship": {"shipped", "shipping"}, "log": {"logged", "logging"},
		"file": {"filed", "filing"}, "upgrade": {"upgraded", "upgrading"}, "roll": {"rolled", "rolling"}}
	if f, ok := irregular[v]; ok {
		return append([]string{v}, f...)
	}
	n := len(v)
	switch {
	case strings.HasSuffix(v, "e"):
		return []string{v, v + "d", v[:n-1] + "ing"}
	case n > 1 && v[n-1] == 'y' && !strings.ContainsRune("aeiou", rune(v[n-2])):
		return []string{v, v[:n-1] + "ied", v + "ing"}
	}
	return []string{v, v + "ed", v + "ing"}
}

// fixedEntityWords are the words entity rules use; they are in the
// dictionary under these spellings.
func monthNames() []string {
	return strings.Fields("january february march april may june july august september october november december")
}

func weekdayNames() []string {
	return strings.Fields("sunday monday tuesday wednesday thursday friday saturday")
}

// countNouns follow a count ("four people"), as the claim reader reads them.
func countNouns() []string {
	return strings.Fields("people persons person guests guest adults children units unit items item pieces copies nights night seats seat tickets rooms room bags boxes")
}

// numberWords are the words that only appear inside entity rules.
func numberWords() map[string]bool {
	m := map[string]bool{"oh": true, "hundred": true, "thousand": true}
	for n := 0; n < 20; n++ {
		m[unitWord(n)] = true
	}
	for n := 2; n < 10; n++ {
		m[tensWord(n)] = true
	}
	return m
}
