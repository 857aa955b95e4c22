package cache

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/dealer-edge/dealer-edge/internal/bufpool"
)

// Policy is the caching policy of one route (or content type). The caller
// passes it on every call, so a policy changed at runtime applies at once:
// entries stored under a longer policy are judged by the shorter one from the
// next lookup on (windows are clamped to StoredAt plus the current policy);
// a longer policy applies to entries stored from then on.
type Policy struct {
	// TTL is how long an entry is fresh. Zero (or negative) turns caching
	// off for the route: the fill runs every time, the Result is Bypass and
	// nothing is stored.
	TTL time.Duration
	// StaleWhileRevalidate is how long after freshness ends the entry is
	// still served (Result Stale) while one background refresh runs.
	StaleWhileRevalidate time.Duration
	// StaleIfError is how long after freshness ends the entry may still be
	// served when the fill fails (see Options.ServeStaleOn). A window shorter
	// than StaleWhileRevalidate adds nothing.
	StaleIfError time.Duration
}

func (p Policy) normalised() Policy {
	if p.TTL < 0 {
		p.TTL = 0
	}
	if p.StaleWhileRevalidate < 0 {
		p.StaleWhileRevalidate = 0
	}
	if p.StaleIfError < 0 {
		p.StaleIfError = 0
	}
	return p
}

// MaxAge is the number of whole seconds of freshness e has left at now under
// this policy, which may have been shortened since e was stored; never
// negative. Use it for Cache-Control: max-age on a Hit.
func (p Policy) MaxAge(e *Entry, now time.Time) int {
	w := p.normalised().windows(e)
	return maxAge(w.fresh, now)
}

// Entry is one cached response body with its validators and windows. It is
// immutable once returned by the cache: callers may write Body (and the gzip
// variant) to the network without copying (fasthttp SetBodyRaw) and must
// never modify them.
//
// An entry read from Redis holds the body gzip-compressed, as Redis keeps
// it; the plain body is made on the first call of Body, so a gzip client
// served from such an entry never costs a decompression, and L1 holds (and
// counts) only the codings that were asked for.
type Entry struct {
	// ETag is a strong, quoted entity tag of Body (xxhash64, 16 hex digits),
	// computed once when the entry is made, for example "\"9f86d081884c7d65\"".
	ETag string
	// StoredAt is when the fill finished.
	StoredAt time.Time
	// FreshUntil ends freshness (StoredAt + TTL).
	FreshUntil time.Time
	// StaleUntil ends stale-while-revalidate (FreshUntil + StaleWhileRevalidate).
	StaleUntil time.Time
	// ErrorUntil ends stale-if-error: the later of StaleUntil and
	// FreshUntil + StaleIfError. The Redis copy is written to expire at
	// StaleUntil (at least a few seconds past FreshUntil); each read of it
	// from Redis keeps it for the route's whole window from the read, so an
	// entry read again is there until ErrorUntil.
	ErrorUntil time.Time

	hash     uint64
	src      uint64 // digest of what the body was made from (Revalidation.Source); 0: none. Kept in Redis with a compressed payload
	plainLen int    // length of the plain body
	level    int8   // gzip level of the variant made here (Options.GzipLevel); 0: the default
	// plainWire: the Redis value is the plain body, not compressed for it
	// (Cache.SetPlainBelow).
	plainWire bool
	plain     atomic.Pointer[variant] // the plain body; nil until Body inflates it
	gz        atomic.Pointer[variant] // the gzip variant, made on first use (see Gzip)
	bad       atomic.Bool             // the compressed payload did not inflate to the body

	lent atomic.Pointer[bufpool.Buf] // the pooled storage of a plain body served once (see inflateLent)
	// held is pooled storage the codings live in beyond their lengths (a
	// size class's rounding): set before e is offered to L1, and counted
	// with the codings (codingsSize), since L1 keeps the whole buffer.
	held    int64
	lending atomic.Bool // being offered to L1 with lent storage: L1's lookups pass it over

	vmu     sync.Mutex // orders installing a variant with L1's accounting
	owner   *l1        // the L1 whose byte budget e's codings count in while e is in it, else nil
	retired bool       // e has left L1: variants made now are not kept
}

