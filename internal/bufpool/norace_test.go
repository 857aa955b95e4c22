//go:build !race

package bufpool

// raceEnabled is true when the tests run under the race detector, whose
// sync.Pool drops a share of what is put back on purpose: allocation
// budgets are not checked then.
const raceEnabled = false
