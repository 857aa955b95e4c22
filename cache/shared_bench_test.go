package cache

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// mixPages are listing pages as the scale mix asks them (every page of
// every page size 1-80 equally likely: a page's size is 1/ps likely),
// built from vehicles 21-100 of internal/inflate's listing100.json.
func mixPages(t testing.TB, n int) [][]byte {
	data, err := os.ReadFile("../internal/inflate/testdata/listing100.json")
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &page); err != nil {
		t.Fatal(err)
	}
	items := page.Items[20:]
	r := rand.New(rand.NewPCG(11, 12))
	var weights []float64
	sum := 0.0
	for ps := 1; ps <= len(items); ps++ {
		sum += 1 / float64(ps)
		weights = append(weights, sum)
	}
	var out [][]byte
	for len(out) < n {
		x := r.Float64() * sum
		ps := 1
		for weights[ps-1] < x {
			ps++
		}
		p := r.IntN((len(items)+ps-1)/ps) + 1
		lo, hi := (p-1)*ps, min(p*ps, len(items))
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"service":"REWIND","page":%d,"page_size":%d,"total":330,"has_next":true,"items":[`, p, ps)
		for i, it := range items[lo:hi] {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(it)
		}
		b.WriteString(`]}`)
		out = append(out, b.Bytes())
	}
	return out
}

// encodeLevel6 is encodeEntry with the entry compressed by klauspost at
// level 6 (the default before the shared code).
func encodeLevel6(e *Entry) []byte {
	e.level = 6
	return encodeEntry(e)
}

// BenchmarkGetL2HitMix is BenchmarkGetL2HitRedis's identity client over
// the mix's pages, stored as klauspost compresses them at level 6 and as
// the cache does by default (internal/deflate's shared code), in one run.
func BenchmarkGetL2HitMix(b *testing.B) {
	pages := mixPages(b, 2048)
	for _, mode := range []struct {
		name   string
		encode func(*Entry) []byte
	}{{"klauspost6", encodeLevel6}, {"shared", encodeEntry}} {
		b.Run(mode.name, func(b *testing.B) {
			srv := redistest.Start(b)
			rc := newClient(b, srv.Addr)
			c := newCache(b, Options{Redis: rc, L1MaxBytes: -1, RedisTimeout: time.Second})
			pol := Policy{TTL: time.Hour}
			fill := func(context.Context) ([]byte, error) { return nil, fmt.Errorf("no fill expected") }
			ctx := context.Background()
			c.currentEpoch(ctx)
			keys := make([][]byte, len(pages))
			stored := 0
			for i := range keys {
				keys[i] = fmt.Appendf(nil, "/dealer/REWIND/listing?page=%d&mix", i)
				d := int64(i % 8)
				gen, _ := c.generation(ctx, d)
				v := mode.encode(newEntry(pages[i], time.Now(), pol))
				stored += len(v)
				if err := rc.Set(ctx, c.entryKey(d, gen, string(keys[i])), v, time.Hour).Err(); err != nil {
					b.Fatal(err)
				}
			}
			b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			cpu0, rcpu0 := selfCPU(), procCPU(srv.PID())
			b.ResetTimer()
			parallelHits(b, c.Get, keys, 8, pol, fill, func(e *Entry) {
				if e.Body() == nil {
					b.Error("no body")
				}
				if l := e.Lent(); l != nil {
					_ = l.Close()
				}
			})
			b.StopTimer()
			n := float64(b.N)
			b.ReportMetric(float64(selfCPU()-cpu0)/n/1e3, "edge-µs/op")
			b.ReportMetric(float64(procCPU(srv.PID())-rcpu0)/n/1e3, "redis-µs/op")
			b.ReportMetric(float64(stored)/float64(len(pages)), "valueB")
		})
	}
}
