package cache

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func gunzipStd(t *testing.T, b []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestEntryGzip(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	noise := make([]byte, 4096)
	_, _ = rand.Read(noise)
	cases := []struct {
		name string
		body []byte
		ok   bool
	}{
		{"json listing", []byte(`{"items":[` + strings.Repeat(`{"id_auto":"3f2504e0","make":"Fiat","model":"Panda","price":12900},`, 100) + `{}]}`), true},
		{"random bytes", noise, false},
		{"tiny", []byte(`{}`), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEntry(tc.body, now, Policy{TTL: time.Minute})
			gz, tag, ok := e.Gzip()
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v (%d -> %d bytes)", ok, tc.ok, len(tc.body), len(gz))
			}
			if !ok {
				if gz != nil || tag != "" {
					t.Fatalf("refused variant returned %d bytes, tag %q", len(gz), tag)
				}
				return
			}
			if got := gunzipStd(t, gz); !bytes.Equal(got, tc.body) {
				t.Fatal("gzip variant does not decode to the body")
			}
			if tag != "W/"+e.ETag {
				t.Fatalf("tag %q for ETag %q", tag, e.ETag)
			}
			gz2, _, _ := e.Gzip()
			if &gz2[0] != &gz[0] {
				t.Fatal("the variant was made twice")
			}
		})
	}
}

// TestL1CountsGzipVariants: a variant made while its entry is in L1 counts
// in L1's bytes until the entry leaves; one made before the entry enters
// counts from then; one made after it left never counts.
func TestL1CountsGzipVariants(t *testing.T) {
	body := []byte(strings.Repeat(`{"make":"Fiat","model":"Panda"},`, 200))
	now := time.Now()
	c := newL1(1 << 20)
	var gen atomic.Uint64
	e1 := newEntry(body, now, Policy{TTL: time.Minute})
	if !c.put(1, "/a", 0, 0, &gen, e1) {
		t.Fatal("put refused")
	}
	base := c.bytes.Load()
	gz, tag, _ := e1.Gzip()
	if got, want := c.bytes.Load()-base, int64(len(gz)+len(tag))+variantOverhead; got != want {
		t.Fatalf("variant counted %d bytes, want %d", got, want)
	}
	e2 := newEntry(body, now, Policy{TTL: time.Minute})
	e2.Gzip() // before it enters
	c.put(1, "/b", 0, 0, &gen, e2)
	if c.put(1, "/c", 0, 0, &gen, e2) {
		t.Fatal("one entry held by two nodes")
	}
	c.dropDealer(1)
	if c.bytes.Load() != 0 || c.entries.Load() != 0 {
		t.Fatalf("after the drop: %d bytes, %d entries", c.bytes.Load(), c.entries.Load())
	}
	e3 := newEntry(body, now, Policy{TTL: time.Minute})
	c.put(1, "/d", 0, 0, &gen, e3)
	c.dropDealer(1)
	if _, _, ok := e3.Gzip(); !ok || c.bytes.Load() != 0 {
		t.Fatalf("a variant made after the entry left: ok %v, %d bytes counted", ok, c.bytes.Load())
	}
	if c.put(1, "/d", 0, 0, &gen, e3) {
		t.Fatal("a retired entry was stored again")
	}
}

// TestL1GzipAccountingRace: variants made while entries come and go leave
// L1's byte count exact (run with -race too).
func TestL1GzipAccountingRace(t *testing.T) {
	body := []byte(strings.Repeat(`{"make":"Fiat","model":"Panda"},`, 100))
	c := newL1(64 << 10) // small: eviction runs all the time
	var gen atomic.Uint64
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				e := newEntry(body, time.Now(), Policy{TTL: time.Minute})
				key := fmt.Sprintf("/k%d", i%40)
				var inner sync.WaitGroup
				inner.Add(1)
				go func() { defer inner.Done(); e.Gzip() }()
				c.put(int64(w), key, 0, 0, &gen, e)
				if n := c.lookupString(int64(w), key); n != nil {
					n.entry.Gzip()
				}
				inner.Wait()
			}
		}()
	}
	wg.Wait()
	for d := int64(0); d < 4; d++ {
		c.dropDealer(d)
	}
	if c.bytes.Load() != 0 || c.entries.Load() != 0 {
		t.Fatalf("after dropping everything: %d bytes, %d entries", c.bytes.Load(), c.entries.Load())
	}
}
