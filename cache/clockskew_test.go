package cache

import (
	"testing"
	"time"
)

// TestSkewedWriterDoesNotStretchFreshness: an instance whose clock runs
// ahead of the fleet's (a VM resumed without NTP catching up, a container
// host off by a minute) fills an entry; another instance reads it from
// Redis. The entry's times are absolute readings of the writer's clock,
// so the reader judges it fresh for TTL plus the skew and sends
// Cache-Control: max-age of more than the route's TTL: a client (and the
// edge itself) keeps an answer longer than any policy allows.
func TestSkewedWriterDoesNotStretchFreshness(t *testing.T) {
	_, rc := newMiniRedis(t)
	base := time.Now()
	const skew = 5 * time.Minute
	ahead := newCache(t, Options{Redis: rc, Now: func() time.Time { return base.Add(skew) }})
	_, rc2 := rc, newClient(t, rc.Options().Addr)
	reader := newCache(t, Options{Redis: rc2, Now: func() time.Time { return base }})
	pol := Policy{TTL: 30 * time.Second, StaleWhileRevalidate: 30 * time.Second, StaleIfError: 10 * time.Minute}
	mustGet(t, ahead, 7, "/x", pol, newFiller("v1").fill)
	e, res := mustGet(t, reader, 7, "/x", pol, newFiller("v2").fill)
	if got := pol.MaxAge(e, base); got > int(pol.TTL/time.Second) {
		t.Errorf("reader: %v %q max-age=%d, the route's ttl is %v", res, e.Body(), got, pol.TTL)
	}
}
