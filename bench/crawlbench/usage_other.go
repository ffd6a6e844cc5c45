//go:build !unix

package main

import (
	"os"
	"time"
)

// usage has only CPU times where wait4 does not exist.
func usage(ps *os.ProcessState, wall time.Duration) Measure {
	m := Measure{WallSeconds: wall.Seconds(), UserSeconds: ps.UserTime().Seconds(), SysSeconds: ps.SystemTime().Seconds()}
	m.CPUSeconds = m.UserSeconds + m.SysSeconds
	return m
}
