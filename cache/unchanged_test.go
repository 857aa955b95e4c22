package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/alicebob/miniredis/v2"

	"github.com/dealer-edge/dealer-edge/internal/deflate"
)

// sameStorage reports whether a and b are the same bytes in memory (not
// only equal ones).
func sameStorage(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// redisEntry is the one entry miniredis holds (decoded), failing the test
// when there is none.
func redisEntry(t *testing.T, mr *miniredis.Miniredis) *Entry {
	t.Helper()
	for _, k := range mr.Keys() {
		if v, err := mr.Get(k); err == nil && len(v) > wireHeader {
			e, err := decodeEntry([]byte(v), true)
			if err != nil {
				t.Fatalf("decode %s: %v", k, err)
			}
			return e
		}
	}
	t.Fatalf("no entry in redis: %v", mr.Keys())
	return nil
}

// TestRefreshKeepsCompressedBody: a refresh that makes the body the stale
// entry holds keeps that entry's compressed bytes (no compression; the same
// bytes are written to Redis again with the new entry's times), and one
// that makes another body compresses it. With L1 (the stale entry found
// there) and without (found in Redis only, as a fleet's tail is).
func TestRefreshKeepsCompressedBody(t *testing.T) {
	pol := Policy{TTL: 10 * time.Second, StaleWhileRevalidate: time.Minute}
	for _, l1 := range []int64{0, -1} {
		t.Run(fmt.Sprintf("l1=%d", l1), func(t *testing.T) {
			clock := newFakeClock()
			mr, rc := newMiniRedis(t)
			c := newCache(t, Options{Now: clock.Now, Redis: rc, L1MaxBytes: l1})
			v1, v2 := string(listingBody(1, 20)), string(listingBody(2, 20))
			f := newFiller(v1)
			key := "/dealer/REWIND/listing"
			get := func(want Result) *Entry {
				t.Helper()
				e, res, err := c.GetGzip(context.Background(), 7, []byte(key), pol, f.fill)
				waitRefreshes(t, c)
				if err != nil || res != want {
					t.Fatalf("got %v, %v; want %v", res, err, want)
				}
				return e
			}
			redisValue := func() *Entry { t.Helper(); return redisEntry(t, mr) }

			e1 := get(Miss)
			gz1, _, ok := e1.Gzip()
			if !ok {
				t.Fatal("a listing page did not compress")
			}
			stored1 := redisValue()

			clock.Advance(11 * time.Second)
			get(Stale) // the refresh makes v1 again
			e2 := get(Hit)
			if e2 == e1 || !e2.StoredAt.After(e1.StoredAt) {
				t.Fatalf("the refresh did not store a new entry: %v -> %v", e1.StoredAt, e2.StoredAt)
			}
			gz2, _, _ := e2.Gzip()
			if l1 == 0 && !sameStorage(gz1, gz2) {
				t.Error("the refreshed entry compressed the unchanged body again")
			}
			if string(gz2) != string(gz1) {
				t.Error("the refreshed entry's compressed body differs")
			}
			stored2 := redisValue()
			if !stored2.FreshUntil.After(stored1.FreshUntil) {
				t.Errorf("redis keeps the old times: fresh until %v, before %v", stored2.FreshUntil, stored1.FreshUntil)
			}
			if b, _ := stored2.gz.Load(), 0; b == nil || string(b.body) != string(gz1) {
				t.Error("redis does not hold the same compressed bytes")
			}
			if got := string(stored2.Body()); got != v1 {
				t.Errorf("redis entry inflates to %d bytes, want the body", len(got))
			}
			if st := c.Stats(); st.FillsUnchanged != 1 || st.Fills != 2 {
				t.Fatalf("fills %d, unchanged %d; want 2, 1", st.Fills, st.FillsUnchanged)
			}

			f.set(v2, nil)
			clock.Advance(11 * time.Second)
			get(Stale) // the refresh makes v2
			e3 := get(Hit)
			if string(e3.Body()) != v2 {
				t.Fatal("the changed body was not stored")
			}
			if gz3, _, _ := e3.Gzip(); string(gz3) == string(gz1) {
				t.Error("a changed body kept the old compressed bytes")
			}
			if got := string(redisValue().Body()); got != v2 {
				t.Error("redis holds the old body after a change")
			}
			if st := c.Stats(); st.FillsUnchanged != 1 || st.Fills != 3 {
				t.Fatalf("fills %d, unchanged %d; want 3, 1", st.Fills, st.FillsUnchanged)
			}
		})
	}
}

// TestAdoptGzip: the cases in which a new entry takes the gzip variant of
// the entry it replaces, and those in which it must not.
func TestAdoptGzip(t *testing.T) {
	now := time.Now()
	pol := Policy{TTL: time.Minute}
	body := listingBody(3, 10)
	compressed := func(b []byte) *Entry {
		e := newEntry(b, now, pol)
		if _, _, ok := e.Gzip(); !ok {
			t.Fatal("did not compress")
		}
		return e
	}
	fromWire := func(kept bool) *Entry {
		e, err := decodeEntry(encodeEntry(compressed(body)), kept)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	tampered := func() *Entry {
		e := compressed(body)
		gz := append([]byte(nil), e.gz.Load().body...)
		binary.LittleEndian.PutUint32(gz[len(gz)-8:], binary.LittleEndian.Uint32(gz[len(gz)-8:])^1)
		e.gz.Store(&variant{body: gz, etag: e.gz.Load().etag, kept: true})
		return e
	}
	bad := func() *Entry {
		e := fromWire(true)
		e.bad.Store(true)
		return e
	}
	incompressible := func() *Entry {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte(i*7919>>3) ^ byte(i)
		}
		e := newEntry(b, now, pol)
		e.Gzip()
		return e
	}
	other := append(append([]byte(nil), body...), ' ')
	tests := []struct {
		name string
		prev *Entry
		body []byte
		want bool
	}{
		{"no previous entry", nil, body, false},
		{"same body, compressed here", compressed(body), body, true},
		{"same body, from a redis reply", fromWire(true), body, true},
		{"same body, lent storage (bulk tier)", fromWire(false), body, false},
		{"same body, gzip not made yet", newEntry(body, now, pol), body, false},
		{"same body, trailer differs", tampered(), body, false},
		{"same body, payload found corrupt", bad(), body, false},
		{"other body", compressed(body), other, false},
		{"incompressible, same body", incompressible(), incompressible().Body(), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEntry(tc.body, now, pol)
			if got := e.adoptGzip(tc.prev); got != tc.want {
				t.Fatalf("adoptGzip = %v, want %v", got, tc.want)
			}
			if !tc.want {
				if e.gz.Load() != nil {
					t.Fatal("a refused adoption left a variant")
				}
				return
			}
			gz, etag, ok := e.Gzip()
			if pgz, petag, pok := tc.prev.Gzip(); !sameStorage(gz, pgz) && (ok || pok) || etag != petag || ok != pok {
				t.Fatal("the adopted variant is not the previous entry's")
			}
			if ok {
				got, err := gunzip(gz, e.Len())
				if err != nil || string(got) != string(tc.body) {
					t.Fatalf("the adopted variant does not inflate to the body: %v", err)
				}
			}
		})
	}
}

