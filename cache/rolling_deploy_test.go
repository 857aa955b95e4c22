package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/cache/redistest"
)

// These tests hold what a rolling deploy needs of one Redis shared by two
// releases of the edge (see the README's Deploy section, "Rolling
// upgrades"). They run against a real redis-server.

// TestPurgeReachesAnotherContractVersion: two releases that serve different
// contract versions keep their entries apart (Prefix carries the contract
// version) but must see each other's purges while they run side by side:
// a purge made on either side drops the dealer's entries on both. With the
// generation keys and the purge channel under Prefix, a purge made on the
// new release's instances left the old ones serving the purged body (from
// L1 and from their own Redis entries) until the entries expired, and the
// other way round.
func TestPurgeReachesAnotherContractVersion(t *testing.T) {
	srv := redistest.Start(t)
	const purgePrefix = "edge:c1.2.0"
	mk := func(prefix string) *Cache {
		return newCache(t, Options{Redis: newClient(t, srv.Addr), Prefix: prefix, PurgePrefix: purgePrefix})
	}
	oldRel, newRel := mk("edge:c1.2.0"), mk("edge:c1.3.0")
	waitFor(t, "subscriptions", func() bool { return oldRel.Stats().PubSubUp && newRel.Stats().PubSubUp })
	pol := Policy{TTL: time.Hour, StaleIfError: time.Hour}
	const dealer = 7
	key := []byte("/dealer/REWIND/listing?page=1")
	body := func(b string) FillFunc { return func(context.Context) ([]byte, error) { return []byte(b), nil } }
	for _, c := range []*Cache{oldRel, newRel} {
		if _, _, err := c.Get(context.Background(), dealer, key, pol, body("before")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name          string
		purger, other *Cache
		after         string
	}{
		{"purge on the new release", newRel, oldRel, "after 1"},
		{"purge on the old release", oldRel, newRel, "after 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.purger.PurgeDealer(context.Background(), dealer); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(2 * time.Second)
			for {
				e, res, err := tc.other.Get(context.Background(), dealer, key, pol, body(tc.after))
				if err != nil {
					t.Fatal(err)
				}
				if res == Miss && string(e.Body()) == tc.after {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the other release still answers %s %q after the purge", res, e.Body())
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

// TestForeignWireValueIsMiss: a value in Redis that this release cannot
// read (a later wire version, a flag it does not know) is a miss: the fill
// runs, its body is served and it overwrites the value in this release's
// format; never a panic, an error or another body. It counts as a miss,
// not as a Redis error: during a rolling deploy that brings a new wire
// format the old instances' edge_redis_errors_total rose with every such
// read. A value of the version before (1, plain) is still a hit with its
// own body.
func TestForeignWireValueIsMiss(t *testing.T) {
	srv := redistest.Start(t)
	rc := newClient(t, srv.Addr)
	c := newCache(t, Options{Redis: rc, L1MaxBytes: -1})
	pol := Policy{TTL: time.Hour, StaleIfError: time.Hour}
	const dealer = 9
	ctx := context.Background()
	c.currentEpoch(ctx) // the key below is under the epoch read from Redis
	gen, _ := c.generation(ctx, dealer)
	stored := listingBody(3, 20)
	written := func(f func(b []byte) []byte) []byte {
		return f(encodeEntry(newEntry(bytes.Clone(stored), time.Now(), pol)))
	}
	for i, tc := range []struct {
		name  string
		value []byte
		hit   bool
		// malformed: this release cannot tell the value from a corrupt
		// one (a format change that kept the version number, which
		// TestWireLayoutPinned forbids); still a miss, counted as an error.
		malformed bool
	}{
		{"version 1 (plain, the release before compressed values)", encodeEntryV1(newEntry(stored, time.Now(), pol)), true, false},
		{"version 2 (this release)", written(func(b []byte) []byte { return b }), true, false},
		{"version 3 (a later release)", written(func(b []byte) []byte { b[0] = 3; return b }), false, false},
		{"version 2 with a flag this release does not know", written(func(b []byte) []byte { b[1] |= 1 << 3; return b }), false, false},
		{"a longer header of a later release under version 2's number", written(func(b []byte) []byte {
			return append(b[:wireHeader:wireHeader], append(binary.BigEndian.AppendUint64(nil, 42), b[wireHeader:]...)...)
		}), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key := []byte("/dealer/REWIND/listing?case=" + string(rune('a'+i)))
			rkey := c.entryKey(dealer, gen, string(key))
			if err := rc.Set(ctx, rkey, tc.value, time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			fresh := []byte("filled by this release")
			before := c.Stats()
			e, res, err := c.Get(ctx, dealer, key, pol, func(context.Context) ([]byte, error) { return fresh, nil })
			if err != nil {
				t.Fatal(err)
			}
			want, wantRes := fresh, Miss
			if tc.hit {
				want, wantRes = stored, Hit
			}
			if res != wantRes || !bytes.Equal(e.Body(), want) {
				t.Fatalf("%s with a body of %d bytes; want %s with %d", res, len(e.Body()), wantRes, len(want))
			}
			if tc.hit {
				return
			}
			wantErrs, wantMisses := uint64(0), uint64(1)
			if tc.malformed {
				wantErrs, wantMisses = 1, 0
			}
			if st := c.Stats(); st.L2Errors-before.L2Errors != wantErrs || st.L2Misses-before.L2Misses != wantMisses {
				t.Fatalf("counted as %d Redis errors and %d misses; want %d and %d (a later format's value is no Redis error: edge_redis_errors_total would show the deploy)",
					st.L2Errors-before.L2Errors, st.L2Misses-before.L2Misses, wantErrs, wantMisses)
			}
			raw, err := rc.Get(ctx, rkey).Bytes()
			if err != nil || raw[0] != wireVersion {
				t.Fatalf("the value was not overwritten in this release's format: %v %x", err, raw[:min(2, len(raw))])
			}
		})
	}
}

// TestWireLayoutPinned pins wire version 2 byte for byte. Releases of the
// edge share Redis during a rolling deploy and a rollback, and a reader
// knows a value's layout only by its version byte: a layout changed under
// the same number is read by the other release as a corrupt value at best,
// and as another body or other windows at worst. If this test fails, the
// change needs a new wireVersion (whose values the releases before read as
// a miss: TestForeignWireValueIsMiss), reading of version 2 kept, and the
// README's "Rolling upgrades" paragraph updated; do not update the golden
// bytes.
func TestWireLayoutPinned(t *testing.T) {
	pol := Policy{TTL: 30 * time.Second, StaleWhileRevalidate: 30 * time.Second, StaleIfError: 10 * time.Minute}
	t.Run("plain payload", func(t *testing.T) {
		e := newEntry([]byte(`{"items":[]}`), time.Unix(1_700_000_000, 0), pol)
		const want = "02" + "00" + // version, flags
			"17979cfe362a0000" + "17979d05324dac00" + "17979d0c2e715800" + "17979d90e5171c00" + // stored, fresh, stale, error (Unix ns, big-endian)
			"ee3808fb2e277c5a" + // xxhash64 of the plain body
			"0000000c" + // plain length
			"7b226974656d73223a5b5d7d" // the body
		if got := hex.EncodeToString(encodeEntry(e)); got != want {
			t.Fatalf("version 2 value\n got %s\nwant %s", got, want)
		}
	})
	t.Run("compressed payload with the source digest", func(t *testing.T) {
		e := newEntry(listingBody(5, 20), time.Unix(1_700_000_000, 0), pol)
		e.src = 0x0102030405060708
		v := encodeEntry(e)
		p := v[wireHeader:]
		head := hex.EncodeToString(v[:2]) + " " + hex.EncodeToString(p[:4]) + " " + hex.EncodeToString(p[10:24]) + " " + hex.EncodeToString(p[24:28])
		const want = "0201" + // version, flags: gzip
			" 1f8b0804" + // gzip magic, deflate, FLG.FEXTRA
			" 1600" + "4445" + "1200" + "0807060504030201" + // XLEN 22; subfield "DE" of 18 bytes: the digest (little-endian),
			" 1f8b0800" // then the copy of the member's header, without FEXTRA
		if head != want {
			t.Fatalf("version 2 compressed value\n got %s\nwant %s", head, want)
		}
	})
}
