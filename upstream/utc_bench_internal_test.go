package upstream

import (
	"testing"
	"time"
)

var sinkTime time.Time

// BenchmarkUTCSeconds measures utcSeconds on four timestamps of the one
// form the services write.
func BenchmarkUTCSeconds(b *testing.B) {
	ts := [][]byte{
		[]byte(`"2026-01-31T01:55:03Z"`), []byte(`"2024-02-29T23:59:59Z"`),
		[]byte(`"2025-11-07T18:20:41Z"`), []byte(`"1999-12-31T00:00:00Z"`),
	}
	for b.Loop() {
		for _, t := range ts {
			sinkTime, _ = utcSeconds(t, 0)
		}
	}
}
