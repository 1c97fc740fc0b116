package randtools

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/callproof/callproof/toolimport"
)

func TestOpenAI(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		a := OpenAI(rand.New(rand.NewPCG(seed, seed)))
		if b := OpenAI(rand.New(rand.NewPCG(seed, seed))); !bytes.Equal(a, b) {
			t.Fatalf("seed %d: two runs differ", seed)
		}
		tools, format, err := toolimport.Parse(a)
		if err != nil || format != toolimport.FormatOpenAI || len(tools) < 3 {
			t.Fatalf("seed %d: %d tools, %s, %v", seed, len(tools), format, err)
		}
	}
}
