package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/cespare/xxhash/v2"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// listingBody is a vehicle listing page shaped like the inventory
// service's (records with ids, prices, mileage and a few enumerated
// fields), pseudo-random from seed so it compresses as a real page does
// rather than as repeated text.
func listingBody(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	makes := []string{"Fiat", "Volkswagen", "Renault", "Peugeot", "Toyota", "Ford", "BMW", "Audi"}
	models := []string{"Panda", "Golf", "Clio", "208", "Yaris", "Fiesta", "Serie 1", "A3"}
	fuels := []string{"benzina", "diesel", "ibrido", "elettrico", "gpl"}
	colors := []string{"bianco", "nero", "grigio metallizzato", "rosso", "blu"}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"total":%d,"page":1,"page_size":%d,"items":[`, 400+r.IntN(400), n)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		m := r.IntN(len(makes))
		fmt.Fprintf(&b, `{"id_auto":"%08x-%04x-%04x","make":%q,"model":%q,"year":%d,"price":%d,"mileage_km":%d,"fuel":%q,"color":%q,"doors":%d,"power_kw":%d,"location":{"city":"Milano","zip":"201%02d"},"images":["https://img.example.com/%d/1.jpg","https://img.example.com/%d/2.jpg"],"updated_at":"2026-11-%02dT%02d:%02d:00Z"}`,
			r.Uint32(), r.IntN(1<<16), r.IntN(1<<16), makes[m], models[m], 2010+r.IntN(16), 5000+r.IntN(40000), r.IntN(200000),
			fuels[r.IntN(len(fuels))], colors[r.IntN(len(colors))], 3+2*r.IntN(2), 50+r.IntN(150), r.IntN(100), r.Uint32(), r.Uint32(), 1+r.IntN(28), r.IntN(24), r.IntN(60))
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// encodeEntryV1 is the value written before compressed values (wire
// version 1), kept to test that such values are still read and to measure
// what compression saves.
func encodeEntryV1(e *Entry) []byte {
	b := make([]byte, wireHeader1+len(e.Body()))
	b[0] = wireVersion1
	putTimes(b[1:], e)
	copy(b[wireHeader1:], e.Body())
	return b
}

func TestWireFormat(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	pol := Policy{TTL: time.Minute, StaleWhileRevalidate: time.Minute, StaleIfError: time.Hour}
	listing := listingBody(1, 20)
	small := []byte(`{"ok":true}`)
	fresh := func(body []byte) *Entry { return newEntry(body, now, pol) }

	t.Run("round trips", func(t *testing.T) {
		for _, tc := range []struct {
			name       string
			body       []byte
			encode     func(*Entry) []byte
			compressed bool
		}{
			{"listing, compressed", listing, encodeEntry, true},
			{"small body, plain", small, encodeEntry, false},
			{"version 1 value", listing, encodeEntryV1, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e := fresh(tc.body)
				v := tc.encode(e)
				if got := v[0] == wireVersion && v[1]&wireGzip != 0; got != tc.compressed {
					t.Fatalf("compressed %v, want %v", got, tc.compressed)
				}
				d, err := decodeEntry(v, true)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(d.Body(), tc.body) || d.ETag != e.ETag || !d.StoredAt.Equal(e.StoredAt) ||
					!d.FreshUntil.Equal(e.FreshUntil) || !d.StaleUntil.Equal(e.StaleUntil) || !d.ErrorUntil.Equal(e.ErrorUntil) {
					t.Fatalf("decoded %+v, want %+v", d, e)
				}
				gz, tag, ok := d.Gzip()
				if tc.compressed {
					// The compressed payload is the entry's gzip variant:
					// a gzip client is served it without compressing.
					if !ok || !bytes.Equal(gz, v[wireHeader:]) || tag != "W/"+e.ETag {
						t.Fatalf("gzip variant not taken from the value: ok %v tag %q", ok, tag)
					}
				}
				if ok && !bytes.Equal(gunzipStd(t, gz), tc.body) {
					t.Fatal("gzip variant does not decode to the body")
				}
			})
		}
	})

	t.Run("compressed value is smaller", func(t *testing.T) {
		v1, v2 := len(encodeEntryV1(fresh(listing))), len(encodeEntry(fresh(listing)))
		if v2*100 > v1*40 {
			t.Fatalf("compressed value %d bytes, plain %d", v2, v1)
		}
		t.Logf("listing of 20: value %d -> %d bytes (%.0f%%)", v1, v2, 100*float64(v2)/float64(v1))
	})

	t.Run("malformed values", func(t *testing.T) {
		good := encodeEntry(fresh(listing))
		mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
		setLen := func(n uint32) []byte {
			return mut(func(b []byte) []byte { binary.BigEndian.PutUint32(b[2+4*8+8:], n); return b })
		}
		plain := encodeEntry(fresh(small))
		// lazy: a corrupt compressed payload with a well-formed frame is found
		// when the body is first inflated (an identity client), not when the
		// value is read: the entry must then be unusable for the plain body.
		for _, tc := range []struct {
			name string
			v    []byte
			lazy bool
		}{
			{"empty", nil, false},
			{"short", []byte{2, 1, 3}, false},
			{"unknown version", mut(func(b []byte) []byte { b[0] = 9; return b }), false},
			{"unknown flag", mut(func(b []byte) []byte { b[1] |= 4; return b }), false},
			{"truncated gzip", good[:len(good)-10], false},
			{"flipped payload byte", mut(func(b []byte) []byte { b[wireHeader+len(b[wireHeader:])/2] ^= 0x55; return b }), true},
			{"length too short", setLen(uint32(len(listing) - 1)), false},
			{"length too long", setLen(uint32(len(listing) + 1)), false},
			{"length beyond the bound", setLen(maxWireBody + 1), false},
			{"hash mismatch", mut(func(b []byte) []byte { b[2+4*8] ^= 1; return b }), true},
			{"hash mismatch, plain", func() []byte { b := bytes.Clone(plain); b[2+4*8] ^= 1; return b }(), false},
			{"plain body length mismatch", func() []byte { b := bytes.Clone(plain); return b[:len(b)-1] }(), false},
			{"trailing garbage after gzip", append(bytes.Clone(good), 0x1f, 0x8b), false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				e, err := decodeEntry(tc.v, true)
				switch {
				case err != nil:
				case !tc.lazy:
					t.Fatalf("accepted %d bytes", len(tc.v))
				case e.Body() != nil || usable(e, true) || !usable(e, false):
					t.Fatalf("corrupt payload inflated to %d bytes (usable plain %v)", len(e.Body()), usable(e, true))
				}
			})
		}
	})
}

// TestWireSourceDigest: an entry's source digest travels with its
// compressed Redis value and comes back with the same gzip variant the
// writer held (the member without the digest's field, so clients never see
// it); the value stays one that a reader without the field (the release
// before it) accepts and decodes to the same body; a plain payload, or a
// member whose extra field is not the digest's, carries none.
func TestWireSourceDigest(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	pol := Policy{TTL: time.Minute}
	listing := listingBody(3, 20)
	e := newEntry(listing, now, pol)
	e.src = 0x0123_4567_89ab_cdef
	gz, _, _ := e.Gzip()
	v := encodeEntry(e)
	if len(v) != wireHeader+srcMember+len(gz) {
		t.Fatalf("value %d bytes, want %d", len(v), wireHeader+srcMember+len(gz))
	}

	t.Run("round trip", func(t *testing.T) {
		d, err := decodeEntry(bytes.Clone(v), true)
		if err != nil {
			t.Fatal(err)
		}
		got, _, ok := d.Gzip()
		if d.src != e.src || !ok || !bytes.Equal(got, gz) || got[3] != 0 {
			t.Fatalf("src %x (want %x), variant equal %v, FLG %d", d.src, e.src, bytes.Equal(got, gz), got[3])
		}
		if !bytes.Equal(d.Body(), listing) {
			t.Fatal("body differs")
		}
		// Written again (a revalidated entry read from Redis), the value
		// is byte for byte the same.
		if again := encodeEntry(d); !bytes.Equal(again, v) {
			t.Fatal("the value read and written again differs")
		}
	})

	t.Run("a reader without the field", func(t *testing.T) {
		// What version 2's readers check: the flags, the gzip magic and
		// the trailer's length; and the member, field and all, decodes
		// to the body with Go's gzip and with the cache's own inflate.
		payload := v[wireHeader:]
		if v[0] != wireVersion || v[1] != wireGzip || payload[0] != 0x1f || payload[1] != 0x8b || payload[2] != 8 ||
			binary.LittleEndian.Uint32(payload[len(payload)-4:]) != binary.BigEndian.Uint32(v[2+4*8+8:]) {
			t.Fatal("not a version 2 value")
		}
		if !bytes.Equal(gunzipStd(t, payload), listing) {
			t.Fatal("Go's gzip does not decode the member to the body")
		}
		if got, err := gunzip(payload, len(listing)); err != nil || !bytes.Equal(got, listing) {
			t.Fatalf("inflate: %v", err)
		}
	})

	t.Run("no digest", func(t *testing.T) {
		plain := newEntry([]byte(`{"ok":true}`), now, pol)
		plain.src = 5
		foreign := bytes.Clone(v)
		foreign[wireHeader+12] = 'X' // another subfield ID
		noSrc := newEntry(listing, now, pol)
		for _, tc := range []struct {
			name string
			v    []byte
			gz   int // length of the gzip variant read; 0 for none
		}{
			{"plain payload", encodeEntry(plain), 0},
			{"another extra field", foreign, len(v) - wireHeader},
			{"entry without a source", encodeEntry(noSrc), len(gz)},
		} {
			t.Run(tc.name, func(t *testing.T) {
				d, err := decodeEntry(tc.v, true)
				if err != nil {
					t.Fatal(err)
				}
				got, _, _ := d.Gzip()
				if d.src != 0 || (tc.gz != 0 && len(got) != tc.gz) {
					t.Fatalf("src %x, variant %d bytes (want %d)", d.src, len(got), tc.gz)
				}
				if tc.gz != 0 && !bytes.Equal(d.Body(), listing) {
					t.Fatal("body differs")
				}
			})
		}
	})
}

// FuzzDecodeEntry: decoding never panics, and what it accepts has a body
// that matches its hash and ETag.
func FuzzDecodeEntry(f *testing.F) {
	now := time.Unix(1_700_000_000, 0)
	for _, body := range [][]byte{listingBody(2, 5), []byte("x")} {
		e := newEntry(body, now, Policy{TTL: time.Minute})
		f.Add(encodeEntry(e))
		f.Add(encodeEntryV1(e))
		e.src = 42
		f.Add(encodeEntry(e))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		e, err := decodeEntry(v, true)
		if err != nil {
			return
		}
		if e.ETag != etagOf(e.hash) {
			t.Fatalf("etag %s for hash %x", e.ETag, e.hash)
		}
		body := e.Body()
		if body == nil {
			// A corrupt compressed payload, found when it is inflated: the
			// entry is unusable for a plain client, and says so every time.
			if e.gz.Load() == nil || usable(e, true) || e.Body() != nil {
				t.Fatal("Body is nil but the entry is usable")
			}
			return
		}
		if xxhash.Sum64(body) != e.hash || len(body) != e.Len() {
			t.Fatal("body does not match its hash or length")
		}
		if gz, _, ok := e.Gzip(); ok && !bytes.Equal(gunzipStd(t, gz), body) {
			t.Fatal("gzip variant does not decode to the body")
		}
	})
}

// TestRedisMemoryPerEntry stores the same listing entries in a real
// redis-server as plain values (wire version 1) and as compressed values,
// and compares MEMORY USAGE of the keys: the compressed entry must take at
// most 40% of the plain one.
func TestRedisMemoryPerEntry(t *testing.T) {
	srv := redistest.Start(t)
	rc := srv.Client()
	ctx := context.Background()
	now := time.Now()
	const n = 100
	c := newCache(t, Options{L1MaxBytes: -1})
	usage := func(version string, encode func(*Entry) []byte) (perEntry float64) {
		var total int64
		for i := 0; i < n; i++ {
			e := newEntry(listingBody(uint64(i), 20), now, Policy{TTL: time.Hour})
			key := c.entryKey(int64(100+i%10), 1_700_000_000_000, "/dealer/REWIND/listing?page="+strconv.Itoa(i)+"&page_size=20&"+version)
			if err := rc.Set(ctx, key, encode(e), time.Hour).Err(); err != nil {
				t.Fatal(err)
			}
			m, err := rc.MemoryUsage(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			total += m
		}
		return float64(total) / n
	}
	plain := usage("v1", encodeEntryV1)
	compressed := usage("v2", encodeEntry)
	t.Logf("MEMORY USAGE per listing entry (20 vehicles): plain %.0f bytes, compressed %.0f bytes (%.0f%%)", plain, compressed, 100*compressed/plain)
	if compressed > 0.4*plain {
		t.Fatalf("compressed entry %.0f bytes, plain %.0f: more than 40%%", compressed, plain)
	}
	if info, err := rc.Info(ctx, "memory").Result(); err != nil || !strings.Contains(info, "used_memory:") {
		t.Fatalf("INFO memory: %v", err)
	}
}

// TestPurgeCompressedEntries: two instances on a real redis-server share
// compressed entries (one fills, the other is served from Redis, its gzip
// variant being the stored payload), and a purge of one dealer makes its
// compressed entries unreachable everywhere while another dealer's stay.
func TestPurgeCompressedEntries(t *testing.T) {
	srv := redistest.Start(t)
	a := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	b := newCache(t, Options{Redis: newClient(t, srv.Addr)})
	waitFor(t, "subscriptions", func() bool { return a.Stats().PubSubUp && b.Stats().PubSubUp })
	ctx := context.Background()
	pol := Policy{TTL: time.Hour}
	const key = "/dealer/REWIND/listing?page=1&page_size=20"
	bodies := map[int64][]byte{1: listingBody(11, 20), 2: listingBody(12, 20)}
	for d, body := range bodies {
		if _, res := mustGet(t, a, d, key, pol, func(context.Context) ([]byte, error) { return body, nil }); res != Miss {
			t.Fatalf("a dealer %d: %v", d, res)
		}
		gen, _ := a.generation(ctx, d)
		raw, err := srv.Client().Get(ctx, a.entryKey(d, gen, key)).Bytes()
		if err != nil || raw[0] != wireVersion || raw[1]&wireGzip == 0 || len(raw) > len(body)/3 {
			t.Fatalf("dealer %d: value in redis not compressed (%d bytes for a %d-byte body): %v", d, len(raw), len(body), err)
		}
		e, res := mustGet(t, b, d, key, pol, newFiller("wrong").fill)
		if res != Hit || !bytes.Equal(e.Body(), body) {
			t.Fatalf("b dealer %d: %v, body equal %v", d, res, bytes.Equal(e.Body(), body))
		}
		if gz, _, ok := e.Gzip(); !ok || !bytes.Equal(gz, raw[wireHeader:]) {
			t.Fatalf("b dealer %d: gzip variant is not the stored payload", d)
		}
	}
	if err := a.PurgeDealer(ctx, 1); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b to drop dealer 1", func() bool { n, _ := b.l1.lookup(1, []byte(key)); return n == nil })
	newBody := listingBody(13, 20)
	if e, res := mustGet(t, b, 1, key, pol, func(context.Context) ([]byte, error) { return newBody, nil }); res != Miss || !bytes.Equal(e.Body(), newBody) {
		t.Fatalf("b dealer 1 after purge: %v", res)
	}
	if e, res := mustGet(t, a, 1, key, pol, newFiller("wrong").fill); res != Hit || !bytes.Equal(e.Body(), newBody) {
		t.Fatalf("a dealer 1 after purge: %v, new body %v", res, bytes.Equal(e.Body(), newBody))
	}
	if e, res := mustGet(t, b, 2, key, pol, newFiller("wrong").fill); res != Hit || !bytes.Equal(e.Body(), bodies[2]) {
		t.Fatalf("b dealer 2 after purging dealer 1: %v", res)
	}
}

// TestLazyPlainBody: an entry read from Redis in compressed form is served
// to a gzip caller (GetGzip) without being decompressed, and L1 counts only
// its compressed bytes; a plain caller (Get) then inflates it once. A
// compressed value whose payload is corrupt is never served plain: Get
// fills again and overwrites it.
func TestLazyPlainBody(t *testing.T) {
	mr, rc := newMiniRedis(t)
	writer := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	reader := newCache(t, Options{Redis: rc})
	pol := Policy{TTL: time.Hour}
	ctx := context.Background()
	body := listingBody(7, 20)
	key := []byte("/dealer/REWIND/listing")
	if _, res, err := writer.Get(ctx, 1, key, pol, func(context.Context) ([]byte, error) { return body, nil }); err != nil || res != Miss {
		t.Fatalf("fill: %v %v", res, err)
	}
	noFill := func(context.Context) ([]byte, error) { return nil, errors.New("no fill expected") }

	e, res, err := reader.GetGzip(ctx, 1, key, pol, noFill)
	if err != nil || res != Hit {
		t.Fatalf("GetGzip: %v %v", res, err)
	}
	if e.plain.Load() != nil {
		t.Fatal("a gzip caller's L2 hit decompressed the body")
	}
	gz, _, ok := e.Gzip()
	if !ok || !bytes.Equal(gunzipStd(t, gz), body) || e.Len() != len(body) {
		t.Fatal("gzip variant does not hold the body")
	}
	if st := reader.Stats(); st.L1Bytes >= int64(len(body)) {
		t.Fatalf("L1 counts %d bytes for a %d-byte compressed entry of a %d-byte body", st.L1Bytes, len(gz), len(body))
	}
	before := reader.Stats().L1Bytes
	e2, ok := reader.Fresh(1, key, pol)
	if !ok || e2 != e || !bytes.Equal(e2.Body(), body) {
		t.Fatal("plain caller did not get the body from the same L1 entry")
	}
	if got, want := reader.Stats().L1Bytes, before+int64(len(body))+variantOverhead; got != want {
		t.Fatalf("L1 bytes %d after inflating, want %d", got, want)
	}

	// Corrupt the stored payload (a flipped byte inside the deflate data,
	// the frame intact): a plain caller of a third instance must not get
	// it; it fills again and the fill replaces the value in Redis.
	corruptPayload(t, mr, writer, 1, string(key))
	third := newCache(t, Options{Redis: rc})
	fills := 0
	e3, res, err := third.Get(ctx, 1, key, pol, func(context.Context) ([]byte, error) { fills++; return body, nil })
	if err != nil || res != Miss || fills != 1 || !bytes.Equal(e3.Body(), body) {
		t.Fatalf("plain get of a corrupt value: %v %v, %d fills", res, err, fills)
	}
	if st := third.Stats(); st.L2Errors == 0 {
		t.Fatal("the corrupt value was not counted as an L2 error")
	}
	fourth := newCache(t, Options{Redis: rc})
	if e4, res, err := fourth.Get(ctx, 1, key, pol, noFill); err != nil || res != Hit || !bytes.Equal(e4.Body(), body) {
		t.Fatalf("after the refill: %v %v", res, err)
	}
}

// TestLentPlainBody: an identity caller's L2 hit that L1 would not keep
// (here L1 holds nothing: L1MaxBytes -1) gets the plain body in storage
// lent from a pool, handed over once by Lent and given back by its Close,
// and is not put in L1; storage given back is lent again for the next such
// hit, whose body is its own. A corrupt payload on this path is never
// served: the caller fills again. Where L1 keeps the entry, nothing is
// lent.
func TestLentPlainBody(t *testing.T) {
	mr, rc := newMiniRedis(t)
	pol := Policy{TTL: time.Hour}
	ctx := context.Background()
	writer := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	bodies := map[string][]byte{}
	for i := range 4 {
		k := "/dealer/REWIND/listing?page=" + strconv.Itoa(i+1)
		bodies[k] = listingBody(uint64(i+1), 20)
		if _, res, err := writer.Get(ctx, 1, []byte(k), pol, func(context.Context) ([]byte, error) { return bodies[k], nil }); err != nil || res != Miss {
			t.Fatalf("fill %s: %v %v", k, res, err)
		}
	}
	noFill := func(context.Context) ([]byte, error) { return nil, errors.New("no fill expected") }

	reader := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	var storage []*byte
	for round := range 3 {
		for k, want := range bodies {
			e, res, err := reader.Get(ctx, 1, []byte(k), pol, noFill)
			if err != nil || res != Hit {
				t.Fatalf("round %d %s: %v %v", round, k, res, err)
			}
			if !bytes.Equal(e.Body(), want) {
				t.Fatalf("round %d %s: wrong body", round, k)
			}
			lent := e.Lent()
			if lent == nil {
				t.Fatalf("round %d %s: an L2 hit L1 does not keep was not lent storage", round, k)
			}
			if e.Lent() != nil {
				t.Fatal("Lent handed the storage over twice")
			}
			storage = append(storage, &e.Body()[0])
			_ = lent.Close()
		}
	}
	if reader.Stats().L1Entries != 0 {
		t.Fatal("a lent entry was put in L1")
	}
	reused := 0
	for i := 1; i < len(storage); i++ {
		if storage[i] == storage[i-1] {
			reused++
		}
	}
	if reused == 0 {
		t.Error("storage given back was never lent again")
	}

	// A gzip caller is served the compressed value: nothing is lent.
	for k := range bodies {
		if e, _, err := reader.GetGzip(ctx, 1, []byte(k), pol, noFill); err != nil || e.Lent() != nil {
			t.Fatalf("gzip caller: %v, lent %v", err, e.Lent() != nil)
		}
		break
	}

	// Where L1 keeps the entry, its body is its own.
	keeper := newCache(t, Options{Redis: rc})
	for k, want := range bodies {
		e, res, err := keeper.Get(ctx, 1, []byte(k), pol, noFill)
		if err != nil || res != Hit || !bytes.Equal(e.Body(), want) || e.Lent() != nil {
			t.Fatalf("L1 with room: %v %v, lent %v", res, err, e.Lent() != nil)
		}
	}

	// Corrupt one payload: the lent path does not serve it.
	const k = "/dealer/REWIND/listing?page=1"
	corruptPayload(t, mr, writer, 1, k)
	third := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	fills := 0
	e, res, err := third.Get(ctx, 1, []byte(k), pol, func(context.Context) ([]byte, error) { fills++; return bodies[k], nil })
	if err != nil || res != Miss || fills != 1 || !bytes.Equal(e.Body(), bodies[k]) {
		t.Fatalf("plain get of a corrupt value: %v %v, %d fills", res, err, fills)
	}
	if third.Stats().L2Errors == 0 {
		t.Fatal("the corrupt value was not counted as an L2 error")
	}
}

// TestLendingEntryPassedOver: while an L2 hit with lent storage is being
// offered to L1 (Cache.probeL2), L1's lookups do not return it, so no
// other request can serve from storage that goes back to the pool if the
// admission then refuses the entry.
func TestLendingEntryPassedOver(t *testing.T) {
	c := newCache(t, Options{})
	pol := Policy{TTL: time.Hour}
	body := listingBody(3, 20)
	e, _ := mustGet(t, c, 1, "/k", pol, func(context.Context) ([]byte, error) { return body, nil })
	if n, _ := c.l1.lookup(1, []byte("/k")); n == nil || n.entry != e {
		t.Fatal("the entry is not in L1")
	}
	e.lending.Store(true)
	if n, _ := c.l1.lookup(1, []byte("/k")); n != nil {
		t.Fatal("lookup returned an entry being offered with lent storage")
	}
	if n := c.l1.lookupString(1, "/k"); n != nil {
		t.Fatal("lookupString returned an entry being offered with lent storage")
	}
	fills := 0
	if _, res := mustGet(t, c, 1, "/k", pol, func(context.Context) ([]byte, error) { fills++; return body, nil }); res != Miss || fills != 1 {
		t.Fatalf("Get of a key whose only entry is being offered: %v, %d fills", res, fills)
	}
}

// corruptPayload flips a byte inside the deflate data of the value c
// stored in Redis for (dealer, key), the frame intact.
func corruptPayload(t *testing.T, mr *miniredis.Miniredis, c *Cache, dealer int64, key string) {
	t.Helper()
	gen, _ := c.generation(context.Background(), dealer)
	rkey := c.entryKey(dealer, gen, key)
	v, err := mr.Get(rkey)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte(v)
	b[wireHeader+len(b[wireHeader:])/2] ^= 0x55
	mr.Set(rkey, string(b))
}

// TestPlainBelow: with SetPlainBelow, a body shorter than the bound goes
// to Redis plain and is never compressed (at the fill or at an L2 hit, for
// a gzip caller too); a longer one is stored compressed as before; and a
// reader serves both from Redis.
func TestPlainBelow(t *testing.T) {
	mr, rc := newMiniRedis(t)
	writer := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	writer.SetPlainBelow(1024)
	reader := newCache(t, Options{Redis: rc})
	pol := Policy{TTL: time.Hour}
	ctx := context.Background()
	noFill := func(context.Context) ([]byte, error) { return nil, errors.New("no fill expected") }
	small, large := listingBody(3, 1), listingBody(4, 20)
	if len(small) >= 1024 || len(large) < 1024 {
		t.Fatalf("bodies of %d and %d bytes", len(small), len(large))
	}
	for _, tc := range []struct {
		key  string
		body []byte
		gzip bool // stored compressed
	}{
		{"/small", small, false},
		{"/large", large, true},
	} {
		e, res, err := writer.Get(ctx, 1, []byte(tc.key), pol, func(context.Context) ([]byte, error) { return tc.body, nil })
		if err != nil || res != Miss {
			t.Fatalf("%s: fill %v %v", tc.key, res, err)
		}
		if made := e.gz.Load() != nil; made != tc.gzip {
			t.Errorf("%s: gzip variant made at the fill: %v, want %v", tc.key, made, tc.gzip)
		}
		gen, _ := writer.generation(ctx, 1)
		v, err := mr.Get(writer.entryKey(1, gen, tc.key))
		if err != nil {
			t.Fatal(err)
		}
		if got := v[1]&wireGzip != 0; got != tc.gzip {
			t.Errorf("%s: stored compressed %v, want %v", tc.key, got, tc.gzip)
		}
		e, res, err = reader.GetGzip(ctx, 1, []byte(tc.key), pol, noFill)
		if err != nil || res != Hit {
			t.Fatalf("%s: GetGzip from Redis: %v %v", tc.key, res, err)
		}
		if !tc.gzip && (e.gz.Load() != nil || !bytes.Equal(e.Body(), tc.body)) {
			t.Errorf("%s: a gzip caller's L2 hit of a plain value compressed it, or lost the body", tc.key)
		}
		if tc.gzip {
			if gz, _, ok := e.Gzip(); !ok || !bytes.Equal(gunzipStd(t, gz), tc.body) {
				t.Errorf("%s: gzip variant does not hold the body", tc.key)
			}
		}
	}
}

// TestWeakETagOf compares the weak ETag made in one allocation with the
// strong one it extends, and a compressed value's decoded ETags with them.
func TestWeakETagOf(t *testing.T) {
	hs := []uint64{0, 1, 0xf, 0x10, 0xdeadbeef, 1<<63 - 1, 1 << 63, ^uint64(0)}
	for i := uint64(0); i < 200; i++ {
		hs = append(hs, i*0x9e3779b97f4a7c15)
	}
	for _, h := range hs {
		if got, want := weakETagOf(h), "W/"+etagOf(h); got != want {
			t.Fatalf("weakETagOf(%#x) = %s, want %s", h, got, want)
		}
	}
	e := newEntry(listingBody(7, 20), time.Now(), Policy{TTL: time.Hour})
	d, err := decodeEntry(encodeEntry(e), true)
	if err != nil {
		t.Fatal(err)
	}
	_, weak, ok := d.Gzip()
	if !ok || d.ETag != e.ETag || weak != "W/"+e.ETag {
		t.Fatalf("decoded ETags %s, %s (%v); stored %s", d.ETag, weak, ok, e.ETag)
	}
}
