//go:build !unix

package main

import "time"

type rusage struct {
	user, sys time.Duration
	maxRSSKiB int64
}

// resourceUsage is not measured where getrusage does not exist; the JSON
// line then reports zero CPU.
func resourceUsage() rusage { return rusage{} }
