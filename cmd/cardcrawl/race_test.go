//go:build race

package main

// raceEnabled shrinks the multi-process tests: their workers are this
// race-instrumented binary, several times slower.
const raceEnabled = true
