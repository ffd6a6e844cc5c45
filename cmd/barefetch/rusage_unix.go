//go:build unix

package main

import (
	"syscall"
	"time"
)

type rusage struct {
	user, sys time.Duration
	maxRSSKiB int64
}

// resourceUsage is the process's CPU so far and its peak resident set, as
// /usr/bin/time -v reports them.
func resourceUsage() rusage {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return rusage{}
	}
	return rusage{
		user:      time.Duration(ru.Utime.Nano()),
		sys:       time.Duration(ru.Stime.Nano()),
		maxRSSKiB: maxRSSKiB(int64(ru.Maxrss)), // int32 on some platforms
	}
}
