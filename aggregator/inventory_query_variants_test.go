package aggregator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestInventoryQueryVariantsShareAnEntry: the inventory service matches q
// as the content service does (every whitespace-separated word,
// case-insensitively, a substring of make, model or trim: upstream's
// package doc), so the letter case, order and repetition of q's words
// change nothing in a listing, which does not echo q. Every such variant
// is one cache entry and one inventory call; before, each was a miss of
// its own, so a key could make one inventory call per request from a
// single query (2^n case variants of an n-letter word) and fill the cache
// with copies of one page.
func TestInventoryQueryVariantsShareAnEntry(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, false)
	for _, svc := range []string{"REWIND", "NLT"} {
		t.Run(svc, func(t *testing.T) {
			variants := []string{"fiat panda", "Fiat Panda", "PANDA fiat", "panda  fiat fiat", "pan panda FIAT"}
			before := e.fk.Calls(upstream.SvcInventory)
			var first string
			for _, q := range variants {
				uri := "/dealer/" + svc + "/listing?page_size=7&q=" + url.QueryEscape(q)
				st, body := e.body(t, uri, "demo-key-alpha")
				if st != 200 {
					t.Fatalf("%s: %d %s", uri, st, body)
				}
				if first == "" {
					if strings.Contains(body, `"total":0`) {
						t.Fatalf("%s: no items; the test needs a query that matches: %s", uri, body)
					}
					first = body
				} else if body != first {
					t.Fatalf("%s: another body than %q's:\n%s\n%s", uri, variants[0], body, first)
				}
			}
			if n := e.fk.Calls(upstream.SvcInventory) - before; n != 1 {
				t.Fatalf("%d inventory calls for %d variants of one query; want 1 (one cache entry)", n, len(variants))
			}
		})
	}
}

// body requests uri with key from 192.0.2.1 and returns the status and
// body.
func (e *indexEdge) body(t *testing.T, uri, key string) (int, string) {
	t.Helper()
	ctx := e.request(uri, key)
	return ctx.Response.StatusCode(), string(ctx.Response.Body())
}

// request sends uri with key (X-Api-Key) from 192.0.2.1 through the
// edge's handler and returns the answered context.
func (e *indexEdge) request(uri, key string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	req.Header.Set("X-Api-Key", key)
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 40000}, nil)
	e.s.Handler()(ctx)
	return ctx
}

// TestNormalizeQueryKeepsInventoryMatches is TestNormalizeQueryKeepsMatches
// for the inventory service: for every dealer and service, queries made of
// the words of its vehicles' and offers' make, model and trim (parts of
// words, words that match nothing) and their variants (letter case, order,
// repeated words, a part of a word added, whitespace) ask the service for
// the same items in the same order as the canonical form the edge now
// sends.
func TestNormalizeQueryKeepsInventoryMatches(t *testing.T) {
	e := newIndexEdge(t, fake.Options{}, nil, false)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + e.fk.Addr()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(16, 4))
	ids := func(dealer int64, svc, q string) string {
		t.Helper()
		var b strings.Builder
		if svc == "NLT" {
			pg, err := up.ListOffers(ctx, dealer, upstream.OfferQuery{Page: 1, PageSize: 1000, Q: q})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range pg.Items {
				fmt.Fprint(&b, o.IDOfferta, ",")
			}
			return b.String()
		}
		pg, err := up.ListVehicles(ctx, dealer, upstream.VehicleQuery{Service: svc, Page: 1, PageSize: 1000, Q: q})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range pg.Items {
			b.WriteString(v.IDAuto + ",")
		}
		return b.String()
	}
	queries, variants, nonEmpty := 0, 0, 0
	for _, dealer := range corpus.DealerIDs() {
		for _, svc := range []string{"REWIND", "NOS", "NLT"} {
			var vocab []string
			if svc == "NLT" {
				pg, err := up.ListOffers(ctx, dealer, upstream.OfferQuery{Page: 1, PageSize: 1000})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range pg.Items {
					vocab = append(vocab, strings.Fields(o.Make+" "+o.Model+" "+o.Version)...)
				}
			} else {
				pg, err := up.ListVehicles(ctx, dealer, upstream.VehicleQuery{Service: svc, Page: 1, PageSize: 1000})
				if err != nil {
					t.Fatal(err)
				}
				for _, v := range pg.Items {
					vocab = append(vocab, strings.Fields(v.Make+" "+v.Model+" "+v.Trim)...)
				}
			}
			if len(vocab) == 0 {
				t.Fatalf("dealer %d %s: no items", dealer, svc)
			}
			for range 25 {
				base := genQuery(rng, vocab)
				canon := normalizeQuery(normalizeSpace([]byte(base)))
				want := ids(dealer, svc, canon)
				if want != "" {
					nonEmpty++
				}
				queries++
				for range 6 {
					v := variantOf(rng, base)
					variants++
					if got := ids(dealer, svc, v); got != want {
						t.Fatalf("dealer %d %s: %q matches %s, its canonical form %q matches %s", dealer, svc, v, got, canon, want)
					}
				}
			}
		}
	}
	t.Logf("%d queries (%d matching something), %d variants", queries, nonEmpty, variants)
}
