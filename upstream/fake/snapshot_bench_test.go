package fake

import (
	"testing"

	"github.com/valyala/fasthttp"
)

// BenchmarkSnapshotPage serves one 10,000-key page of a one-million-key
// snapshot, as the key index load asks for it.
func BenchmarkSnapshotPage(b *testing.B) {
	s := NewServer(Options{ExtraKeys: 1_000_000})
	var ctx fasthttp.RequestCtx
	b.ResetTimer()
	for range b.N {
		ctx.Request.SetRequestURI("/dealers/v1/key-index?limit=10000&after=8000000000000000000000000000000000000000000000000000000000000000")
		ctx.Response.Reset()
		s.keys.snapshot(&ctx)
	}
}
