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

// Behind ends t for calls the machine could not keep in real time after
// every placing a test gives them (harness_error, the caller fell behind:
// no verdict to check). On a developer's machine that is a skip; under
// CI=true a failure, since a CI run whose interop calls never kept time
// tested nothing, and a skip would let it pass as if it had. msg says
// what was placed and how it fell behind.
func Behind(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: a call that was never kept in real time tested nothing, which fails the test)", msg)
		return
	}
	t.Skip(msg)
}
