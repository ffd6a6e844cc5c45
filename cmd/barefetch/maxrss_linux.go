package main

// maxRSSKiB converts ru_maxrss, which Linux reports in KiB.
func maxRSSKiB(v int64) int64 { return v }
