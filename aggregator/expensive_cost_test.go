package aggregator

import (
	"net/url"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// TestExpensiveListingsCostOneCall holds the decision the README states
// under "Rate limiting" (what the largest requests cost): an inventory
// listing at the largest page size, the deepest page, a q of the longest
// length (200 characters, several words) and filters that match nothing
// each cost the inventory service one call on a miss, as the smallest
// listing does; so they are charged one token like it, and only search and
// hub, which fan out, cost more.
func TestExpensiveListingsCostOneCall(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, false)
	longQ := strings.Repeat("fiat panda ", 17) + "abcdefghijklm"
	if n := len([]rune(longQ)); n != 200 {
		t.Fatalf("q of %d characters", n)
	}
	for _, uri := range []string{
		"/dealer/REWIND/listing?page_size=1",
		"/dealer/REWIND/listing?page_size=100",
		"/dealer/NOS/listing?page=2147483647&page_size=100",
		"/dealer/REWIND/listing?page_size=100&q=" + url.QueryEscape(longQ),
		"/dealer/REWIND/listing?page_size=100&q=zzzzqqq",
		"/dealer/REWIND/listing?page_size=100&catalog_type=vind&professional_upfit=no-such-upfit",
		"/dealer/NLT/listing?page_size=100&q=" + url.QueryEscape(longQ),
	} {
		before := e.fk.Calls(upstream.SvcInventory)
		if st, body := e.body(t, uri, "demo-key-alpha"); st != 200 {
			t.Fatalf("%s: %d %.300s", uri, st, body)
		}
		if calls := e.fk.Calls(upstream.SvcInventory) - before; calls != 1 {
			t.Errorf("%s: %d inventory calls on a miss, want 1", uri, calls)
		}
	}
}
