package fake

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// DefaultKeyLogRetention is how many changes the fake's key change log
// keeps when Options.KeyLogRetention is zero; an older cursor is answered
// 410.
const DefaultKeyLogRetention = 100000

// keyStore is the dealers service's mutable key table and its change log.
// Lookups are map accesses by the SHA-256 hex of the key: a client cannot
// choose a key with a given hash, so the timing of the access tells it
// nothing about stored keys.
type keyStore struct {
	mu     sync.RWMutex
	byHash map[string]*storedKey
	sorted []string // every hash, ascending: the snapshot order
	// inOrder holds the entry JSON of each hash of sorted, at the same
	// index: a snapshot page is spliced without a map access or a pointer
	// chase per key (after loadDefaults the initial keys' JSON is one
	// contiguous block in this order, so a page is read sequentially).
	inOrder [][]byte
	epoch   string
	seq     uint64 // sequence of the last change
	log     []keyChange
	keep    int
	now     func() time.Time
}

type storedKey struct {
	id    string
	entry upstream.KeyIndexEntry
	json  []byte // the KeyRecord, as GET keys/{hash} answers it
	// entryJSON is entry as a snapshot page lists it: pages are spliced
	// from it, so that serving a million-key snapshot costs the fake
	// little next to the edge's load that it is used to measure.
	entryJSON []byte
}

type keyChange struct {
	seq   uint64
	entry upstream.KeyIndexEntry
}

func newKeyStore(keep int) *keyStore {
	var e [4]byte
	_, _ = rand.Read(e[:])
	if keep <= 0 {
		keep = DefaultKeyLogRetention
	}
	return &keyStore{byHash: map[string]*storedKey{}, epoch: hex.EncodeToString(e[:]), keep: keep, now: time.Now}
}

// put stores k under hash without logging a change (initial data).
func (ks *keyStore) load(hash string, rec upstream.KeyRecord) error {
	sk, err := newStoredKey(hash, rec)
	if err != nil {
		return err
	}
	if _, ok := ks.byHash[hash]; !ok {
		ks.sorted = append(ks.sorted, hash)
	}
	ks.byHash[hash] = sk
	return nil
}

func newStoredKey(hash string, rec upstream.KeyRecord) (*storedKey, error) {
	b, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	sk := &storedKey{id: rec.KeyID, json: b, entry: upstream.KeyIndexEntry{
		KeySHA256: hash, DealerID: rec.DealerID, Status: rec.Status, Plan: rec.Plan, ExpiresAt: rec.ExpiresAt,
	}}
	if sk.entryJSON, err = json.Marshal(sk.entry); err != nil {
		return nil, err
	}
	return sk, nil
}

