//go:build unix

package discover

import (
	"errors"
	"os"
	"syscall"
)

// processAlive reports whether a process with this pid exists on this
// machine (signal 0 checks without delivering anything). EPERM means it
// exists but belongs to someone else.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}
