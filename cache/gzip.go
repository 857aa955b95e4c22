package cache

import (
	"bytes"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/gzip"

	"github.com/dealer-edge/dealer-edge/internal/deflate"
	"github.com/dealer-edge/dealer-edge/internal/inflate"
)

// The shared code's block header is one the inflater knows: an identity
// client's L2 hit of an entry compressed with it (GzipLevel 0) takes
// tables built once instead of building them per body.
func init() {
	h, n := deflate.Header()
	if !inflate.Know(h[10:], n-80) {
		panic("cache: inflate refuses the shared code's header")
	}
}

// variant is another content coding of an entry's body.
type variant struct {
	body []byte // nil: the body does not compress well enough to be worth it
	etag string
	// kept: body is storage of the variant's own for good (made here, or
	// a reply go-redis made for one command), never lent from a pool, so
	// another entry of the same body may share it (Entry.adoptGzip).
	kept bool
}

func (v *variant) size() int64 {
	if v == nil {
		return 0
	}
	return int64(len(v.body)+len(v.etag)) + variantOverhead
}

// variantOverhead is a coding's own memory beyond its bytes: the variant
// and its slice and string headers.
const variantOverhead = 32

// DefaultGzipLevel (0) is the default of Options.GzipLevel: entries are
// compressed with internal/deflate's shared code (one fixed dynamic
// Huffman code, greedy matching with one step of lazy), not with
// klauspost's compressor at a level. On the scale mix's listing pages it
// compresses in 0.4 of the time of level 6, and an identity client's L2
// hit inflates in about 0.78 of the time (no tables to build), for 20%
// more bytes; over the route shapes as a fleet caches them, 15% more
// (BenchmarkGetL2HitMix, internal/inflate's BenchmarkGunzipMix and
// BenchmarkCompressMix, internal/deflate's TestRouteShapes).
const DefaultGzipLevel = 0

// gzipWriters pools compressors per level (index 1-9): a gzip.Writer holds
// several hundred KB of state.
var gzipWriters [10]sync.Pool

func init() {
	for l := 1; l <= 9; l++ {
		gzipWriters[l].New = func() any {
			w, _ := gzip.NewWriterLevel(nil, l)
			return w
		}
	}
}

// gzipLevel is the level an entry's gzip variant is made at (lvl is the
// entry's; 0 or out of range: 0, the shared code).
func gzipLevel(lvl int8) int {
	if lvl < 1 || lvl > 9 {
		return DefaultGzipLevel
	}
	return int(lvl)
}

// Gzip returns Body gzip-compressed and the entity tag of that
// representation, making them on the first call and keeping them with the
// entry (an entry in L1 counts them in L1's byte budget). ok is false when
// compression does not save at least an eighth of the body: send Body.
//
// The tag is the weak form of ETag: the compressed body is the same
// representation data under another content coding, so a client holding
// either tag revalidates (If-None-Match uses the weak comparison) and gets
// a 304 for both. Safe for concurrent use; never modifies Body. After the
// first call it is one atomic load.
func (e *Entry) Gzip() (body []byte, etag string, ok bool) {
	v := e.gz.Load()
	if v == nil {
		v = e.install(&e.gz, e.makeGzip())
	}
	return v.body, v.etag, v.body != nil
}

// install keeps made in slot (the plain body or the gzip variant) unless
// another call kept one first or e has left L1, and returns the one to
// serve.
// A coding made while e is in L1 counts in L1's budget, and L1 evicts
// other entries if it no longer fits: codings made lazily (the plain body
// of an entry read compressed from Redis, the gzip copy of a plain one)
// must not take L1 past its byte budget.
func (e *Entry) install(slot *atomic.Pointer[variant], made *variant) *variant {
	e.vmu.Lock()
	if v := slot.Load(); v != nil {
		e.vmu.Unlock()
		return v
	}
	if e.retired {
		e.vmu.Unlock()
		return made
	}
	slot.Store(made)
	owner := e.owner
	if owner != nil {
		owner.bytes.Add(made.size())
	}
	e.vmu.Unlock()
	if owner != nil {
		owner.shrink() // outside vmu: eviction retires entries, e among them perhaps
	}
	return made
}

func (e *Entry) makeGzip() *variant {
	body := e.Body()
	if body == nil {
		return &variant{}
	}
	z, err := compress(body, gzipLevel(e.level))
	if err != nil {
		return &variant{}
	}
	if len(z) > len(body)-len(body)/8 {
		return &variant{kept: true} // the same body never compresses better
	}
	return &variant{body: z, etag: "W/" + e.ETag, kept: true}
}

// compress gzips body at level (1-9) with the pooled compressors, or with
// the shared code at level 0.
func compress(body []byte, level int) ([]byte, error) {
	if level == 0 {
		return deflate.Gzip(make([]byte, 0, len(body)/4+64), body), nil
	}
	var buf bytes.Buffer
	buf.Grow(len(body)/4 + 64)
	pool := &gzipWriters[level]
	w := pool.Get().(*gzip.Writer)
	w.Reset(&buf)
	_, err := w.Write(body)
	if err == nil {
		err = w.Close()
	}
	w.Reset(nil)
	pool.Put(w)
	return buf.Bytes(), err
}

// GzipBody compresses body at the entries' level (the shared code when
// level is out of 1-9); nil when that does not make it smaller. For the
// bodies that are never stored (partial answers).
func GzipBody(body []byte, level int) []byte {
	if level < 1 || level > 9 {
		level = DefaultGzipLevel
	}
	z, err := compress(body, level)
	if err != nil || len(z) >= len(body) {
		return nil
	}
	return z
}

// account makes e's codings (plain and gzip, those made so far) count in
// the byte budget of L1 c and returns what they count already; ok is false
// when e is, or was, in L1 already. L1 calls it under the shard lock,
// before it publishes e.
func (e *Entry) account(c *l1) (n int64, ok bool) {
	e.vmu.Lock()
	defer e.vmu.Unlock()
	if e.owner != nil || e.retired {
		return 0, false
	}
	e.owner = c
	return e.codingsSize(), true
}

// codingsSize is what the codings of e's body made so far (plain and gzip)
// hold.
func (e *Entry) codingsSize() int64 { return e.plain.Load().size() + e.gz.Load().size() + e.held }

// retire stops e's variants counting in L1's byte budget and returns the
// bytes they counted; L1 calls it when e leaves, under the shard lock.
func (e *Entry) retire() int64 {
	e.vmu.Lock()
	defer e.vmu.Unlock()
	n := int64(0)
	if e.owner != nil {
		n = e.codingsSize()
	}
	e.owner, e.retired = nil, true
	return n
}

// gunzip decompresses payload, which must hold exactly n bytes of data (one
// gzip member); the CRC and length in the gzip trailer are checked.
func gunzip(payload []byte, n int) ([]byte, error) {
	return gunzipInto(nil, payload, n)
}

// gunzipInto is gunzip into dst's storage when it has room for n bytes.
// internal/inflate decodes the whole member at once, in about half the
// time of klauspost's streaming reader on listing pages; it checks what the reader
// checked (header, stream, CRC, length, nothing after the member).
func gunzipInto(dst, payload []byte, n int) ([]byte, error) {
	return inflate.Gunzip(dst, payload, n)
}
