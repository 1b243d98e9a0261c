//go:build !race

package guise

const raceEnabled = false
