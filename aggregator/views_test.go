package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/aggregator/mapping"
	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/cache/ratelimit"
	"github.com/dealer-edge/dealer-edge/cache/redistest"
	"github.com/dealer-edge/dealer-edge/publicshape"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
	"github.com/dealer-edge/dealer-edge/upstream/fake/corpus"
)

// TestViewFilteringEqualsService is the property of the cached views: for
// every dealer, every content type and every category, topic and brand
// value of the whole corpus (as written, in other letter cases, unknown,
// and combined), the records the edge cuts from its cached view are the
// ones the content service's own filtering gives under the visibility
// rules (the rules applied to the dealer's whole view, of which the
// records the service matched are kept), in the same order; and a listing
// with a text query (matched by the service) too.
func TestViewFilteringEqualsService(t *testing.T) {
	s := newBenchServer(t, true)
	st := s.settings.Load()
	ctx := context.Background()
	cases := 0
	for _, d := range corpus.DealerIDs() {
		for _, ct := range upstream.ContentTypes {
			values := map[[3]string]bool{{"nope", "", ""}: true, {"", "nope", ""}: true, {"", "", "nope"}: true}
			for _, r := range corpus.Records(d, ct) {
				for _, v := range [][3]string{{r.Category, "", ""}, {"", r.Topic, ""}, {"", "", r.Brand}, {r.Category, "", r.Brand}} {
					if v != ([3]string{}) {
						values[v] = true
						values[[3]string{strings.ToUpper(v[0]), strings.ToUpper(v[1]), strings.ToUpper(v[2])}] = true
					}
				}
			}
			all, err := s.backend.Content(ctx, d, ct, upstream.ContentFilter{Summary: true})
			if err != nil {
				t.Fatal(err)
			}
			vis := mapping.Visible(d, ct, all, mapping.Discovery)
			check := func(f upstream.ContentFilter) {
				t.Helper()
				matched, err := s.backend.Content(ctx, d, ct, f)
				if err != nil {
					t.Fatal(err)
				}
				hit := map[string]bool{}
				for _, m := range matched {
					hit[fmt.Sprint(m.DealerID, "/", m.Slug)] = true
				}
				var want []string
				for _, r := range vis {
					if hit[fmt.Sprint(r.DealerID, "/", r.Slug)] {
						want = append(want, fmt.Sprint(r.ID, ":", r.Slug))
					}
				}
				sel, err := s.listingSelection(ctx, st, d, ct, &params{q: f.Q, category: f.Category, topic: f.Topic, brand: f.Brand})
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for i := 0; i < sel.len(); i++ {
					got = append(got, fmt.Sprint(sel.at(i).ID, ":", sel.at(i).Slug))
				}
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Fatalf("dealer %d %s filter %+v:\nedge    %v\nservice %v", d, ct, f, got, want)
				}
				cases++
			}
			for v := range values {
				check(upstream.ContentFilter{Category: v[0], Topic: v[1], Brand: v[2], Summary: true})
			}
			check(upstream.ContentFilter{Summary: true})
			check(upstream.ContentFilter{Q: "auto", Summary: true})
			check(upstream.ContentFilter{Q: "noleggio lungo", Category: "noleggio", Summary: true})
		}
	}
	if cases < 200 {
		t.Fatalf("only %d filter cases: the corpus has too few values to prove anything", cases)
	}
	t.Logf("%d filter cases", cases)
}

// viewEnv is a Server over the fake services (over loopback, calls
// counted per content type) with its cache in a real redis-server.
type viewEnv struct {
	s     *Server
	h     fasthttp.RequestHandler
	fake  *fake.Server
	cache *cache.Cache
	redis *redistest.Server
}

