#!/usr/bin/env bash
# Installs the offline speech tools callsim/audio uses, from Debian's
# packages, only where they are missing (idempotent; a no-op on a machine
# that has them, so no apt-get update then):
#   flite               speech synthesis (the default voice, kal16)
#   espeak-ng           speech synthesis (a second engine)
#   pocketsphinx        recognition (voice-quality measurement, recognizer)
#   pocketsphinx-en-us  its US English acoustic model and dictionary
# Runs apt-get as root, or through sudo when not root.
set -euo pipefail

model=/usr/share/pocketsphinx/model/en-us/en-us
missing=()
command -v flite >/dev/null 2>&1 || missing+=(flite)
command -v espeak-ng >/dev/null 2>&1 || missing+=(espeak-ng)
command -v pocketsphinx_continuous >/dev/null 2>&1 || missing+=(pocketsphinx)
[ -d "$model" ] || missing+=(pocketsphinx-en-us)

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-speech: flite, espeak-ng, pocketsphinx and its en-us model are installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-speech: need root or sudo to install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "install-speech: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
