//go:build unix

package main

import (
	"os"
	"runtime"
	"syscall"
	"time"
)

// usage reads what wait4 reported for the finished process: the figures
// /usr/bin/time -v prints.
func usage(ps *os.ProcessState, wall time.Duration) Measure {
	m := Measure{WallSeconds: wall.Seconds(), UserSeconds: ps.UserTime().Seconds(), SysSeconds: ps.SystemTime().Seconds()}
	m.CPUSeconds = m.UserSeconds + m.SysSeconds
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		m.MaxRSSKiB = int64(ru.Maxrss)
		if runtime.GOOS == "darwin" {
			m.MaxRSSKiB /= 1024 // bytes there
		}
	}
	return m
}
