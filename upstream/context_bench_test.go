package upstream

import (
	"context"
	"testing"
	"time"
)

// BenchmarkFillContext is what a fill's context costs a listing miss that
// bypasses the cache: WithTimeoutTrace under a parent never cancelled, the
// call's checks (getWith's Err, roundTrip's Deadline and callDone), cancel.
func BenchmarkFillContext(b *testing.B) {
	parent := context.WithoutCancel(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := WithTimeoutTrace(parent, 5*time.Second, "req", "")
		if ctx.Err() != nil {
			b.Fatal("ended")
		}
		if _, ok := ctx.Deadline(); !ok {
			b.Fatal("no deadline")
		}
		if _, watch := callDone(ctx); watch {
			b.Fatal("watched")
		}
		cancel()
	}
}
