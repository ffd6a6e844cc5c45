//go:build !unix

package main

import "testing"

// rerunUnprivileged: only unix systems have a root that ignores file modes.
func rerunUnprivileged(t *testing.T) bool { return false }