// sourceFiller is a fill that revalidates: its body is made from a source
// numbered src, and it answers ErrUnchanged when the cache's Revalidation
// names that source.
type sourceFiller struct {
	mu      sync.Mutex
	src     uint64
	builds  int
	offered []uint64 // Revalidation.Prev of each call
	lie     bool     // answer ErrUnchanged whatever Prev is
	items   int      // vehicles on the page built; 0: 20
}

func (f *sourceFiller) fill(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rv := RevalidationFrom(ctx)
	if rv == nil {
		return nil, errors.New("no revalidation offered")
	}
	f.offered = append(f.offered, rv.Prev)
	if f.lie || (rv.Prev != 0 && rv.Prev == f.src) {
		return nil, ErrUnchanged
	}
	f.builds++
	rv.Source = f.src
	items := f.items
	if items == 0 {
		items = 20
	}
	return listingBody(f.src, items), nil
}

func (f *sourceFiller) set(src uint64) { f.mu.Lock(); f.src = src; f.mu.Unlock() }

// TestRevalidation: a refresh whose fill finds the sources of the entry it
// replaces (ErrUnchanged) stores that entry's body again with new times,
// in L1 and in Redis, without building; a changed source builds; an entry
// read from Redis carries its source (another instance's too), so its
// refresh revalidates; within stale-if-error the refill revalidates too;
// a fill that answers ErrUnchanged when nothing was offered fails.
func TestRevalidation(t *testing.T) {
	pol := Policy{TTL: 10 * time.Second, StaleWhileRevalidate: 10 * time.Second, StaleIfError: time.Minute}
	const key = "/dealer/REWIND/listing"
	setup := func(t *testing.T, l1 int64) (*Cache, *fakeClock, *miniredis.Miniredis, *sourceFiller) {
		clock := newFakeClock()
		mr, rc := newMiniRedis(t)
		c := newCache(t, Options{Now: clock.Now, Redis: rc, L1MaxBytes: l1})
		return c, clock, mr, &sourceFiller{src: 1}
	}
	get := func(t *testing.T, c *Cache, f *sourceFiller, want Result) *Entry {
		t.Helper()
		e, res, err := c.GetGzip(context.Background(), 7, []byte(key), pol, f.fill)
		waitRefreshes(t, c)
		if err != nil || res != want {
			t.Fatalf("got %v, %v; want %v", res, err, want)
		}
		return e
	}
	t.Run("refresh of an L1 entry", func(t *testing.T) {
		c, clock, mr, f := setup(t, 0)
		e1 := get(t, c, f, Miss)
		gz1, _, _ := e1.Gzip()
		clock.Advance(11 * time.Second)
		get(t, c, f, Stale)
		e2 := get(t, c, f, Hit)
		if f.builds != 1 || len(f.offered) != 2 || f.offered[1] != 1 {
			t.Fatalf("builds %d, offered %v; want 1 build, the source offered to the refresh", f.builds, f.offered)
		}
		if e2 == e1 || !e2.StoredAt.After(e1.StoredAt) || !e2.FreshUntil.After(e1.FreshUntil) {
			t.Fatal("the revalidated entry has the old times")
		}
		if string(e2.Body()) != string(e1.Body()) || e2.ETag != e1.ETag {
			t.Fatal("the revalidated entry's body differs")
		}
		if gz2, _, _ := e2.Gzip(); !sameStorage(gz1, gz2) {
			t.Fatal("the revalidated entry does not share the compressed body")
		}
		r := redisEntry(t, mr)
		if !r.FreshUntil.Equal(e2.FreshUntil) || string(r.Body()) != string(e1.Body()) {
			t.Fatalf("redis holds fresh until %v, want %v", r.FreshUntil, e2.FreshUntil)
		}
		if st := c.Stats(); st.Fills != 2 || st.FillsRevalidated != 1 || st.FillErrors != 0 {
			t.Fatalf("fills %d, revalidated %d, errors %d", st.Fills, st.FillsRevalidated, st.FillErrors)
		}
		// The source changes: the next refresh builds, offered source 1.
		f.set(2)
		clock.Advance(11 * time.Second)
		get(t, c, f, Stale)
		e3 := get(t, c, f, Hit)
		if f.builds != 2 || string(e3.Body()) != string(listingBody(2, 20)) || f.offered[2] != 1 {
			t.Fatalf("builds %d, offered %v", f.builds, f.offered)
		}
		// And the one after revalidates against source 2.
		clock.Advance(11 * time.Second)
		get(t, c, f, Stale)
		if f.builds != 2 || f.offered[3] != 2 || c.Stats().FillsRevalidated != 2 {
			t.Fatalf("builds %d, offered %v", f.builds, f.offered)
		}
	})

	t.Run("within stale-if-error", func(t *testing.T) {
		c, clock, _, f := setup(t, 0)
		e1 := get(t, c, f, Miss)
		clock.Advance(30 * time.Second) // past stale-while-revalidate
		e2 := get(t, c, f, Miss)
		if f.builds != 1 || e2 == e1 || !e2.FreshUntil.After(clock.Now()) {
			t.Fatalf("builds %d; fresh until %v at %v", f.builds, e2.FreshUntil, clock.Now())
		}
	})

	t.Run("expired entry in L1", func(t *testing.T) {
		// L1 alone: with Redis, a first generation read that fails on a
		// loaded machine (the race detector in CI) leaves the entry under an
		// unverified generation, and the background resync that verifies
		// it later drops the dealer's L1 entries, as a purge would; the
		// refill then has nothing to be offered.
		clock := newFakeClock()
		c := newCache(t, Options{Now: clock.Now})
		f := &sourceFiller{src: 1}
		short := Policy{TTL: 10 * time.Second} // no stale windows, as a content view
		if _, res, err := c.Get(context.Background(), 7, []byte(key), short, f.fill); err != nil || res != Miss {
			t.Fatalf("%v %v", res, err)
		}
		clock.Advance(11 * time.Second) // expired: never served, but offered to the refill
		e, res, err := c.Get(context.Background(), 7, []byte(key), short, f.fill)
		if err != nil || res != Miss || f.builds != 1 || len(f.offered) != 2 || f.offered[1] != 1 {
			t.Fatalf("%v %v; builds %d, offered %v", res, err, f.builds, f.offered)
		}
		if !e.FreshUntil.After(clock.Now()) || string(e.Body()) != string(listingBody(1, 20)) {
			t.Fatal("the revalidated entry is not fresh or not the body")
		}
		// A changed source: built, never the expired body.
		f.set(3)
		clock.Advance(11 * time.Second)
		if e, _, err := c.Get(context.Background(), 7, []byte(key), short, f.fill); err != nil || string(e.Body()) != string(listingBody(3, 20)) {
			t.Fatalf("changed source: %v", err)
		}
	})

	t.Run("entry read from redis", func(t *testing.T) {
		c, clock, mr, f := setup(t, -1) // no L1: the stale entry comes from Redis
		get(t, c, f, Miss)
		clock.Advance(11 * time.Second)
		get(t, c, f, Stale)
		if f.builds != 1 || f.offered[1] != 1 || c.Stats().FillsRevalidated != 1 {
			t.Fatalf("builds %d, offered %v", f.builds, f.offered)
		}
		e := get(t, c, f, Hit)
		if r := redisEntry(t, mr); !e.FreshUntil.After(clock.Now()) || r.src != 1 || !r.FreshUntil.Equal(e.FreshUntil) {
			t.Fatalf("redis holds source %d fresh until %v", r.src, r.FreshUntil)
		}
		// What a gzip client is sent is the member without the digest.
		if gz, _, ok := e.Gzip(); !ok || gz[3] != 0 || !bytes.Equal(gunzipStd(t, gz), listingBody(1, 20)) {
			t.Fatal("the gzip variant is not the plain member of the body")
		}
	})

	t.Run("another instance's entry", func(t *testing.T) {
		clock := newFakeClock()
		_, rc := newMiniRedis(t)
		a := newCache(t, Options{Now: clock.Now, Redis: rc})
		b := newCache(t, Options{Now: clock.Now, Redis: rc})
		fa, fb := &sourceFiller{src: 4}, &sourceFiller{src: 4}
		get(t, a, fa, Miss)
		clock.Advance(11 * time.Second)
		get(t, b, fb, Stale) // b's first sight of the key: stale in Redis
		if fb.builds != 0 || len(fb.offered) != 1 || fb.offered[0] != 4 || b.Stats().FillsRevalidated != 1 {
			t.Fatalf("builds %d, offered %v", fb.builds, fb.offered)
		}
		fb.set(5) // changed upstream: the next refresh builds
		clock.Advance(11 * time.Second)
		get(t, b, fb, Stale)
		if e := get(t, b, fb, Hit); fb.builds != 1 || string(e.Body()) != string(listingBody(5, 20)) {
			t.Fatalf("builds %d", fb.builds)
		}
	})

	t.Run("unchanged with nothing offered", func(t *testing.T) {
		c, _, _, f := setup(t, 0)
		f.lie = true
		if _, _, err := c.Get(context.Background(), 7, []byte(key), pol, f.fill); !errors.Is(err, ErrUnchanged) {
			t.Fatalf("got %v, want the fill's error", err)
		}
		if st := c.Stats(); st.FillErrors != 1 || st.FillsRevalidated != 0 {
			t.Fatalf("fill errors %d, revalidated %d", st.FillErrors, st.FillsRevalidated)
		}
	})
}