// MaxAge is the number of whole seconds of freshness e has left at now,
// never negative. See also Policy.MaxAge.
func (e *Entry) MaxAge(now time.Time) int { return maxAge(e.FreshUntil, now) }

func maxAge(until, now time.Time) int {
	d := until.Sub(now)
	if d <= 0 {
		return 0
	}
	return int(d / time.Second)
}

// Len is the length of the plain body, known without making it.
func (e *Entry) Len() int { return e.plainLen }

// Body returns the plain body. For an entry read from Redis in compressed
// form the first call decompresses it (once; the result is kept with the
// entry and, while the entry is in L1, counted in L1's budget). It returns
// nil, for every call, if the stored payload turns out to be corrupt (it
// does not inflate to the length and hash the entry was stored with); the
// caller then treats the entry as missing (see Cache.Drop).
func (e *Entry) Body() []byte {
	if v := e.plain.Load(); v != nil {
		return v.body
	}
	return e.inflate()
}

// inflate makes the plain body from the gzip variant.
func (e *Entry) inflate() []byte {
	body, ok := e.gunzipChecked(nil)
	if !ok {
		return nil
	}
	return e.install(&e.plain, &variant{body: body, kept: true}).body
}

// gunzipChecked inflates the gzip variant into dst's storage (or a new
// slice) and checks it against the entry's length and hash; a payload that
// fails marks the entry bad for every later call.
func (e *Entry) gunzipChecked(dst []byte) ([]byte, bool) {
	if e.bad.Load() {
		return nil, false
	}
	gz := e.gz.Load()
	if gz == nil || gz.body == nil {
		e.bad.Store(true)
		return nil, false
	}
	body, err := gunzipInto(dst, gz.body, e.plainLen)
	if err != nil || xxhash.Sum64(body) != e.hash {
		e.bad.Store(true)
		return nil, false
	}
	return body, true
}

// lentBodies lends the storage of plain bodies served once and not kept
// (an L2 hit L1 refuses, a bulk-tier hit the hot tier does not take); the
// entry hands it over with Lent. Bodies over lendMax are not lent.
var lentBodies = bufpool.New(lendMax)

const lendMax = 256 << 10

// inflateLent makes the plain body, as Body would, in storage lent from a
// pool instead of a new allocation, for an identity client's L2 hit
// (Cache.probeL2): most L2 hits of a working set larger than L1 are not
// admitted, and their plain bodies were otherwise garbage at once. It
// reports false when the payload is corrupt, as Body returns nil. The
// plain body stays valid until the storage returned by Lent is closed.
func (e *Entry) inflateLent() bool {
	l, ok := e.inflatePooled()
	if l != nil {
		e.lent.Store(l)
	}
	return ok
}

// inflateLentAlso makes the plain body of an entry that holds only its
// gzip variant, for an identity client's bulk-tier hit, in storage lent
// from the pool that goes back with into, which holds the compressed copy
// it is made from: where the hot tier does not take the entry, the body,
// like the copy, is read once and was otherwise garbage after the
// response; where it does, the entry keeps both. It reports false when
// the payload is corrupt, as usable does.
func (e *Entry) inflateLentAlso(into *bufpool.Buf) bool {
	l, ok := e.inflatePooled()
	if l != nil {
		into.Then(l)
	}
	return ok
}

// inflatePooled decompresses the entry's plain body into storage lent
// from the pool and returns that storage. It lends nothing (l nil) when
// the entry already has its plain body or the body is over lendMax (then
// made as Body makes it); ok is false when the payload is corrupt.
func (e *Entry) inflatePooled() (l *bufpool.Buf, ok bool) {
	if e.plainLen > lendMax || e.plain.Load() != nil {
		return nil, e.Body() != nil
	}
	l = lentBodies.GetSize(e.plainLen)
	body, ok := e.gunzipChecked(l.B)
	if !ok {
		_ = l.Close()
		return nil, false
	}
	l.B = body
	e.held += int64(cap(body) - len(body))
	e.plain.Store(&variant{body: body})
	return l, true
}

