//go:build race

package main

// raceEnabled: the race detector slows every process five to ten times.
const raceEnabled = true
