//go:build unix && !linux

package main

// maxRSSKiB converts ru_maxrss, which the BSDs and macOS report in bytes.
func maxRSSKiB(v int64) int64 { return v / 1024 }