// keepLent is called when L1 kept e with its plain body in lent storage
// (inflateLent): the body is copied to storage of its own length and the
// buffer, a power-of-two size class of at least 4 KiB (a 600-byte page in
// a 4 KiB buffer), goes back to the pool. L1 charges what e holds (held), so a wasteful buffer kept
// would cost L1 entries (the scale mix's L1 share fell from 0.77 to 0.72 of
// hits when it was charged, 2026-11-29). e is still lending: no other
// request reads its body.
func (e *Entry) keepLent() {
	l := e.lent.Swap(nil)
	if l == nil {
		return
	}
	body := l.B
	if cap(body) == len(body) {
		return // e keeps the storage: nothing of it is wasted
	}
	// The copy is charged its length, as a fill's body is: the
	// allocator's rounding to its size class is what MemoryLimitFor's
	// eighth allows for every body.
	exact := append(make([]byte, 0, len(body)), body...)
	e.vmu.Lock()
	was := e.held
	e.plain.Store(&variant{body: exact})
	e.held = 0
	if e.owner != nil {
		e.owner.bytes.Add(-was)
	}
	e.vmu.Unlock()
	_ = l.Close()
}

// rehome copies the bodies of an entry made in pooled storage (a bulk-tier
// hit: the value's gzip body and, for an identity client, the plain body
// inflated next to it) into storage of their own lengths, before the hot
// tier takes it; the caller then gives the pooled storage back. Kept
// whole, a 4 KiB buffer (the smallest size class) holding a 2 KB value
// made the hot tier charge twice the page and hold fewer pages: on the
// fleet mix its share of hits fell from 0.56 to 0.49 when the buffer was
// charged (2026-11-29). e is not visible to other requests yet.
func (e *Entry) rehome() {
	e.vmu.Lock()
	defer e.vmu.Unlock()
	for _, p := range [...]*atomic.Pointer[variant]{&e.plain, &e.gz} {
		if v := p.Load(); v != nil && !v.kept && v.body != nil {
			nv := *v
			nv.body = append(make([]byte, 0, len(v.body)), v.body...)
			nv.kept = true // the copy is the variant's own for good
			p.Store(&nv)
		}
	}
	e.held = 0
}

// Lent hands over, once, the pooled storage the entry's bodies live in when
// the cache lent it some (an L2 hit's plain body, a bulk-tier hit's value;
// nil otherwise). The caller closes it once the bodies are no longer read
// (after the response is written), and does not use the entry afterwards.
// A caller that never asks lets the storage go to the garbage collector.
func (e *Entry) Lent() io.Closer {
	if l := e.lent.Swap(nil); l != nil {
		return l
	}
	return nil
}

// NewEntry makes an entry of body stored at now under p, as a fill does (for
// callers' tests; the cache makes its own).
func NewEntry(body []byte, now time.Time, p Policy) *Entry { return newEntry(body, now, p) }

// newEntry makes an entry of body stored at now under p.
func newEntry(body []byte, now time.Time, p Policy) *Entry { return newEntryOf(body, now, p, true) }

// newEntryOf makes an entry of body stored at now under p; kept is false
// for a body that is the caller's pooled storage (a bypassed fill's), never
// to be shared with another entry.
func newEntryOf(body []byte, now time.Time, p Policy, kept bool) *Entry {
	h := xxhash.Sum64(body)
	e := &Entry{ETag: etagOf(h), hash: h, StoredAt: now, plainLen: len(body)}
	e.plain.Store(&variant{body: body, kept: kept})
	e.setWindows(now, p)
	return e
}

// setWindows sets e's windows for an entry stored at now under p.
func (e *Entry) setWindows(now time.Time, p Policy) {
	e.FreshUntil = now.Add(p.TTL)
	e.StaleUntil = e.FreshUntil.Add(p.StaleWhileRevalidate)
	e.ErrorUntil = e.FreshUntil.Add(p.StaleIfError)
	if e.ErrorUntil.Before(e.StaleUntil) {
		e.ErrorUntil = e.StaleUntil
	}
}

