package aggregator

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestForeignIdentifiersInEveryForm closes gaps of the isolation property
// (contracttests/reliability.TestIsolationAcrossDealers), which asks for
// another dealer's items in the form its walk found them only: here, with
// dealer A's key, every sampled vehicle of dealer B is asked for under both
// vehicle services and in upper case, every sampled offer of B with
// leading zeros too, and B's own content slugs of every type, news
// included (a detail is now first decided by A's view, see
// slugNotInView). Each must be A's 404 for an id nobody has, byte for byte
// but the request id, with no call of B's data answered.
func TestForeignIdentifiersInEveryForm(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, false)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + e.fk.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	ctx := context.Background()
	keys := map[int64]string{101: "demo-key-alpha", 102: "demo-key-beta", 103: "demo-key-gamma"}
	const sample = 8
	type probe struct{ path, ghost string }
	var probes = map[int64][]probe{} // by owner
	for _, d := range corpus.DealerIDs() {
		for _, svc := range []string{"REWIND", "NOS"} {
			pg, err := up.ListVehicles(ctx, d, upstream.VehicleQuery{Service: svc, Page: 1, PageSize: sample})
			if err != nil || len(pg.Items) == 0 {
				t.Fatalf("dealer %d %s: %v, %d items", d, svc, err, len(pg.Items))
			}
			for _, v := range pg.Items {
				for _, as := range []string{"REWIND", "NOS"} {
					for _, id := range []string{v.IDAuto, strings.ToUpper(v.IDAuto)} {
						probes[d] = append(probes[d], probe{"/dealer/" + as + "/details?id_auto=" + id, "/dealer/" + as + "/details?id_auto=00000000-0000-4000-8000-000000000000"})
					}
				}
			}
		}
		pg, err := up.ListOffers(ctx, d, upstream.OfferQuery{Page: 1, PageSize: sample})
		if err != nil || len(pg.Items) == 0 {
			t.Fatalf("dealer %d offers: %v", d, err)
		}
		for _, o := range pg.Items {
			for _, id := range []string{strconv.FormatInt(o.IDOfferta, 10), "000" + strconv.FormatInt(o.IDOfferta, 10)} {
				probes[d] = append(probes[d], probe{"/dealer/NLT/details?id_offerta=" + id, "/dealer/NLT/details?id_offerta=987654321987"})
			}
		}
	}
	slugsOf := func(d int64, ct string) map[string]bool {
		m := map[string]bool{}
		for _, r := range corpus.Records(d, ct) {
			if r.DealerID == d || r.DealerID == 0 {
				m[r.Slug] = true
			}
		}
		return m
	}
	checked := 0
	for _, a := range corpus.DealerIDs() {
		for _, b := range corpus.DealerIDs() {
			if a == b {
				continue
			}
			ps := probes[b]
			for _, ct := range upstream.ContentTypes {
				mine, n := slugsOf(a, ct), 0
				for _, r := range corpus.Records(b, ct) {
					if r.DealerID == b && !mine[r.Slug] && n < sample {
						n++
						ps = append(ps, probe{"/dealer/content/" + ct + "/details?slug=" + url.QueryEscape(r.Slug), "/dealer/content/" + ct + "/details?slug=no-such-slug-at-all"})
					}
				}
			}
			for _, p := range ps {
				st, body := e.body(t, p.path, keys[a])
				gst, ghost := e.body(t, p.ghost, keys[a])
				if st != 404 || gst != 404 || withoutRequestID(body) != withoutRequestID(ghost) {
					t.Errorf("dealer %d asks for dealer %d's %s: %d %s\nan id nobody has: %d %s", a, b, p.path, st, body, gst, ghost)
				}
				checked++
			}
		}
	}
	t.Logf("%d foreign identifiers checked", checked)
}