// change stores rec under hash and appends it to the change log.
func (ks *keyStore) change(hash string, rec upstream.KeyRecord) error {
	sk, err := newStoredKey(hash, rec)
	if err != nil {
		return err
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	i, found := slices.BinarySearch(ks.sorted, hash)
	if found {
		ks.inOrder[i] = sk.entryJSON
	} else {
		ks.sorted = slices.Insert(ks.sorted, i, hash)
		ks.inOrder = slices.Insert(ks.inOrder, i, sk.entryJSON)
	}
	ks.byHash[hash] = sk
	ks.seq++
	ks.log = append(ks.log, keyChange{seq: ks.seq, entry: sk.entry})
	if len(ks.log) > ks.keep {
		ks.log = slices.Delete(ks.log, 0, len(ks.log)-ks.keep)
	}
	return nil
}

func (ks *keyStore) get(hash string) []byte {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	if sk := ks.byHash[hash]; sk != nil {
		return sk.json
	}
	return nil
}

func (ks *keyStore) record(hash string) (upstream.KeyRecord, bool) {
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	sk := ks.byHash[hash]
	if sk == nil {
		return upstream.KeyRecord{}, false
	}
	e := sk.entry
	return upstream.KeyRecord{KeyID: sk.id, DealerID: e.DealerID, Status: e.Status, Plan: e.Plan, ExpiresAt: e.ExpiresAt}, true
}

func (ks *keyStore) cursorLocked() string {
	return ks.epoch + "-" + strconv.FormatUint(ks.seq, 10)
}

func pageLimit(args *fasthttp.Args) (int, bool) {
	v := args.Peek("limit")
	if len(v) == 0 {
		return upstream.DefaultKeyPageSize, true
	}
	n, err := strconv.Atoi(string(v))
	if err != nil || n < 1 || n > upstream.MaxKeyPageSize {
		return 0, false
	}
	return n, true
}

// snapshot answers GET /dealers/v1/key-index.
func (ks *keyStore) snapshot(ctx *fasthttp.RequestCtx) {
	limit, ok := pageLimit(ctx.QueryArgs())
	if !ok {
		badRequest(ctx, "limit: 1 to 10000")
		return
	}
	after := strings.ToLower(string(ctx.QueryArgs().Peek("after")))
	ks.mu.RLock()
	i := 0
	if after != "" {
		i, _ = slices.BinarySearch(ks.sorted, after)
		if i < len(ks.sorted) && ks.sorted[i] == after {
			i++
		}
	}
	end := min(i+limit, len(ks.sorted))
	// The page as json.Marshal writes a KeySnapshotPage (items, next,
	// cursor, total), spliced from the entries' stored JSON into the
	// response's own (pooled) body buffer: a fresh 1 MB buffer per page
	// would cost more in page faults than the copying itself.
	resp := &ctx.Response
	resp.SetStatusCode(fasthttp.StatusOK)
	resp.Header.SetContentType("application/json")
	resp.ResetBody()
	resp.AppendBodyString(`{"items":[`)
	for j, e := range ks.inOrder[i:end] {
		if j > 0 {
			resp.AppendBodyString(",")
		}
		resp.AppendBody(e)
	}
	next := ""
	if end < len(ks.sorted) {
		next = ks.sorted[end-1]
	}
	var tail [160]byte
	b := append(tail[:0], `],"next":`...)
	b = strconv.AppendQuote(b, next)
	b = append(b, `,"cursor":`...)
	b = strconv.AppendQuote(b, ks.cursorLocked())
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(len(ks.sorted)), 10)
	b = append(b, '}')
	resp.AppendBody(b)
	ks.mu.RUnlock()
}

// changes answers GET /dealers/v1/key-index/changes.
func (ks *keyStore) changes(ctx *fasthttp.RequestCtx) {
	limit, ok := pageLimit(ctx.QueryArgs())
	if !ok {
		badRequest(ctx, "limit: 1 to 10000")
		return
	}
	cur := string(ctx.QueryArgs().Peek("cursor"))
	ep, seqStr, found := strings.Cut(cur, "-")
	seq, err := strconv.ParseUint(seqStr, 10, 64)
	ks.mu.RLock()
	defer ks.mu.RUnlock()
	oldest := ks.seq + 1 // the first sequence the log still holds
	if len(ks.log) > 0 {
		oldest = ks.log[0].seq
	}
	if !found || err != nil || ep != ks.epoch || seq > ks.seq || seq+1 < oldest {
		writeError(ctx, fasthttp.StatusGone, "cursor expired: load a snapshot")
		return
	}
	// The log holds consecutive sequences: the change after seq is at
	// index seq+1-oldest.
	start := int(seq + 1 - oldest)
	if len(ks.log) == 0 {
		start = 0
	}
	end := min(start+limit, len(ks.log))
	page := upstream.KeyChangesPage{Items: make([]upstream.KeyIndexEntry, 0, end-start), Cursor: cur, More: end < len(ks.log)}
	for _, c := range ks.log[start:end] {
		page.Items = append(page.Items, c.entry)
		page.Cursor = ks.epoch + "-" + strconv.FormatUint(c.seq, 10)
	}
	b, err := json.Marshal(page)
	if err != nil {
		writeError(ctx, fasthttp.StatusInternalServerError, "encode")
		return
	}
	writeJSON(ctx, b)
}

