#!/usr/bin/env bash
# Installs the headless browser the HTML report's browser test drives
# (reports/htmlreport, through chromedp), from Debian's packages, only where
# it is missing (idempotent; a no-op on a machine that has one, so no
# apt-get update then):
#   chromium           the browser (any of chromium, chromium-browser,
#                      google-chrome on PATH will do)
#   fonts-dejavu-core  a font, so the report's screenshot has text in it
# Runs apt-get as root, or through sudo when not root.
set -euo pipefail

missing=()
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
	missing+=(chromium)
fi
[ -d /usr/share/fonts/truetype/dejavu ] || missing+=(fonts-dejavu-core)

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-browser: a chromium and the DejaVu fonts are installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-browser: need root or sudo to install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "install-browser: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
