#!/usr/bin/env bash
# Installs what the WebRTC interop test against Janus needs
# (callsim/webrtc/janus_test.go, docs/INTEROP.md "WebRTC: Janus echo
# test"), from Debian's packages, only where it is missing (idempotent; a
# no-op on a machine that has them, so no apt-get update then):
#   janus     the Janus WebRTC gateway (its HTTP transport and EchoTest
#             plugin are what the test uses)
#   iproute2  `ip netns`: the test runs janus and its caller in a network
#             namespace of their own
# Runs apt-get as root, or through sudo when not root.
set -euo pipefail

missing=()
command -v janus >/dev/null 2>&1 || [ -x /usr/bin/janus ] || missing+=(janus)
command -v ip >/dev/null 2>&1 || [ -x /usr/sbin/ip ] || [ -x /sbin/ip ] || missing+=(iproute2)

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-janus: janus and iproute2 are installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null 2>&1 || { echo "install-janus: need root or sudo to install ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "install-janus: installing ${missing[*]}"
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