// l2WriteFloor is how long past its freshness a value written to Redis
// lives at least (at most its ttl more), when its stale-while-revalidate
// window is shorter: a read just after freshness ends (another instance's
// clock, a request that arrived as the entry went stale) still finds it
// and extends it.
const l2WriteFloor = 5 * time.Second

// l2WriteUntil is when e's value written to Redis expires unless a read
// extends it (Cache.l2Get): the end of its stale-while-revalidate window,
// at least l2WriteFloor (or its ttl, if shorter) past its freshness and
// never past its ErrorUntil.
// A value nobody asks for again so leaves Redis after ttl +
// stale_while_revalidate, not after its whole stale-if-error window.
func (e *Entry) l2WriteUntil() time.Time {
	t := e.StaleUntil
	if f := e.FreshUntil.Add(min(l2WriteFloor, e.FreshUntil.Sub(e.StoredAt))); t.Before(f) {
		t = f
	}
	if e.ErrorUntil.Before(t) {
		t = e.ErrorUntil
	}
	return t
}

// l2Keep is how long a read of an entry's value from Redis keeps it there
// (GETEX PX, from the read): ttl plus stale-if-error, the most an entry's
// ErrorUntil can lie after it was stored, so an entry read at any point of
// its life stays in Redis at least until its ErrorUntil (and at most this
// long past the read). Zero when stale-if-error adds nothing to
// stale-while-revalidate (the content views have neither): the value is
// then written until its ErrorUntil already (l2WriteUntil), and a read is
// a plain GET.
func (p Policy) l2Keep() time.Duration {
	p = p.normalised()
	if p.StaleIfError <= p.StaleWhileRevalidate {
		return 0
	}
	return p.TTL + p.StaleIfError
}

// adoptGzip gives e, the entry a fill just made, the gzip variant of prev,
// the entry it replaces, when both hold the same body: a refresh whose
// upstream answers did not change then costs no compression (for a
// 20-vehicle listing page about 58 µs at the default level, 255 µs for
// 100 vehicles), and the Redis write sends the bytes it sent before. The
// same body is the same xxhash64 and length (the identity the ETag gives
// it) and, for a compressed variant, the same CRC-32 and length in its
// gzip trailer. Only a variant whose storage is its own for good (kept)
// is shared, never one lent from a pool. e must not be published yet.
func (e *Entry) adoptGzip(prev *Entry) bool {
	if prev == nil || prev.hash != e.hash || prev.plainLen != e.plainLen || prev.bad.Load() || e.gz.Load() != nil {
		return false
	}
	v := prev.gz.Load()
	if v == nil || !v.kept {
		return false
	}
	if gz := v.body; gz != nil {
		body := e.plain.Load().body
		if len(gz) < 18 || binary.LittleEndian.Uint32(gz[len(gz)-4:]) != uint32(len(body)) ||
			binary.LittleEndian.Uint32(gz[len(gz)-8:]) != crc32.ChecksumIEEE(body) {
			return false
		}
	}
	e.gz.Store(v)
	return true
}

func etagOf(h uint64) string {
	const hex = "0123456789abcdef"
	var b [18]byte
	b[0], b[17] = '"', '"'
	for i := 16; i >= 1; i-- {
		b[i] = hex[h&0xf]
		h >>= 4
	}
	return string(b[:])
}

// weakETagOf is "W/" + etagOf(h), made in one allocation.
func weakETagOf(h uint64) string {
	const hex = "0123456789abcdef"
	var b [20]byte
	b[0], b[1], b[2], b[19] = 'W', '/', '"', '"'
	for i := 18; i >= 3; i-- {
		b[i] = hex[h&0xf]
		h >>= 4
	}
	return string(b[:])
}

// windows are the ends of an entry's states under the current policy.
type windows struct{ fresh, stale, error time.Time }

