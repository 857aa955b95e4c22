//go:build race

package upstream

// raceEnabled is true when the tests run under the race detector. Tests
// that run one goroutine over large inputs (decoder equivalence and
// pathological bodies) gain nothing from it and are skipped then (the
// plain and purego runs still run them); allocation budgets are not
// checked then, since the detector's instrumentation allocates on its own.
const raceEnabled = true
