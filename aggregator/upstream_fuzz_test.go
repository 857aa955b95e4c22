package aggregator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/contracttests/check"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// upstreamAnswerKinds are the upstream answers FuzzUpstreamAnswer replaces
// with fuzzed bytes: the upstream path they answer (after the fake's
// address) and the public request that reads them. %s in a request is the
// fake's record the route needs (a vehicle's id_auto, an offer's
// id_offerta, a content item's slug).
var upstreamAnswerKinds = []struct {
	name     string
	upstream *regexp.Regexp
	request  string
}{
	{"vehicle listing", regexp.MustCompile(`^/inventory/v1/dealers/\d+/vehicles$`), "/dealer/REWIND/listing?page_size=20"},
	{"offer listing", regexp.MustCompile(`^/inventory/v1/dealers/\d+/offers$`), "/dealer/NLT/listing?page_size=20"},
	{"vehicle record", regexp.MustCompile(`^/inventory/v1/dealers/\d+/vehicles/[^/]+$`), "/dealer/REWIND/details?id_auto=%s"},
	{"vehicle media", regexp.MustCompile(`^/media/v1/dealers/\d+/vehicles/[^/]+$`), "/dealer/REWIND/details?id_auto=%s"},
	{"version equipment", regexp.MustCompile(`^/catalog/v1/versions/[^/]+/equipment$`), "/dealer/REWIND/details?id_auto=%s"},
	{"offer record", regexp.MustCompile(`^/inventory/v1/dealers/\d+/offers/\d+$`), "/dealer/NLT/details?id_offerta=%s"},
	{"content listing", regexp.MustCompile(`^/content/v1/dealers/\d+/faq$`), "/dealer/content/faq/listing?page_size=10"},
	{"content details", regexp.MustCompile(`^/content/v1/dealers/\d+/faq$`), "/dealer/content/faq/details?slug=%s"},
	{"content hub", regexp.MustCompile(`^/content/v1/dealers/\d+/[a-z]+$`), "/dealer/content/hub"},
	{"content search", regexp.MustCompile(`^/content/v1/dealers/\d+/[a-z]+$`), "/dealer/content/search?q=auto"},
	{"key record", regexp.MustCompile(`^/dealers/v1/keys/[^/]+$`), "/dealer/REWIND/listing?page_size=20"},
	{"dealer record", regexp.MustCompile(`^/dealers/v1/dealers/\d+$`), "/dealer/REWIND/listing?page_size=20"},
}

// Indexes in upstreamAnswerKinds of the answers to an API key's lookup.
const (
	kindKeyRecord    = 10
	kindDealerRecord = 11
)

// Inputs are small (a member's value, not a whole answer), and the fake's
// answers short (two items a list): the fuzzing worker minimizes every
// input that finds new coverage by running it again and again, for up to
// -fuzzminimizetime (60 s by default), and a whole 20-item listing as the
// input (about 1.6 ms a run) took all of a 60 s run minimizing one input.