// windows clamps e's stored windows to StoredAt plus p, so a policy shortened
// at runtime applies to entries already stored.
func (p Policy) windows(e *Entry) windows {
	w := windows{fresh: e.FreshUntil, stale: e.StaleUntil, error: e.ErrorUntil}
	if f := e.StoredAt.Add(p.TTL); f.Before(w.fresh) {
		w.fresh = f
	}
	if s := w.fresh.Add(p.StaleWhileRevalidate); s.Before(w.stale) {
		w.stale = s
	}
	er := w.fresh.Add(p.StaleIfError)
	if er.Before(w.stale) {
		er = w.stale
	}
	if er.Before(w.error) {
		w.error = er
	}
	return w
}

// state is where an entry stands at a moment.
type state uint8

const (
	stateFresh   state = iota // serve: Hit
	stateStale                // serve: Stale, refresh in the background
	stateError                // serve only if the fill fails
	stateExpired              // unusable
)

func (p Policy) state(e *Entry, now time.Time) state {
	w := p.windows(e)
	switch {
	case now.Before(w.fresh):
		return stateFresh
	case now.Before(w.stale):
		return stateStale
	case now.Before(w.error):
		return stateError
	default:
		return stateExpired
	}
}

// Result says how Get answered; the caller sends it as X-Cache.
type Result uint8

const (
	// Miss: the body was filled for this call (or for a coalesced call).
	Miss Result = iota
	// Hit: a fresh entry from L1 or L2.
	Hit
	// Stale: an entry past its freshness, served within
	// stale-while-revalidate or stale-if-error (send max-age=0).
	Stale
	// Bypass: caching is off for the route (Policy.TTL is zero).
	Bypass
)

// String returns "HIT", "MISS", "STALE" or "BYPASS", the X-Cache values.
func (r Result) String() string {
	switch r {
	case Hit:
		return "HIT"
	case Miss:
		return "MISS"
	case Stale:
		return "STALE"
	case Bypass:
		return "BYPASS"
	default:
		return "Result(" + strconv.Itoa(int(r)) + ")"
	}
}

// Wire format of an entry in Redis. Version 2 (written): a version byte, a
// flags byte, four times in Unix nanoseconds, the hash of the plain body, the
// length of the plain body, then the payload: the gzip variant of the body
// (flag wireGzip) when compression saves at least an eighth, else the plain
// body. Version 1 (read only, written before compressed values): a version
// byte, the four times, the hash, the plain body.
//
// The source digest of an entry (Revalidation.Source) travels inside a
// compressed payload, where every reader of version 2 already accepts it:
// the gzip member gets an extra field (RFC 1952 2.3.1, FLG.FEXTRA) of one
// subfield "DE" holding the digest and then a copy of the member's own
// 10-byte header, so that the member from that copy on is the variant
// without the field (srcMember). A reader that knows the field takes the
// digest and serves the member from the copy (nothing is copied or
// rewritten); a reader that does not (a release before it) skips the field
// as gzip asks and serves the whole member, which decodes to the same body.
// A plain payload carries no digest: an entry stored plain because it is
// shorter than SetPlainBelow's length is not revalidated by a refresh that
// finds it in Redis (another instance's, or this one's after L1 let it go),
// but built again, which for such a body is cheap; a digest beside a plain
// payload would take a flag that releases before it read as a later wire
// format (a miss, and a refill, on every small entry during a rolling
// deploy).
const (
	wireVersion1 = 1
	wireHeader1  = 1 + 4*8 + 8

	wireVersion = 2
	wireHeader  = 2 + 4*8 + 8 + 4
	wireGzip    = 1 << 0

	// srcXLen is the extra field's length: the subfield's ID and
	// length, the digest, the header copy.
	srcXLen = 4 + 8 + 10
	// srcMember is where the header copy starts in a member with the
	// digest field: the header, XLEN, the subfield's ID, length and digest.
	srcMember  = 10 + 2 + 4 + 8
	gzipFExtra = 1 << 2

	// maxWireBody bounds the plain length a compressed value may claim, so
	// a corrupt header cannot make decoding allocate without limit.
	maxWireBody = 256 << 20
	// maxDeflateRatio bounds the plain length a compressed payload may
	// claim per byte of it (deflate's best is 258 bytes per 2 bits, a
	// little over 1032:1).
	maxDeflateRatio = 1040
)

