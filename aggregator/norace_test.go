//go:build !race

package aggregator

// raceEnabled is true when the tests run under the race detector, whose
// instrumentation allocates on its own: allocation budgets are not checked then.
const raceEnabled = false
