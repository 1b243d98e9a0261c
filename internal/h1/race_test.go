//go:build race

package h1

// raceEnabled: the race detector changes allocation counts (and drops
// sync.Pool entries at random), so allocation budgets are not checked.
const raceEnabled = true
