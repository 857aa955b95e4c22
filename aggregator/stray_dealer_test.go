package aggregator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// strayDealers is a backend whose dealers service answers every profile
// request with another dealer's profile (the asked id plus one).
type strayDealers struct{ Backend }

func (b strayDealers) Dealer(ctx context.Context, id int64) (upstream.Dealer, error) {
	d, err := b.Backend.Dealer(ctx, id+1)
	return d, err
}

// TestStrayDealerProfileIs503: a dealers service answering a key's dealer
// profile with another dealer's is the service failing, as a listing with
// another dealer's record is: 503 service_unavailable, on the key index's
// path and on the lookup's. Before 2026-11-29 both were 500 internal_error
// (found by FuzzUpstreamAnswer).
func TestStrayDealerProfileIs503(t *testing.T) {
	for _, c := range []struct {
		name  string
		index bool
	}{{"key index", true}, {"lookup", false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newIndexEdge(t, fake.Options{}, nil, c.index, func(o *Options) { o.Backend = strayDealers{o.Backend} })
			if c.index {
				e.sync(t)
			}
			st, body := e.reviewBody("/dealer/content/faq/listing", "demo-key-alpha")
			var p struct {
				Status int    `json:"status"`
				Code   string `json:"code"`
			}
			if err := json.Unmarshal(body, &p); err != nil || st != 503 || p.Code != codeUnavailable {
				t.Fatalf("%d %s, want 503 %s", st, body, codeUnavailable)
			}
		})
	}
}
