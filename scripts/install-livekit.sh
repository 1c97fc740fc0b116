#!/usr/bin/env bash
# Installs the LiveKit server the LiveKit tests run (callsim/livekit,
# agents/livekit; docs/INTEROP.md "LiveKit Agents") into bin/livekit/ at
# the repository's root, built from source with `go install` of the pinned
# release. v1.13.5 is the newest that `go install` builds: the releases
# after it carry `replace` directives in their go.mod. Idempotent: nothing
# is done when bin/livekit/livekit-server already reports that version.
# Concurrent runs are serialized with flock.
#   scripts/install-livekit.sh        prints the server's path on success
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.13.5
dir=$PWD/bin/livekit
bin=$dir/livekit-server
go=${GO:-go}
mkdir -p "$dir"
exec 9>"$dir/.lock"
flock -w 1800 9 || { echo "install-livekit: lock busy for 30 min" >&2; exit 1; }
if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qx "livekit-server version $version"; then
	echo "$bin"
	exit 0
fi
echo "install-livekit: building livekit-server v$version (go install, a few minutes)" >&2
tmp=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
# GOFLAGS from the caller (-mod=...) would apply to the server's module.
timeout 2400 env GOBIN="$tmp" GOFLAGS=-buildvcs=false "$go" install "github.com/livekit/livekit-server/cmd/server@v$version"
mv "$tmp/server" "$bin"
echo "install-livekit: built in $(( $(date +%s) - start ))s" >&2
echo "$bin"
