package aggregator

import (
	"bytes"
	"context"
	"testing"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestListingScratchKeepsNoString: the vehicle listing fill decodes into a
// pooled scratch whose page cuts its strings from the last fill's memory
// (upstream.VehiclePage.ReuseStrings), so nothing the fill gives out may
// refer to them. Fills of different pages one after the other (page A,
// then B into the same scratch, and so on, through both the pooled fill
// body and a body of its own) each give the body the mapping makes of a
// page decoded fresh, and every body given out earlier is still intact
// after the later fills.
func TestListingScratchKeepsNoString(t *testing.T) {
	s := newBenchServer(t, true)
	up := s.backend.(*upstream.Client)
	ctx := context.Background()
	dealer := corpus.DealerIDs()[0]
	want := func(svc string, p params) []byte {
		pg, err := up.ListVehicles(ctx, dealer, upstream.VehicleQuery{Service: svc, Page: p.page, PageSize: p.pageSize, Q: p.q})
		if err != nil {
			t.Fatal(err)
		}
		l := publicshape.InventoryListing{Service: svc, Page: p.page, PageSize: p.pageSize, Total: pg.Total, HasNext: int64(p.page)*int64(p.pageSize) < int64(pg.Total)}
		b, err := mapping.AppendVehicleListing(nil, &l, pg.Items)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	type fill struct {
		svc string
		p   params
	}
	fills := []fill{
		{"REWIND", params{page: 1, pageSize: 20}},
		{"REWIND", params{page: 2, pageSize: 20}},
		{"NOS", params{page: 1, pageSize: 100}},
		{"REWIND", params{page: 1, pageSize: 5, q: "a"}},
		{"REWIND", params{page: 1, pageSize: 100}},
	}
	type given struct {
		body, want []byte
		what       string
	}
	var out []given
	var pooled [][]byte // each pooled fill's own buffer: kept, never given back
	for round := range 4 {
		for i, f := range fills {
			w := want(f.svc, f.p)
			var dst *[]byte
			if (round+i)%2 == 1 {
				buf := make([]byte, 0, 64)
				pooled = append(pooled, buf)
				dst = &pooled[len(pooled)-1]
			}
			body, err := s.fillInventoryListing(ctx, dealer, f.svc, f.p, dst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, w) {
				t.Fatalf("round %d fill %d (%s %+v): body differs from the fresh page's\ngot  %s\nwant %s", round, i, f.svc, f.p, body, w)
			}
			out = append(out, given{body, w, f.svc})
			for j, g := range out {
				if !bytes.Equal(g.body, g.want) {
					t.Fatalf("round %d fill %d: body %d (%s) given out earlier changed", round, i, j, g.what)
				}
			}
		}
	}
}