// FuzzUpstreamAnswer serves one upstream answer (a listing page, a vehicle
// or offer record, a vehicle's media, a version's equipment, a content
// list, an API key's record, a dealer's profile) fuzzed, with 200 and
// application/json, the rest from the fake, and checks the public answer the edge makes of it: a 200 that
// matches the OpenAPI document, or a problem that does (a garbled or
// inconsistent answer is the service's fault: 503, or 404 for a record
// that is not the one asked for), never a 500, and nothing internal in
// either (check.InternalLeaks). The answer is the fake's own with one
// member set to a fuzzed value (patchAnswer: member is a dotted path in the
// record, or in item item of a list; "$." starts it at a list's top), or,
// with member "-", the fuzzed bytes themselves: inputs stay small. The
// cache is emptied before every input, so each one is read; the key
// record and dealer profile kinds send a key not seen before, whose lookup
// answers the record (the dealer kind: bench-key-000's record).
func FuzzUpstreamAnswer(f *testing.F) {
	var (
		mu   sync.Mutex
		kind = -1
		body []byte
	)
	var fakeAddr string
	var keyRecord []byte // bench-key-000's, the dealer kind's key record
	srv := newBenchServerVia(f, true, nil, cache.Options{}, func(addr string) string {
		fakeAddr = addr
		return interceptingProxy(f, func(w http.ResponseWriter, r *http.Request) bool {
			mu.Lock()
			k, b := kind, body
			mu.Unlock()
			if k == kindDealerRecord && upstreamAnswerKinds[kindKeyRecord].upstream.MatchString(r.URL.Path) {
				b = keyRecord
			} else if k < 0 || !upstreamAnswerKinds[k].upstream.MatchString(r.URL.Path) {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(b)
			return true
		})(addr)
	})
	// Every input of the key kinds is a lookup: a budget no run spends
	// (see FuzzWholeRequest).
	st := *srv.Settings()
	st.LookupRate, st.LookupBurst = 1e6, 1e6
	if err := srv.UpdateSettings(&st); err != nil {
		f.Fatal(err)
	}
	c, ok := srv.cache.(*cache.Cache)
	if !ok {
		f.Fatalf("cache %T", srv.cache)
	}
	contract, err := check.Public()
	if err != nil {
		f.Fatal(err)
	}
	get := func(path string) []byte {
		resp, err := http.Get("http://" + fakeAddr + path)
		if err != nil {
			f.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != 200 {
			f.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		return b
	}
	// The fake's records the requests name (dealer 101: bench-key-000's).
	var vehicles struct {
		Items []struct {
			IDAuto      string `json:"id_auto"`
			VersionCode string `json:"version_code"`
		} `json:"items"`
	}
	vehicleList := get("/inventory/v1/dealers/101/vehicles?service=REWIND&page_size=2")
	if err := json.Unmarshal(get("/inventory/v1/dealers/101/vehicles?service=REWIND&page_size=50"), &vehicles); err != nil || len(vehicles.Items) == 0 {
		f.Fatalf("vehicles: %v", err)
	}
	// A vehicle with a catalog version and media (podcast or video).
	vehicle := vehicles.Items[0]
	for _, v := range vehicles.Items {
		if v.VersionCode != "" && len(get("/media/v1/dealers/101/vehicles/"+v.IDAuto)) > len("{}") {
			vehicle = v
			break
		}
	}
	var offers struct {
		Items []struct {
			IDOfferta int64 `json:"id_offerta"`
		} `json:"items"`
	}
	offerList := get("/inventory/v1/dealers/101/offers?page_size=2")
	if err := json.Unmarshal(offerList, &offers); err != nil || len(offers.Items) == 0 {
		f.Fatalf("offers: %v", err)
	}
	offerID := fmt.Sprint(offers.Items[0].IDOfferta)
	var faqs struct {
		Items []struct {
			Slug string `json:"slug"`
		} `json:"items"`
	}
	faqList := firstItems(f, get("/content/v1/dealers/101/faq"), 2)
	if err := json.Unmarshal(faqList, &faqs); err != nil || len(faqs.Items) == 0 {
		f.Fatalf("faq: %v", err)
	}
	keyRecord = get("/dealers/v1/keys/" + fake.HashKey("bench-key-000"))
	args := []string{"", "", vehicle.IDAuto, vehicle.IDAuto, vehicle.IDAuto, offerID, "", faqs.Items[0].Slug, "", "", "", ""}
	seeds := [][]byte{
		vehicleList, offerList,
		get("/inventory/v1/dealers/101/vehicles/" + vehicle.IDAuto),
		get("/media/v1/dealers/101/vehicles/" + vehicle.IDAuto),
		get("/catalog/v1/versions/" + url.PathEscape(vehicle.VersionCode) + "/equipment"),
		get("/inventory/v1/dealers/101/offers/" + offerID),
		faqList, faqList, faqList, faqList,
		keyRecord, get("/dealers/v1/dealers/101"),
	}
	for _, s := range []struct {
		kind         uint8
		member, body string
	}{
		{0, "", ""}, {1, "", ""}, {2, "", ""}, {3, "", ""}, {4, "", ""}, {5, "", ""}, {6, "", ""},
		{7, "", ""}, {8, "", ""}, {9, "", ""}, {kindKeyRecord, "", ""}, {kindDealerRecord, "", ""},
		{0, "-", `{"total":-5,"items":[]}`},
		{0, "id_auto", `"not-a-uuid"`},
		{0, "upfits.0.slug", `"--"`},
		{0, "$.total", `1e400`},
		{1, "id_offerta", `0`},
		{2, "cover_url", `"javascript:alert(1)"`},
		{2, "updated_at", `"0000-01-01T00:00:00+01:00"`},
		{3, "podcast", `{"audio_url":"x","duration_seconds":-5,"published_at":"0001-01-01T00:00:00Z"}`},
		{4, "standard.0.price_eur", `-1e308`},
		{5, "quotations", `null`},
		{6, "type", `"bogus"`},
		{7, "slug", `""`},
		{9, "title", `"\ud800"`},
		{kindKeyRecord, "expires_at", `"2000-01-01T00:00:00Z"`},
		{kindDealerRecord, "id", `102`},
	} {
		f.Add(s.kind, uint8(0), s.member, []byte(s.body))
	}
	var keys int
	h := srv.Handler()
	answer := func(t testing.TB, k, item uint8, member string, value []byte) {
		i := int(k) % len(upstreamAnswerKinds)
		kd := upstreamAnswerKinds[i]
		b := value
		if member != "-" {
			b = patchAnswer(seeds[i], int(item), member, value)
		}
		// With Redis marked down (a slow moment of a loaded machine) the
		// purge is deferred but takes effect here at once.
		if err := c.PurgeAll(context.Background()); err != nil && !errors.Is(err, cache.ErrPurgeDeferred) {
			t.Fatal(err)
		}
		mu.Lock()
		kind, body = i, b
		mu.Unlock()
		defer func() {
			mu.Lock()
			kind, body = -1, nil
			mu.Unlock()
		}()
		target := kd.request
		if strings.Contains(target, "%s") {
			target = fmt.Sprintf(target, url.QueryEscape(args[i]))
		}
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(target)
		key := "bench-key-000"
		if i == kindKeyRecord || i == kindDealerRecord {
			keys++
			key = fmt.Sprintf("fuzz-key-%d", keys)
		}
		ctx.Request.Header.Set("X-Api-Key", key)
		h(&ctx)
		status := ctx.Response.StatusCode()
		out := ctx.Response.Body()
		if status >= 500 && status != 503 {
			t.Fatalf("%s answered %q: %d %s", kd.name, b, status, out)
		}
		if status != 200 && status != 503 && status != 404 && !(status == 401 && i == kindKeyRecord) {
			t.Fatalf("%s answered %q: %d %s", kd.name, b, status, out)
		}
		bad := contract.Check(target, status, string(ctx.Response.Header.ContentType()), out)
		// An internal marker the fuzzer wrote into a public field (a
		// dealer's name, a title) is published as the service sent it;
		// the internal field names are still checked.
		for j := 0; j < len(bad); j++ {
			for _, m := range check.InternalMarkers {
				if strings.HasPrefix(bad[j], "response contains internal marker") && strings.Contains(bad[j], strconv.Quote(m)) && bytes.Contains(b, []byte(m)) {
					bad = append(bad[:j], bad[j+1:]...)
					j--
					break
				}
			}
		}
		if len(bad) > 0 {
			t.Fatalf("%s answered %q: %d %s\n%s", kd.name, b, status, out, strings.Join(bad, "\n"))
		}
	}
	f.Fuzz(func(t *testing.T, k, item uint8, member string, value []byte) { answer(t, k, item, member, value) })
}

// firstItems returns a content list answer with its first n items only.
func firstItems(tb testing.TB, list []byte, n int) []byte {
	var v map[string]any
	if err := json.Unmarshal(list, &v); err != nil {
		tb.Fatal(err)
	}
	if items, ok := v["items"].([]any); ok && len(items) > n {
		v["items"] = items[:n]
	}
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// patchAnswer returns the JSON answer base with the member at path set to
// value (raw JSON when it is valid JSON, else a string of its bytes):
// path is dotted member names and array indexes, from item item of base's
// items when base is a list (a path starting "$." from the top). A path
// that does not reach a member gives base unchanged.
func patchAnswer(base []byte, item int, path string, value []byte) []byte {
	var root any
	dec := json.NewDecoder(bytes.NewReader(base))
	dec.UseNumber()
	if dec.Decode(&root) != nil || path == "" {
		return base
	}
	var v any = string(value)
	if json.Valid(value) {
		v = json.RawMessage(value)
	}
	segs := strings.Split(path, ".")
	if segs[0] == "$" {
		segs = segs[1:]
	} else if m, ok := root.(map[string]any); ok {
		if items, ok := m["items"].([]any); ok && len(items) > 0 {
			segs = append([]string{"items", strconv.Itoa(item % len(items))}, segs...)
		}
	}
	if !setMember(root, segs, v) {
		return base
	}
	out, err := json.Marshal(root)
	if err != nil {
		return base
	}
	return out
}

// setMember sets the member at path below node (a map or slice) to v.
func setMember(node any, path []string, v any) bool {
	if len(path) == 0 {
		return false
	}
	switch n := node.(type) {
	case map[string]any:
		if len(path) == 1 {
			n[path[0]] = v
			return true
		}
		return setMember(n[path[0]], path[1:], v)
	case []any:
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(n) {
			return false
		}
		if len(path) == 1 {
			n[i] = v
			return true
		}
		return setMember(n[i], path[1:], v)
	}
	return false
}
