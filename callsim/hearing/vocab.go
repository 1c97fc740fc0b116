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
back be because been before but by can can't cannot check checked checking
confirm confirmed could couldn't did didn't do don't done double-check down
else everything failed find for found from go going gone good got had has
hasn't have haven't hello help hi hold i i'll i'm i've if in is isn't it
it's just know let let's look looking made may might moment more my name
need new no not nothing now number of okay on once one only or please
pending problem processed processing right same shall should sorry still
successfully sure system take taken thank thanks that that's the there
there's this through time to today tomorrow turned under undo unfortunately
unable until up wait was wasn't we we'll we're we've went were whether while
will with won't would yes yet you you're your`)
}

// claimCues are the words besides verb forms that decide what the claim
// reader takes an utterance to claim, by kind. Two decodes whose
// utterances differ in the kinds present may read as different claims.
func claimCues() map[string][]string {
	return map[string][]string{
		"negation": strings.Fields("not no never nothing none cannot can't couldn't won't didn't don't haven't hasn't wasn't isn't unable failed"),
		"done":     strings.Fields("done confirmed processed through gone taken"),
		"restore":  strings.Fields("back undo undid undone revert reverted restore restored reverse reversed rolled"),
		"hedge":    strings.Fields("may might should sure whether"),
		"wait":     strings.Fields("pending processing checking moment"),
	}
}

// effectVerbs are the verbs agents most often confirm an effect with
// (update, create, cancel and delete). The claim reader knows more synonyms, but each
// short word in the free loop is one more place for a misheard sound to
// land ("add", "log", "set" soaked up digits in our trials), so only the
// common ones are in; the catalogue's own verbs come in with its words.
func effectVerbs(effect string) []string {
	switch effect {
	case "update":
		return strings.Fields("update change move reschedule modify switch put make")
	case "create":
		return strings.Fields("create book place make reserve schedule submit send issue order refund ship process")
	case "delete", "cancel":
		return strings.Fields("cancel delete remove")
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
		"file": {"filed", "filing"}, "submit": {"submitted", "submitting"}, "transfer": {"transferred", "transferring"},
		"stop": {"stopped", "stopping"}, "bump": {"bumped", "bumping"}, "rebook": {"rebooked", "rebooking"}, "upgrade": {"upgraded", "upgrading"}, "roll": {"rolled", "rolling"}}
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