var errBadWire = errors.New("cache: malformed entry in redis")

// errLaterWire is decodeEntry's answer for a value of a wire version above
// this release's, or of this version with a flag it does not know: a value
// a later release wrote beside this one (a rolling deploy, a rollback). It
// is a miss, not a malformed value: the fill runs, and its value in this
// release's format replaces it.
var errLaterWire = errors.New("cache: entry in redis of a later wire format")

// encodeEntry is the Redis value of e. It makes e's gzip variant if e has
// none yet (the variant is kept with e, so a gzip client is later served
// without compressing) and stores it in place of the plain body when it is
// smaller.
func encodeEntry(e *Entry) []byte { return appendEntry(nil, e) }

// appendEntry appends the Redis value of e (see encodeEntry) to dst, so a
// caller that copies it elsewhere (the bulk tier) can reuse one buffer.
func appendEntry(dst []byte, e *Entry) []byte {
	var payload []byte
	flags := byte(0)
	if !e.plainWire {
		if gz, _, ok := e.Gzip(); ok {
			payload, flags = gz, wireGzip
		}
	}
	if flags == 0 {
		payload = e.Body()
	}
	withSrc := flags == wireGzip && e.src != 0 && len(payload) >= 18 && payload[3] == 0
	n := len(dst)
	extra := 0
	if withSrc {
		extra = srcMember
	}
	dst = slices.Grow(dst, wireHeader+extra+len(payload))
	dst = dst[:n+wireHeader]
	b := dst[n:]
	b[0], b[1] = wireVersion, flags
	putTimes(b[2:], e)
	binary.BigEndian.PutUint32(b[2+4*8+8:], uint32(e.plainLen))
	if withSrc {
		dst = appendSrcField(dst, payload[:10], e.src)
	}
	return append(dst, payload...)
}

// appendSrcField appends a gzip header hdr (of a member without optional
// fields) with FLG.FEXTRA set, and the extra field holding src and hdr
// itself (see the wire format): the member's header copy, deflate stream
// and trailer follow it.
func appendSrcField(dst, hdr []byte, src uint64) []byte {
	dst = append(dst, hdr[:3]...)
	dst = append(dst, hdr[3]|gzipFExtra)
	dst = append(dst, hdr[4:10]...)
	dst = binary.LittleEndian.AppendUint16(dst, srcXLen)
	dst = append(dst, 'D', 'E')
	dst = binary.LittleEndian.AppendUint16(dst, srcXLen-4)
	return binary.LittleEndian.AppendUint64(dst, src)
}

// srcField returns the source digest a compressed payload carries and the
// member without the field, or (0, payload) when it carries none.
func srcField(payload []byte) (uint64, []byte) {
	if len(payload) < srcMember+18 || payload[3] != gzipFExtra ||
		binary.LittleEndian.Uint16(payload[10:]) != srcXLen ||
		payload[12] != 'D' || payload[13] != 'E' ||
		binary.LittleEndian.Uint16(payload[14:]) != srcXLen-4 {
		return 0, payload
	}
	m := payload[srcMember:]
	if m[0] != 0x1f || m[1] != 0x8b || m[2] != 8 || m[3] != 0 {
		return 0, payload
	}
	return binary.LittleEndian.Uint64(payload[16:]), m
}

// appendPlainEntry is appendEntry with the plain body as the payload,
// whatever compression would save: for a copy that is not worth a
// compression of its own (see bulkTier.put).
func appendPlainEntry(dst []byte, e *Entry) []byte {
	body := e.Body()
	n := len(dst)
	dst = slices.Grow(dst, wireHeader+len(body))
	dst = dst[:n+wireHeader]
	b := dst[n:]
	b[0], b[1] = wireVersion, 0
	putTimes(b[2:], e)
	binary.BigEndian.PutUint32(b[2+4*8+8:], uint32(len(body)))
	return append(dst, body...)
}

