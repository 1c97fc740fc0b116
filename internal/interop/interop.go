package interop

import (
	"os"
	"testing"
)

// EnvRequired, set to 1, makes a missing framework a failure
// (scripts/test.sh full and scripts/interop.sh set it).
const EnvRequired = "CALLPROOF_INTEROP_REQUIRED"

// Required reports whether a missing framework must fail the test: with
// EnvRequired=1, or CI=true.
func Required() bool {
	return os.Getenv(EnvRequired) == "1" || os.Getenv("CI") == "true"
}

// Missing ends t for a framework that is not there: a failure when
// Required, else a skip. msg says what is missing and how to install it.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s (%s=1 or CI=true: a missing framework is a failure)", msg, EnvRequired)
		return
	}
	t.Skip(msg)
}
