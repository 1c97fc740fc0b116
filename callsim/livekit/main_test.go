package livekit

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	QuietSDK()
	os.Exit(m.Run())
}
