#!/usr/bin/env bash
# Installs the Python packages the tests use into .venv at the repository's
# root: a `python3 -m venv` of the machine's Python 3 (3.10 or newer), then
# `pip install --require-hashes --only-binary=:all:` of
# python/requirements-test.txt, so every package, dependencies included, is
# the exact wheel whose hash the file pins; then python/requirements-pipecat.txt
# (agents/pipecat's bot) the same way with --no-deps, as that file lists its
# whole closure itself, and python/requirements-livekit.txt (agents/livekit's
# stock agent: the rest of its closure, the Pipecat file holding the
# packages both use) with --no-deps too. Idempotent: nothing is done when .venv was built from
# the same requirements files and Python (a stamp file records their hash).
# Concurrent runs are serialized with flock.
#   scripts/install-python.sh        prints the venv's python on success
set -euo pipefail
cd "$(dirname "$0")/.."

py=${PYTHON:-python3}
command -v "$py" >/dev/null || { echo "install-python: $py not found" >&2; exit 127; }
"$py" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
	{ echo "install-python: $("$py" --version 2>&1) is older than 3.10" >&2; exit 1; }

req=python/requirements-test.txt
pipecat=python/requirements-pipecat.txt
livekit=python/requirements-livekit.txt
venv=.venv
exec 9>".venv.lock"
flock -w 600 9 || { echo "install-python: lock busy for 10 min" >&2; exit 1; }
want=$( { cat "$req" "$pipecat" "$livekit"; "$py" -c 'import sys; print(sys.version)'; } | sha256sum | cut -d' ' -f1)
stamp=$venv/.callproof-install-stamp
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null || true)" = "$want" ]; then
	echo "install-python: $venv is up to date"
	exit 0
fi
echo "install-python: building $venv from $req, $pipecat and $livekit" >&2
rm -rf "$venv"
"$py" -m venv "$venv"
timeout 600 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
	--require-hashes --only-binary=:all: -r "$req"
timeout 600 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
	--require-hashes --only-binary=:all: --no-deps -r "$pipecat"
timeout 600 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
	--require-hashes --only-binary=:all: --no-deps -r "$livekit"
timeout 600 "$venv/bin/python" -m pip download --quiet --disable-pip-version-check --no-input \
	--require-hashes --only-binary=:all: -d "$venv/wheelhouse" -r "$req"
echo "$want" >"$stamp"
"$venv/bin/python" -m pytest --version
