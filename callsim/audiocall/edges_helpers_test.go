package audiocall

import (
	"time"

	"github.com/callproof/callproof/callsim/audio"
)

func tone(hz float64, d time.Duration, dbfs float64) audio.PCM { return audio.Tone(hz, d, dbfs) }
