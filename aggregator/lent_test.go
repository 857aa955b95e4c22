package aggregator

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
)

// TestLentBodiesUnderConcurrency: with no L1, every identity hit is an L2
// hit served from body storage the cache lends for that one answer and
// fasthttp gives back after writing it (writeEntry, lentKey). Many
// connections asking for pages of different sizes at once each get their
// own page, byte for byte, so storage is never given back, and lent
// again, before its response has left.
func TestLentBodiesUnderConcurrency(t *testing.T) {
	// A Redis budget far above the default's 50 ms: the test is about lent
	// storage, and on a loaded machine (CI runs packages in parallel) a
	// miniredis call can exceed 50 ms, which marks Redis down and turns
	// the hits it expects into misses.
	s := newBenchServerWith(t, true, nil, cache.Options{L1MaxBytes: -1, RedisTimeout: 5 * time.Second})
	if err := s.UpdateSettings(slowLimitSettings()); err != nil {
		t.Fatal(err)
	}
	base := serveLoopback(t, s)
	key := []string{"X-Api-Key", "demo-key-alpha"}
	var paths []string
	for _, ps := range []int{1, 7, 20, 50, 100} {
		for page := 1; page <= 3; page++ {
			paths = append(paths, fmt.Sprintf("/dealer/REWIND/listing?page=%d&page_size=%d", page, ps))
		}
	}
	want := map[string][]byte{}
	for _, p := range paths {
		a := rawDo(t, "GET", base+p, key...)
		if a.status != 200 || a.header.Get("X-Cache") != "MISS" {
			t.Fatalf("%s: %d, X-Cache %q", p, a.status, a.header.Get("X-Cache"))
		}
		want[p] = a.body
	}
	// The mechanism, step by step: the handler leaves the lent storage as
	// an io.Closer user value and the body in it; fasthttp's reset of the
	// request, which follows writing the response, closes it.
	{
		var req fasthttp.Request
		req.SetRequestURI(paths[len(paths)-1])
		req.Header.Set("X-Api-Key", "demo-key-alpha")
		var ctx fasthttp.RequestCtx
		ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
		s.Handler()(&ctx)
		lent, ok := ctx.UserValue(lentKey).(io.Closer)
		if !ok || lent == nil || !bytes.Equal(ctx.Response.Body(), want[paths[len(paths)-1]]) {
			t.Fatalf("an identity L2 hit left no lent storage to give back (%T), or the wrong body", ctx.UserValue(lentKey))
		}
		probe := &closeProbe{}
		ctx.SetUserValue(lentKey, probe) // stands in for it: fasthttp must close what is there
		_ = lent.Close()
		ctx.Request.Reset()
		if !probe.closed {
			t.Fatal("fasthttp's request reset did not close the user value: lent storage would never go back")
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				p := paths[(w*7+i)%len(paths)]
				a := rawDo(t, "GET", base+p, key...)
				if a.status != 200 || a.header.Get("X-Cache") != "HIT" || !bytes.Equal(a.body, want[p]) {
					errs <- fmt.Errorf("%s: %d, X-Cache %q, body equal %v", p, a.status, a.header.Get("X-Cache"), bytes.Equal(a.body, want[p]))
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

type closeProbe struct{ closed bool }

func (p *closeProbe) Close() error { p.closed = true; return nil }
