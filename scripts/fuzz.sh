#!/usr/bin/env bash
# Runs every native Go fuzz target in the module, one at a time, each for
# FUZZTIME (default 30s). Targets are found by grepping `func FuzzXxx(` in
# *_test.go files, so a new one runs without editing this script.
#   scripts/fuzz.sh                  every target
#   scripts/fuzz.sh ./scenarios/     only the targets under a directory
# A crash leaves its input under the package's testdata/fuzz/<Target>/;
# commit it once fixed so plain `go test` keeps replaying it.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
FUZZTIME="${FUZZTIME:-30s}"
# How long to shrink each new input: Go's default (60s) can eat a short run
# whole on large seeds such as recorded histories.
FUZZMINIMIZETIME="${FUZZMINIMIZETIME:-5s}"
# Workers per target (go test -parallel); unset, Go uses every core.
FUZZPARALLEL="${FUZZPARALLEL:-}"
root="${1:-.}"

# "file name" per target, skipping hidden folders, testdata and vendor.
targets=$(find "$root" \( -name '.?*' -o -name testdata -o -name vendor -o -name node_modules \) -prune \
	-o -type f -name '*_test.go' -print |
	xargs -r grep -HoE '^func Fuzz[A-Za-z0-9_]*\(' | sed -E 's/\($//; s/:func / /' | sort)
if [ -z "$targets" ]; then
	echo "fuzz: no Fuzz targets under $root"
	exit 0
fi

failed=0
while read -r file name; do
	pkg="$(dirname "$file")/"
	case "$pkg" in /* | ./*) ;; *) pkg="./$pkg" ;; esac
	echo "fuzz: $name in $pkg for $FUZZTIME"
	if ! "$GO" test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" -fuzzminimizetime "$FUZZMINIMIZETIME" ${FUZZPARALLEL:+-parallel "$FUZZPARALLEL"} "$pkg" </dev/null; then
		echo "fuzz: $name FAILED (see $pkg/testdata/fuzz/$name/)"
		failed=1
	fi
done <<<"$targets"
exit "$failed"
