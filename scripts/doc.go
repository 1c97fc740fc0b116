// Package scripts holds no code: its test checks that what docs say about
// the shell scripts beside it (their defaults) is what the scripts do.
package scripts
