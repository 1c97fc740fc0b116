// Package netns gives a test a network namespace of its own, for real
// parts whose traffic must stay on loopback (127.0.0.0/8) even where
// their ICE stacks skip loopback: the namespace (swept when a killed run
// left it), its lo up, a veth pair kept inside with a 127.x/32 on one
// end, commands run inside, and the test binary re-executed inside as a
// child that reads its parameters from an environment variable and
// writes its result as JSON. Namespaces need root and iproute2's `ip`;
// without them a test skips, or fails where interop.Required.
package netns
