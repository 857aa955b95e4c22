package upstream

import (
	"context"
	"errors"
	"time"
)

// ErrCursorExpired reports that the dealers service no longer holds the
// changes after a key-index cursor (answer 410): the cursor is older than
// the service's change log, or from a log that was reset. The caller must
// load a full snapshot again. It is not a service failure and does not trip
// the breaker.
var ErrCursorExpired = errors.New("upstream: key index cursor expired")

// Key statuses of KeyRecord and KeyIndexEntry.
const (
	KeyActive  = "active"
	KeyRevoked = "revoked"
	// KeyDeleted appears in the change feed only: the key no longer exists.
	KeyDeleted = "deleted"
)

// KeyIndexEntry is one key of the key index: its lowercase hex SHA-256 and
// the state the edge needs to answer a request with it.
type KeyIndexEntry struct {
	KeySHA256 string     `json:"key_sha256"`
	DealerID  int64      `json:"dealer_id"`
	Status    string     `json:"status"` // KeyActive, KeyRevoked, KeyDeleted (changes only)
	Plan      string     `json:"plan"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// KeySnapshotPage is one page of the key index snapshot.
type KeySnapshotPage struct {
	Items []KeyIndexEntry `json:"items"`
	// Next is the after value of the next page; "" on the last page.
	Next string `json:"next"`
	// Cursor is the change-feed position the snapshot is consistent
	// with, or older (see the package doc).
	Cursor string `json:"cursor"`
	// Total is the number of keys the snapshot holds when the page is
	// read, a sizing hint.
	Total int `json:"total"`
}

// KeyChangesPage is one page of the key change feed.
type KeyChangesPage struct {
	Items []KeyIndexEntry `json:"items"`
	// Cursor is where the next call continues.
	Cursor string `json:"cursor"`
	// More is true when changes remain after Cursor.
	More bool `json:"more"`
}

// Page size bounds of the key index endpoints.
const (
	DefaultKeyPageSize = 1000
	MaxKeyPageSize     = 10000
)

// KeySnapshot returns the snapshot page of the key index after the key hash
// after ("" for the first page), at most limit entries (0: the service's
// default).
func (c *Client) KeySnapshot(ctx context.Context, after string, limit int) (KeySnapshotPage, error) {
	var out KeySnapshotPage
	b := c.begin("/dealers/v1/key-index")
	n := len(b)
	b = appendParam(b, "after", after)
	b = appendIntParam(b, "limit", limit)
	return out, c.get(ctx, c.dealers, firstParam(b, n), &out)
}

// KeyChanges returns the changes of the key index after cursor, at most
// limit (0: the service's default). An error wrapping ErrCursorExpired
// means the caller must load a snapshot again.
func (c *Client) KeyChanges(ctx context.Context, cursor string, limit int) (KeyChangesPage, error) {
	var out KeyChangesPage
	b := c.begin("/dealers/v1/key-index/changes")
	n := len(b)
	b = appendParam(b, "cursor", cursor)
	b = appendIntParam(b, "limit", limit)
	err := c.get(ctx, c.dealers, firstParam(b, n), &out)
	return out, err
}

// firstParam turns the '&' that starts the query (at b[n], if any) into
// '?'.
func firstParam(b []byte, n int) []byte {
	if len(b) > n {
		b[n] = '?'
	}
	return b
}
