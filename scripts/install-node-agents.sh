#!/usr/bin/env bash
# Installs the Node dependencies of the third-party agents under agents/
# (today agents/openai-twilio: the OpenAI Agents SDK's Twilio transport,
# docs/INTEROP.md) exactly as package-lock.json pins them, with `npm ci`.
# Idempotent: it does nothing when node_modules was installed from the same
# package.json, package-lock.json and Node version (a stamp file inside
# node_modules records their hash), so tests may call it every run.
# Concurrent runs are serialized with flock when it is available.
#   scripts/install-node-agents.sh
# Exit status: 0 installed or up to date; non-zero when node/npm is missing
# or npm ci fails.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v node >/dev/null || { echo "install-node-agents: node not found" >&2; exit 127; }
command -v npm >/dev/null || { echo "install-node-agents: npm not found" >&2; exit 127; }

for dir in agents/openai-twilio; do
	[ -f "$dir/package-lock.json" ] || { echo "install-node-agents: $dir/package-lock.json missing" >&2; exit 1; }
	(
		cd "$dir"
		if command -v flock >/dev/null; then
			exec 9>".install.lock"
			# Bounded: a stuck install elsewhere must not hang this one forever.
			flock -w 600 9 || { echo "install-node-agents: $dir: lock busy for 10 min" >&2; exit 1; }
		fi
		want=$( { cat package.json package-lock.json; node --version; } | sha256sum | cut -d' ' -f1)
		stamp=node_modules/.callproof-install-stamp
		if [ -d node_modules ] && [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ]; then
			exit 0
		fi
		echo "install-node-agents: npm ci in $dir" >&2
		# npm ci removes node_modules first, so a failed run leaves no stamp.
		timeout 900 npm ci --no-audit --no-fund --loglevel=error >&2
		echo "$want" >"$stamp"
	)
done