func newViewEnv(t *testing.T, settings func(*Settings)) *viewEnv {
	t.Helper()
	srv := redistest.Start(t)
	fk := fake.NewServer(fake.Options{})
	addr, err := fk.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fk.Close)
	up, err := upstream.New(upstream.Options{BaseURL: "http://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(up.Close)
	// Budgets far above a loaded machine's stalls: a 100 ms Redis budget
	// marked a live Redis down under load (a purge then failed); the
	// outage case stops the server, which fails at once whatever the budget.
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: 1, DialerRetries: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	c, err := cache.New(cache.Options{Redis: rdb, ServeStaleOn: ServeStaleOn, RedisTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	lim, err := ratelimit.New(ratelimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lim.Close() })
	st := DefaultSettings()
	if settings != nil {
		settings(st)
	}
	s, err := New(Options{Backend: up, Cache: c, Limiter: lim, KeySecret: []byte("view-test-secret-0123456789"), Settings: st})
	if err != nil {
		t.Fatal(err)
	}
	return &viewEnv{s: s, h: s.Handler(), fake: fk, cache: c, redis: srv}
}

// get serves uri for demo-key-alpha (dealer 101) and returns status,
// X-Cache and body.
func (e *viewEnv) get(t *testing.T, uri string) (int, string, []byte) {
	t.Helper()
	var ctx fasthttp.RequestCtx
	ctx.Request.SetRequestURI(uri)
	ctx.Request.Header.Set("X-Api-Key", "demo-key-alpha")
	e.h(&ctx)
	return ctx.Response.StatusCode(), string(ctx.Response.Header.Peek("X-Cache")), append([]byte(nil), ctx.Response.Body()...)
}

func (e *viewEnv) mustGet(t *testing.T, uri string) []byte {
	t.Helper()
	sc, _, body := e.get(t, uri)
	if sc != 200 {
		t.Fatalf("%s: %d %s", uri, sc, body)
	}
	return body
}

func (e *viewEnv) calls(ct string) int64 { return e.fake.Calls(fake.ContentTypeService(ct)) }

// TestViewCache: the content view is a cache entry of its own. Every page,
// filtered listing and hub section of a type is cut from one content call;
// a purge of the dealer drops the view with the responses; a per-type
// policy (cache.content_types) decides its freshness, in both directions;
// concurrent misses of different pages make one call; with Redis dead the
// views keep working from the in-process cache and the service.
func TestViewCache(t *testing.T) {
	t.Run("pages, filters and hub share one call", func(t *testing.T) {
		e := newViewEnv(t, nil)
		e.mustGet(t, "/dealer/content/faq/listing")
		e.mustGet(t, "/dealer/content/faq/listing?page=2&page_size=3")
		e.mustGet(t, "/dealer/content/faq/listing?category=permuta")
		e.mustGet(t, "/dealer/content/news/listing?brand=fiat")
		e.mustGet(t, "/dealer/content/news/listing?page=3")
		e.mustGet(t, "/dealer/content/hub?page_size=4")
		e.mustGet(t, "/dealer/content/hub?page_size=9")
		for _, ct := range upstream.ContentTypes {
			if n := e.calls(ct); n != 1 {
				t.Errorf("%s: %d content calls, want 1", ct, n)
			}
		}
		// A text query still asks the service (once per listing), the
		// visibility comes from the view.
		e.mustGet(t, "/dealer/content/faq/listing?q=permuta")
		if n := e.calls("faq"); n != 2 {
			t.Errorf("faq after a text query: %d calls, want 2", n)
		}
	})

	t.Run("purged with the dealer", func(t *testing.T) {
		e := newViewEnv(t, nil)
		e.mustGet(t, "/dealer/content/glossary/listing")
		e.mustGet(t, "/dealer/content/glossary/listing?page=2")
		if n := e.calls("glossary"); n != 1 {
			t.Fatalf("before the purge: %d calls", n)
		}
		if err := e.cache.PurgeDealer(context.Background(), 101); err != nil {
			t.Fatal(err)
		}
		e.mustGet(t, "/dealer/content/glossary/listing?page=3")
		if n := e.calls("glossary"); n != 2 {
			t.Errorf("a new page after the purge: %d calls, want 2 (the view went with the dealer)", n)
		}
		e.mustGet(t, "/dealer/content/glossary/listing?page=4")
		if n := e.calls("glossary"); n != 2 {
			t.Errorf("another page: %d calls, want 2 (the refilled view)", n)
		}
	})

	t.Run("per-type policy", func(t *testing.T) {
		e := newViewEnv(t, func(s *Settings) {
			s.ContentCache["news"] = cache.Policy{}                           // news: off
			s.ContentCache["faq"] = cache.Policy{TTL: 150 * time.Millisecond} // faq: short
		})
		for _, ct := range []string{"news", "faq", "videos"} {
			e.mustGet(t, "/dealer/content/"+ct+"/listing")
			e.mustGet(t, "/dealer/content/"+ct+"/listing?page=2")
		}
		if a, b, c := e.calls("news"), e.calls("faq"), e.calls("videos"); a != 2 || b != 1 || c != 1 {
			t.Errorf("calls news %d (off: want 2), faq %d (want 1), videos %d (route default: want 1)", a, b, c)
		}
		time.Sleep(200 * time.Millisecond)
		e.mustGet(t, "/dealer/content/faq/listing?page=3")
		e.mustGet(t, "/dealer/content/videos/listing?page=3")
		if b, c := e.calls("faq"), e.calls("videos"); b != 2 || c != 1 {
			t.Errorf("after 200ms: faq %d calls (its 150ms view expired: want 2), videos %d (want 1)", b, c)
		}
		// A type's policy can also turn views on when the route has none.
		e2 := newViewEnv(t, func(s *Settings) {
			delete(s.Cache, RouteContentListing)
			s.ContentCache["podcasts"] = cache.Policy{TTL: time.Minute}
		})
		for i := 1; i <= 3; i++ {
			e2.mustGet(t, fmt.Sprintf("/dealer/content/podcasts/listing?page=%d", i))
			e2.mustGet(t, fmt.Sprintf("/dealer/content/guides/listing?page=%d", i))
		}
		if a, b := e2.calls("podcasts"), e2.calls("guides"); a != 1 || b != 3 {
			t.Errorf("route off, podcasts on: podcasts %d calls (want 1), guides %d (want 3)", a, b)
		}
	})

	t.Run("coalesced", func(t *testing.T) {
		e := newViewEnv(t, nil)
		e.mustGet(t, "/dealer/NOS/listing?page_size=1") // resolve the key
		e.fake.SetLatency(fake.ContentTypeService("videos"), 150*time.Millisecond)
		var wg sync.WaitGroup
		errs := make(chan string, 20)
		for i := 1; i <= 20; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if sc, _, body := e.get(t, fmt.Sprintf("/dealer/content/videos/listing?page=%d&page_size=2", i)); sc != 200 {
					errs <- fmt.Sprintf("page %d: %d %s", i, sc, body)
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := e.calls("videos"); n != 1 {
			t.Errorf("20 concurrent pages of a cold view: %d content calls, want 1", n)
		}
	})

	t.Run("redis down", func(t *testing.T) {
		e := newViewEnv(t, nil)
		e.mustGet(t, "/dealer/content/faq/listing")
		e.redis.Stop()
		for i := 2; i <= 6; i++ {
			e.mustGet(t, fmt.Sprintf("/dealer/content/faq/listing?page=%d&page_size=3", i))
			e.mustGet(t, fmt.Sprintf("/dealer/content/news/listing?page=%d&page_size=3", i))
		}
		if a, b := e.calls("faq"), e.calls("news"); a != 1 || b != 1 {
			t.Errorf("redis down: faq %d calls (view in L1: want 1), news %d (filled without redis: want 1)", a, b)
		}
		e.redis.Restart()
		deadline := time.Now().Add(10 * time.Second)
		for !e.cache.RedisHealthy() && time.Now().Before(deadline) {
			e.mustGet(t, "/dealer/content/faq/listing?page=7")
			time.Sleep(50 * time.Millisecond)
		}
		if !e.cache.RedisHealthy() {
			t.Fatal("redis not back")
		}
		e.mustGet(t, "/dealer/content/glossary/listing")
		if n := e.calls("glossary"); n != 1 {
			t.Errorf("after the restart: glossary %d calls", n)
		}
	})
}

// TestViewListingBody: a listing cut from the view is the listing the
// service's answer gives, byte for byte, for a page of every type with and
// without its filter (the listing with views cached against one with
// content listings uncached, which reads the service every time).
func TestViewListingBody(t *testing.T) {
	cached := newViewEnv(t, nil)
	cold := newViewEnv(t, func(s *Settings) { delete(s.Cache, RouteContentListing) })
	uris := []string{"/dealer/content/hub?page_size=5"}
	for _, ct := range upstream.ContentTypes {
		uris = append(uris, "/dealer/content/"+ct+"/listing", "/dealer/content/"+ct+"/listing?page=2&page_size=7")
	}
	uris = append(uris, "/dealer/content/faq/listing?category=Permuta", "/dealer/content/news/listing?brand=fiat&page_size=50",
		"/dealer/content/guides/listing?topic=noleggio", "/dealer/content/news/listing?q=auto")
	for _, u := range uris {
		a := cached.mustGet(t, u)
		b := cold.mustGet(t, u)
		var la, lb map[string]any
		if json.Unmarshal(a, &la) != nil || json.Unmarshal(b, &lb) != nil {
			t.Fatalf("%s: bodies do not decode", u)
		}
		if string(a) != string(b) {
			t.Errorf("%s: from the view\n%.300s\nfrom the service\n%.300s", u, a, b)
		}
	}
}

// TestViewMemo: a decoded view is reused only for the very entry it was
// decoded from, a new entry of the same view replaces it, and the memo
// stays within its byte budget, dropping other views to make room.
func TestViewMemo(t *testing.T) {
	recs := []upstream.ContentRecord{{ID: 1, Slug: "a", Title: "A"}, {ID: 2, Slug: "b", Title: "B"}}
	body := mapping.AppendView(nil, recs)
	var vm viewMemo
	e1 := cache.NewEntry(body, time.Time{}, cache.Policy{})
	am, err := vm.get(101, "faq", e1)
	if err != nil || len(am.recs) != 2 || am.recs[1].Slug != "b" {
		t.Fatalf("first get: %v %+v", err, am)
	}
	a := am.recs
	if b, _ := vm.get(101, "faq", e1); &b.recs[0] != &a[0] {
		t.Error("the same entry was decoded again")
	}
	e2 := cache.NewEntry(append([]byte(nil), body...), time.Time{}, cache.Policy{})
	if b, _ := vm.get(101, "faq", e2); &b.recs[0] == &a[0] {
		t.Error("a new entry (refill, purge) was served the old decoded view")
	}
	if len(vm.m) != 1 || vm.bytes != viewMemoCost(e2, 2) {
		t.Errorf("one view held: %d entries, %d bytes", len(vm.m), vm.bytes)
	}
	if _, err := vm.get(101, "news", cache.NewEntry([]byte("garbage"), time.Time{}, cache.Policy{})); err == nil {
		t.Error("a damaged view decoded")
	}
	// Fill far past the budget with views of many dealers.
	big := mapping.AppendView(nil, []upstream.ContentRecord{{Slug: "x", BodyText: strings.Repeat("y", 200<<10)}})
	for d := int64(1); d <= 200; d++ {
		if _, err := vm.get(d, "faq", cache.NewEntry(big, time.Time{}, cache.Policy{})); err != nil {
			t.Fatal(err)
		}
		if vm.bytes > viewMemoBytes {
			t.Fatalf("after %d views: %d bytes held, budget %d", d, vm.bytes, viewMemoBytes)
		}
	}
	if n := len(vm.m); n < 10 || n > viewMemoBytes/(3*len(big)) {
		t.Errorf("%d views held of %d bytes each", n, 3*len(big))
	}
}

// TestListingJSONMatchesMarshal: a listing page and a hub written by
// splicing the items encoded once per view (listingPage.appendJSON,
// appendHubJSON) are byte for byte what json.Marshal writes for the same
// ContentListing and ContentHub, for every dealer and type of the corpus,
// pages and page sizes, filters, a text query and deprecation fields, with
// the views cached (items from the memo, twice: encoded, then reused) and
// with views off (items encoded per page).
func TestListingJSONMatchesMarshal(t *testing.T) {
	for _, viewsOn := range []bool{true, false} {
		t.Run(map[bool]string{true: "views cached", false: "views off"}[viewsOn], func(t *testing.T) {
			s := newBenchServer(t, true)
			st := DefaultSettings()
			if !viewsOn {
				for _, ct := range upstream.ContentTypes {
					st.ContentCache[ct] = cache.Policy{}
				}
			}
			if err := s.UpdateSettings(st); err != nil {
				t.Fatal(err)
			}
			live := s.settings.Load()
			ctx := context.Background()
			meta := &publicshape.Meta{Dealer: &publicshape.DealerMeta{ID: 7, Name: `A "quoted" <name> & co`}}
			pages := 0
			for _, d := range corpus.DealerIDs() {
				var hubSections []listingPage
				for _, ct := range upstream.ContentTypes {
					recs := corpus.Records(d, ct)
					ps := []params{{page: 1, pageSize: 5}, {page: 1, pageSize: 1}, {page: 2, pageSize: 3}, {page: 1, pageSize: 100}, {page: 50, pageSize: 20}}
					if len(recs) > 0 {
						ps = append(ps, params{page: 1, pageSize: 20, category: recs[0].Category}, params{page: 1, pageSize: 10, q: "auto"})
					}
					for _, p := range ps {
						for round := range 2 {
							l, err := s.listing(ctx, live, d, ct, p, true)
							if err != nil {
								t.Fatal(err)
							}
							if round == 1 {
								l.Meta = meta
							}
							got, err := l.appendJSON([]byte("prefix"))
							if err != nil {
								t.Fatal(err)
							}
							want := l.ContentListing
							want.Items = l.items()
							wantJSON, err := json.Marshal(want)
							if err != nil {
								t.Fatal(err)
							}
							if string(got) != "prefix"+string(wantJSON) {
								t.Fatalf("dealer %d %s %+v:\n got %.400s\nwant %.400s", d, ct, p, got[len("prefix"):], wantJSON)
							}
							pages++
						}
					}
					l, err := s.listing(ctx, live, d, ct, params{page: 1, pageSize: 5}, false)
					if err != nil {
						t.Fatal(err)
					}
					hubSections = append(hubSections, l)
				}
				for _, shown := range [][]int{{0, 1, 2, 3, 4, 5}, {5, 0, 3}, {2}} {
					got, err := appendHubJSON(nil, meta, hubSections, shown)
					if err != nil {
						t.Fatal(err)
					}
					hub := publicshape.ContentHub{ContentType: "hub", Meta: meta, Sections: map[string]publicshape.ContentListing{}}
					for _, i := range shown {
						sec := hubSections[i].ContentListing
						sec.Items = hubSections[i].items()
						hub.Sections[upstream.ContentTypes[i]] = sec
					}
					want, _ := json.Marshal(hub)
					if string(got) != string(want) {
						t.Fatalf("hub of dealer %d, sections %v:\n got %.400s\nwant %.400s", d, shown, got, want)
					}
				}
			}
			if pages < 100 {
				t.Errorf("only %d pages compared", pages)
			}
		})
	}
}