func putTimes(b []byte, e *Entry) {
	binary.BigEndian.PutUint64(b[0:], uint64(e.StoredAt.UnixNano()))
	binary.BigEndian.PutUint64(b[8:], uint64(e.FreshUntil.UnixNano()))
	binary.BigEndian.PutUint64(b[16:], uint64(e.StaleUntil.UnixNano()))
	binary.BigEndian.PutUint64(b[24:], uint64(e.ErrorUntil.UnixNano()))
	binary.BigEndian.PutUint64(b[32:], e.hash)
}

func readTimes(b []byte) *Entry {
	t := func(off int) time.Time { return time.Unix(0, int64(binary.BigEndian.Uint64(b[off:]))) }
	return &Entry{
		StoredAt:   t(0),
		FreshUntil: t(8),
		StaleUntil: t(16),
		ErrorUntil: t(24),
		hash:       binary.BigEndian.Uint64(b[32:]),
	}
}

// decodeEntry parses b, which it keeps: the body (or, for a compressed
// value, the gzip variant) aliases b. A compressed value is not
// decompressed here: its payload becomes the entry's gzip variant, and Body
// decompresses it when an identity client first asks. Here it is checked
// only for what costs nothing: the gzip header and the length in its
// trailer. A plain body is checked against the stored hash. kept says
// that b is storage of the entry's own for good (a Redis reply), not lent
// from a pool (a bulk-tier copy): only then may a later entry of the same
// body share its gzip variant (adoptGzip).
func decodeEntry(b []byte, kept bool) (*Entry, error) {
	if len(b) == 0 {
		return nil, errBadWire
	}
	var e *Entry
	switch {
	case b[0] == wireVersion1 && len(b) >= wireHeader1:
		e = readTimes(b[1:])
		body := b[wireHeader1:len(b):len(b)]
		e.plain.Store(&variant{body: body, kept: kept})
		e.plainLen = len(body)
	case b[0] == wireVersion && len(b) >= wireHeader && b[1]&^wireGzip == 0:
		e = readTimes(b[2:])
		n := binary.BigEndian.Uint32(b[2+4*8+8:])
		payload := b[wireHeader:len(b):len(b)]
		if b[1]&wireGzip == 0 {
			if int(n) != len(payload) {
				return nil, errBadWire
			}
			e.plain.Store(&variant{body: payload, kept: kept})
			e.plainLen = len(payload)
			// Stored plain (shorter than the writer's SetPlainBelow, or
			// not worth compressing): a copy made of it (the bulk tier,
			// a rewrite) stays plain instead of compressing it again.
			e.plainWire = true
			break
		}
		// A gzip member: magic, deflate, and a trailer whose ISIZE is the
		// plain length modulo 2^32.
		// Deflate expands at most about 1032:1, so a claimed
		// length past that is corrupt, and would be allocated whole by
		// the first inflation (per concurrent reader) before failing.
		if n > maxWireBody || uint64(n) > maxDeflateRatio*uint64(len(payload)) || len(payload) < 18 || payload[0] != 0x1f || payload[1] != 0x8b || payload[2] != 8 ||
			binary.LittleEndian.Uint32(payload[len(payload)-4:]) != n {
			return nil, errBadWire
		}
		e.plainLen = int(n)
		e.src, payload = srcField(payload)
		// Both ETags in one string: the weak one's tail is the strong one.
		weak := weakETagOf(e.hash)
		e.gz.Store(&variant{body: payload, etag: weak, kept: kept})
		e.ETag = weak[2:]
	case b[0] > wireVersion || (b[0] == wireVersion && len(b) >= wireHeader):
		return nil, errLaterWire
	default:
		return nil, errBadWire
	}
	if v := e.plain.Load(); v != nil && xxhash.Sum64(v.body) != e.hash {
		return nil, errBadWire
	}
	if e.ETag == "" {
		e.ETag = etagOf(e.hash)
	}
	return e, nil
}
