//go:build race

package fingerprint

// raceEnabled is true under -race, whose instrumentation changes allocation counts.
const raceEnabled = true
