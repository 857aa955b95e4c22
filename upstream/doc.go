// Package upstream holds typed clients of the internal services that
// dealer-edge sits in front of, and the written contract of those services.
//
// The edge owns none of these services. This comment is the contract the
// edge expects; upstream/fake implements it for demos, tests and benchmarks.
//
// # Transport
//
// HTTP/1.1 + JSON, GET only. Every service is reached under one base URL
// (Options.BaseURL) with a per-service path prefix, so one process (the fake)
// or five real services behind an internal gateway both fit. The edge sends
// on every call:
//
//	X-Request-ID: <the public request id>
//	traceparent:  <W3C trace context, when the client sent one>
//	Accept:       application/json
//
// Path segments are percent-encoded (every byte but RFC 3986 unreserved
// characters), as are query values; empty query parameters are omitted.
//
// Status codes: 200 with the JSON body below; 404 when the record does not
// exist (mapped to ErrNotFound, which does not count against breakers); any
// other status, a timeout or a connection error is a failure (ErrUnavailable).
// A 400 (malformed parameters) is a failure too: the edge validates before
// it calls, so a 400 means the two sides disagree. Error bodies are
// {"error": "<message>"} and are not read by the client.
//
// A body may be at most 32 MiB (the largest answers, a content type's
// summary corpus, are a few hundred KiB); a longer one is a failure. A
// body is plain JSON: a Content-Encoding the edge did not ask for is not
// decoded, and the answer is a failure. The edge retries a call once, within
// its deadline, only when the connection ended before any byte of an answer
// (a keep-alive connection the service had closed); a partial, malformed or
// late answer is not retried. A plain TCP keep-alive connection is looked
// at before it is reused: one that holds bytes nobody asked for (a
// "408 Request Timeout" a server sends on an idle connection, a second
// answer to one request) or its service's EOF is dropped and the call made
// on another, so a stale answer is never read as the next call's
// (idleguard.go; TLS connections are not looked at).
//
// # Client behaviour
//
// Each service has its own connection pool, timeout (Options.Timeouts;
// the deadline of a call is the earlier of that timeout and the caller's
// context deadline) and circuit breaker (Options.Breaker). A 404 counts as
// a success for the breaker; a call abandoned by its caller (context
// cancelled, or the caller's own deadline reached first) counts neither
// way. An open breaker refuses calls at once with an error wrapping
// ErrUnavailable and ErrCircuitOpen. The content service has a breaker per
// content type (ContentBreakerStates), so that one type's failures do not
// refuse the others' calls; its state in BreakerStates is the worst of
// them.
//
// # dealers
//
//	GET /dealers/v1/keys/{sha256-hex-of-key}   -> KeyRecord (404: unknown key)
//	GET /dealers/v1/dealers/{dealer_id}        -> Dealer    (404: dealer gone)
//
// The dealers service owns the key store and indexes it by the unkeyed
// SHA-256 of each key: it issues the keys (random, high-entropy), so the
// hash cannot be reversed by guessing, and the edge needs no secret shared
// with it. The edge itself keeps keys only under its own keyed hash
// (HMAC-SHA-256 with auth.key_hash_secret) and never logs either form. A
// service that would rather not see even the SHA-256 in its access logs
// can take it from a header; the path form is kept for its simplicity.
//
// # dealers: the key index feed
//
// The edge keeps a local index of every key so that an unknown key costs no
// call at all. Two endpoints feed it; both are paged and GET only:
//
//	GET /dealers/v1/key-index?after=&limit=            -> KeySnapshotPage
//	GET /dealers/v1/key-index/changes?cursor=&limit=   -> KeyChangesPage (410: cursor expired)
//
// The snapshot lists every key (active, revoked, expired) as a
// KeyIndexEntry, in ascending order of key_sha256; after is the key_sha256
// of the last entry the caller has ("" or absent: from the start), next is
// the after of the following page and "" on the last one. limit defaults to
// 1000 and is at most 10000 (a larger value is a 400). Pages are not one
// consistent read: every page carries cursor, a change-feed position no
// later than the moment the page was read, and total, the number of keys
// at that moment (a sizing hint for the caller). The caller keeps the cursor of
// the FIRST page and, once the last page is in, reads the changes from it:
// a key that changed while the snapshot was being paged is replayed there,
// and replaying a change is harmless (every change is the key's whole new
// state, an upsert).
//
// The change feed answers the changes after cursor, oldest first, at most
// limit (default 1000, at most 10000); more is true when further changes
// wait, and cursor (always present) is where the next call continues. An
// entry with status "revoked" or "deleted" removes the key from the set of
// valid keys; any other entry replaces the key's state. Expiry is data
// (expires_at), not a change: the caller compares it with its clock.
//
// A cursor is opaque to the edge. It names a position in the service's
// durable change log, so it stays valid across restarts of the service and
// of the edge (an edge may keep it; this one does not persist its index and
// loads a snapshot at start). The service keeps at least 24 hours of
// changes. A cursor it cannot serve from (older than the log, from a log
// that was reset, or not one of its cursors) is answered 410 Gone; the edge
// then loads a full snapshot again. A 410 is not a failure for the breaker.
// The fake keeps its log in memory: a restarted fake has a new epoch in its
// cursors and answers 410 to every cursor of the old one.
//
// # inventory
//
//	GET /inventory/v1/dealers/{dealer_id}/vehicles?service=&page=&page_size=&q=&catalog_type=&upfit=&view=
//	    -> VehiclePage; filters and pagination are applied by the service;
//	       service (REWIND or NOS) is required; q matches every
//	       whitespace-separated word, case-insensitively, against make,
//	       model or trim; upfit is an upfit slug the vehicle has, as
//	       the edge publishes it: the canonical form of the stored slug
//	       (publicshape.CanonicalSlug; altro for the label Altro,
//	       whatever its code; the label's canonical form when the slug
//	       is empty), so that a published slug filters;
//	       view=summary leaves out what only a detail shows (see
//	       VehicleSummary: about a fifth of the bytes), view=full or none
//	       sends whole records. The edge's listings ask for the summary.
//	GET /inventory/v1/dealers/{dealer_id}/vehicles/{id_auto}?service=  -> Vehicle (404)
//	GET /inventory/v1/dealers/{dealer_id}/offers?page=&page_size=&q=    -> OfferPage
//	GET /inventory/v1/dealers/{dealer_id}/offers/{id_offerta}           -> Offer (404)
//
// page and page_size default to 1 and 20 (page_size at most 1000); total
// counts every match; a page past the end has no items. Listings are
// ordered by the service (newest update first, ties by id). A detail is 404
// when the id belongs to another dealer or, with service given, to another
// service; id_auto is matched case-insensitively. An unknown dealer is 404
// on every inventory path.
//
// # catalog
//
//	GET /catalog/v1/versions/{version_code}/equipment -> Equipment (404)
//
// Equipment lists the standard equipment and the whole optional and package
// catalogue of the exact version; which optionals and packages a vehicle
// really has is in Vehicle.ConfirmedOptionals / ConfirmedPackages.
//
// # media
//
//	GET /media/v1/dealers/{dealer_id}/vehicles/{id_auto} -> Media (both nil when none)
//
// 404 when the vehicle is not the dealer's.
//
// # content
//
//	GET /content/v1/dealers/{dealer_id}/{type}?q=&category=&topic=&brand=&view=
//	    -> {"items": [ContentRecord...]}   (404: unknown dealer or type)
//
// view=summary sends each record as ContentSummary makes it (no transcript,
// rendered body or payloads; body_text cut after SummaryBodyNonSpace
// non-space characters: enough for any listing preview, about a third of
// the bytes); view=full or none sends whole records; any other view is a
// 400. Filters still match the whole text: q matches when every
// whitespace-separated word occurs, case-insensitively, in the title, the
// excerpt or the body; category, topic and brand match when the record's
// own field equals the value case-insensitively (Unicode simple folding,
// as Go's strings.EqualFold) once both are trimmed and each run of white
// space in them is one space (upstream.FieldMatches: "Alfa\u00a0Romeo"
// matches "alfa romeo", so every value the edge publishes filters). The edge applies that same category, topic
// and brand rule to its cached views (aggregator/mapping.Match), so it asks
// the service only for q. The edge's listings, hub and search ask for the
// summary; a detail asks for whole records.
//
// The content service returns the dealer's raw view of one content type:
// global records, the dealer's own records, its overrides of global records
// and records it has hidden, all of them, unpaginated. Public visibility
// (overrides, hidden items, news provenance), ordering and pagination are the
// edge's rules.
//
// # What is internal
//
// Records carry fields that must never reach a dealer: source identifiers,
// catalog lookup cascades, raw technical-data directories, browser-side
// secrets, rendering/SEO payloads, raw version optionals, hidden records.
// They are declared on the types here (marked "internal only") so the fakes
// can emit them and tests can prove the public mapping drops them. The
// Client never builds them: the answers of the miss path are decoded field
// by field and skip them (decode.go), the others skip the large payloads
// (Opaque, Markup, RawOptionals).
package upstream