// KeyLookupsName is the entry of GET /_control/calls that counts per-key
// lookups (GET /dealers/v1/keys/{hash}).
const KeyLookupsName = "dealers:key_lookups"

// KeyLookups returns the number of per-key lookups (GET
// /dealers/v1/keys/{hash}) the dealers service has received, injected
// faults included. They are counted among Calls("dealers") too.
func (s *Server) KeyLookups() int64 { return s.keyLookups.Load() }

// AddKey makes the dealers service know the raw key as an active key of
// dealer with plan (PlanDefault when ""), expiring at expires (nil:
// never). An existing key is replaced. The change appears in the key
// change feed.
func (s *Server) AddKey(raw string, dealer int64, plan string, expires *time.Time) error {
	if raw == "" || dealer <= 0 {
		return fmt.Errorf("fake: AddKey: key and a positive dealer are required")
	}
	if plan == "" {
		plan = PlanDefault
	}
	h := HashKey(raw)
	id := "key_rt_" + h[:12]
	if rec, ok := s.keys.record(h); ok {
		id = rec.KeyID
	}
	return s.keys.change(h, upstream.KeyRecord{KeyID: id, DealerID: dealer, Status: upstream.KeyActive, Plan: plan, ExpiresAt: expires})
}

// RevokeKey marks a known key revoked; it reports whether the key was
// known.
func (s *Server) RevokeKey(raw string) bool {
	h := HashKey(raw)
	rec, ok := s.keys.record(h)
	if !ok {
		return false
	}
	rec.Status = upstream.KeyRevoked
	return s.keys.change(h, rec) == nil
}

// ExpireKey sets a known key's expiry to now; it reports whether the key
// was known.
func (s *Server) ExpireKey(raw string) bool {
	h := HashKey(raw)
	rec, ok := s.keys.record(h)
	if !ok {
		return false
	}
	t := s.keys.now().UTC().Truncate(time.Second)
	rec.ExpiresAt = &t
	return s.keys.change(h, rec) == nil
}

// ResetKeyLog forgets the key change log and starts a new epoch, as a
// restarted dealers service without a durable log would: every cursor
// handed out before is answered 410.
func (s *Server) ResetKeyLog() {
	ks := s.keys
	var e [4]byte
	_, _ = rand.Read(e[:])
	ks.mu.Lock()
	ks.epoch = hex.EncodeToString(e[:])
	ks.seq = 0
	ks.log = nil
	ks.mu.Unlock()
}

// controlKeys answers POST /_control/keys?action=add|revoke|expire&key=RAW
// [&dealer=ID&plan=P&expires=RFC3339] and POST /_control/keys?action=reset_log.
func (s *Server) controlKeys(a *fasthttp.Args) error {
	raw := string(a.Peek("key"))
	switch act := string(a.Peek("action")); act {
	case "add":
		dealer, err := strconv.ParseInt(string(a.Peek("dealer")), 10, 64)
		if err != nil {
			return fmt.Errorf("dealer: %w", err)
		}
		var exp *time.Time
		if v := a.Peek("expires"); len(v) > 0 {
			t, err := time.Parse(time.RFC3339, string(v))
			if err != nil {
				return fmt.Errorf("expires: %w", err)
			}
			exp = &t
		}
		return s.AddKey(raw, dealer, string(a.Peek("plan")), exp)
	case "revoke", "expire":
		ok := false
		if act == "revoke" {
			ok = s.RevokeKey(raw)
		} else {
			ok = s.ExpireKey(raw)
		}
		if !ok {
			return fmt.Errorf("unknown key")
		}
		return nil
	case "reset_log":
		s.ResetKeyLog()
		return nil
	default:
		return fmt.Errorf("action: add, revoke, expire or reset_log")
	}
}