// TestRenewable: what can be stored again, and what the new entry shares.
func TestRenewable(t *testing.T) {
	now := time.Now()
	pol := Policy{TTL: time.Minute}
	body := listingBody(4, 10)
	withSrc := func(e *Entry) *Entry { e.src = 9; return e }
	wire := func(kept bool) *Entry {
		e, err := decodeEntry(encodeEntry(newEntry(body, now, pol)), kept)
		if err != nil {
			t.Fatal(err)
		}
		return withSrc(e)
	}
	bad := wire(true)
	bad.bad.Store(true)
	tests := []struct {
		name string
		prev *Entry
		want bool
	}{
		{"nil", nil, false},
		{"no source", newEntry(body, now, pol), false},
		{"filled here", withSrc(newEntry(body, now, pol)), true},
		{"gzip from a redis reply", wire(true), true},
		{"gzip in lent storage", wire(false), false},
		{"found corrupt", bad, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := renewable(tc.prev); got != tc.want {
				t.Fatalf("renewable = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			later := now.Add(time.Hour)
			e := tc.prev.renewed(later, pol)
			if !e.StoredAt.Equal(later) || !e.FreshUntil.Equal(later.Add(time.Minute)) || e.src != tc.prev.src {
				t.Fatal("renewed entry's times or source are wrong")
			}
			if string(e.Body()) != string(body) || e.ETag != tc.prev.ETag {
				t.Fatal("renewed entry's body differs")
			}
		})
	}
}

// TestGzipLevel: Options.GzipLevel sets how entries are compressed: the
// default (0) with the shared code (every member starts with its header,
// which the inflater knows), 1-9 with klauspost at that level (level 1
// makes another, larger member than level 6); all inflate to the same
// body; levels outside 0-9 are refused.
func TestGzipLevel(t *testing.T) {
	body := listingBody(5, 20)
	pol := Policy{TTL: time.Minute}
	gz := map[int][]byte{}
	for _, level := range []int{0, 1, 6, 9} {
		c := newCache(t, Options{GzipLevel: level})
		e, _ := mustGet(t, c, 1, "/k", pol, func(context.Context) ([]byte, error) { return body, nil })
		b, _, ok := e.Gzip()
		if !ok {
			t.Fatalf("level %d: not compressed", level)
		}
		if got, err := gunzip(b, len(body)); err != nil || string(got) != string(body) {
			t.Fatalf("level %d: %v", level, err)
		}
		gz[level] = b
	}
	hdr, bits := deflate.Header()
	if !bytes.Equal(gz[0][:bits/8], hdr[:bits/8]) {
		t.Error("level 0 (the default) does not use the shared code")
	}
	if bytes.Equal(gz[6][:bits/8], hdr[:bits/8]) {
		t.Error("level 6 uses the shared code")
	}
	if len(gz[1]) <= len(gz[6]) {
		t.Errorf("level 1 made %d bytes, level 6 %d: the level was not applied", len(gz[1]), len(gz[6]))
	}
	for _, bad := range []int{-1, 10} {
		if _, err := New(Options{GzipLevel: bad}); err == nil {
			t.Errorf("GzipLevel %d accepted", bad)
		}
	}
}
