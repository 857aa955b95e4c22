package reliability

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/contracttests/procs"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// API keys must never be written anywhere by the edge: not raw, not as
// the SHA-256 the dealers service is asked with, not as the keyed hash the
// edge caches and rate-limits under, in no encoding. These tests look for
// all of those forms in everything the processes wrote.

// defaultKeyHashSecret is auth.key_hash_secret's default (configs/README.md).
const defaultKeyHashSecret = "dealer-edge-dev-secret-change-me"

// secretsTestHashSecret is the key hash secret of the secrets tests' edges.
const secretsTestHashSecret = "reliability-secrets-test-hmac-secret"

// secretForm is one way a key could show up in a log.
type secretForm struct {
	key    string // the raw key it derives from
	form   string // what it is, for the report
	needle string
	fold   bool // compare case-insensitively (hex and the raw key)
}

// secretForms returns the forms of key worth looking for: the raw key
// (also hex and base64 encoded), its SHA-256 (hex, base64) and its
// HMAC-SHA-256 under each of hmacSecrets (hex, base64). Hex digests are
// matched by their first 16 digits, so a truncated hash is found too.
func secretForms(key string, hmacSecrets ...string) []secretForm {
	b64 := func(b []byte) []secretForm {
		// Only whole 3-byte groups: the last characters depend on padding
		// and on what follows in a longer encoded blob.
		n := len(b) / 3 * 3
		return []secretForm{
			{key, "base64", base64.StdEncoding.EncodeToString(b[:n]), false},
			{key, "base64url", base64.RawURLEncoding.EncodeToString(b[:n]), false},
		}
	}
	sum := sha256.Sum256([]byte(key))
	out := []secretForm{
		{key, "raw key", key, true},
		{key, "hex of the raw key", hex.EncodeToString([]byte(key)), true},
		{key, "SHA-256 hex", hex.EncodeToString(sum[:])[:16], true},
	}
	for _, f := range b64([]byte(key)) {
		f.form += " of the raw key"
		out = append(out, f)
	}
	for _, f := range b64(sum[:]) {
		f.form += " of the SHA-256"
		out = append(out, f)
	}
	for _, s := range hmacSecrets {
		m := hmac.New(sha256.New, []byte(s))
		m.Write([]byte(key))
		mac := m.Sum(nil)
		out = append(out, secretForm{key, "HMAC-SHA-256 hex", hex.EncodeToString(mac)[:16], true})
		for _, f := range b64(mac) {
			f.form += " of the HMAC-SHA-256"
			out = append(out, f)
		}
	}
	return out
}

// allKeys are every key the fake dealers service knows: the demo keys and
// the load-test keys.
func allKeys() []string {
	var keys []string
	for _, k := range fake.DemoKeys {
		keys = append(keys, k.Key)
	}
	for i := range fake.BenchKeys {
		keys = append(keys, fake.BenchKey(i))
	}
	return keys
}

var (
	suiteSecretsOnce sync.Once
	suiteSecretsList []secretForm
)

// suiteSecrets are the forms of every known key, keyed hashes under the
// default secret and the secrets tests' secret.
func suiteSecrets() []secretForm {
	suiteSecretsOnce.Do(func() {
		for _, k := range allKeys() {
			suiteSecretsList = append(suiteSecretsList, secretForms(k, defaultKeyHashSecret, secretsTestHashSecret)...)
		}
	})
	return suiteSecretsList
}

// findSecrets returns one line per secret form found in text: which form
// of which key, on which line, with the line shown redacted.
func findSecrets(text string, secrets []secretForm) []string {
	if text == "" {
		return nil
	}
	lower := strings.ToLower(text)
	var out []string
	for _, s := range secrets {
		hay, needle := text, s.needle
		if s.fold {
			hay, needle = lower, strings.ToLower(needle)
		}
		i := strings.Index(hay, needle)
		if i < 0 {
			continue
		}
		start := strings.LastIndexByte(text[:i], '\n') + 1
		end := strings.IndexByte(text[i:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += i
		}
		line := text[start:i] + "<" + s.form + ">" + text[i+len(s.needle):end]
		out = append(out, fmt.Sprintf("%s of key %q on line %d: %.400q", s.form, s.key, strings.Count(text[:i], "\n")+1, redact(line)))
	}
	return out
}

// redact hides the known raw keys in a line shown in a report.
func redact(line string) string {
	for _, k := range allKeys() {
		line = strings.ReplaceAll(line, k, "<key>")
	}
	return line
}

// suiteSecretLeaks scans the standard error and output of every dealer-edge
// process the suite started (TestMain calls it after the run).
func suiteSecretLeaks(ps []*procs.Proc) []string {
	var out []string
	for i, p := range ps {
		if p.Name() != "dealer-edge" {
			continue
		}
		for _, stream := range []struct {
			name string
			buf  *procs.Buffer
		}{{"stderr", p.Stderr}, {"stdout", p.Stdout}} {
			for _, leak := range findSecrets(stream.buf.String(), suiteSecrets()) {
				out = append(out, fmt.Sprintf("dealer-edge process #%d %s: %s", i+1, stream.name, leak))
			}
		}
	}
	return out
}

// TestSecretsFinderFinds is the finder's own check, so that a scan that
// finds nothing means something.
func TestSecretsFinderFinds(t *testing.T) {
	key := "demo-key-gamma"
	sum := sha256.Sum256([]byte(key))
	m := hmac.New(sha256.New, []byte(defaultKeyHashSecret))
	m.Write([]byte(key))
	mac := m.Sum(nil)
	for _, line := range []string{
		`{"msg":"x","key":"` + key + `"}`,
		`{"msg":"x","key":"DEMO-KEY-GAMMA"}`,
		`{"msg":"x","h":"` + hex.EncodeToString(sum[:]) + `"}`,
		`{"msg":"x","h":"` + strings.ToUpper(hex.EncodeToString(sum[:8])) + `"}`,
		`{"msg":"x","h":"` + base64.StdEncoding.EncodeToString(sum[:]) + `"}`,
		`{"msg":"x","k":"` + hex.EncodeToString(mac[:16]) + `"}`,
		`{"msg":"x","k":"` + base64.RawURLEncoding.EncodeToString(mac) + `"}`,
		`{"msg":"x","k":"` + base64.StdEncoding.EncodeToString([]byte(key)) + `"}`,
		`{"msg":"x","k":"` + hex.EncodeToString([]byte(key)) + `"}`,
		`Authorization: Bearer ` + fake.BenchKey(49),
	} {
		if len(findSecrets("first line\n"+line+"\n", suiteSecrets())) == 0 {
			t.Errorf("not found in %s", line)
		}
	}
	if got := findSecrets(`{"msg":"access","request_id":"9f2c41d0a7b3e815-0000000000000a1c","route":"inventory_listing","dealer_id":101}`, suiteSecrets()); len(got) != 0 {
		t.Errorf("false positive: %v", got)
	}
}

func secretsConfig() map[string]any {
	return map[string]any{
		"server": map[string]any{"read_timeout": "1s", "max_header_bytes": 4096},
		"auth": map[string]any{
			"key_hash_secret": secretsTestHashSecret,
			// Short, so that the fault phase asks the dealers service again.
			"ttl": "1s", "negative_ttl": "1s", "stale": "10m",
		},
		"cache": map[string]any{"routes": map[string]any{
			"inventory_listing": map[string]any{"ttl": "0s", "stale_while_revalidate": "0s", "stale_if_error": "0s"},
		}},
		"log": map[string]any{"level": "debug", "access_sample": 1, "max_lines_per_sec": 0},
	}
}

// TestSecretsNeverLogged sends a mix of requests with every demo key (and a
// load-test key), as X-Api-Key and as Authorization: Bearer, to every
// endpoint, with success answers and every kind of error (validation, not
// found, rate limited, expired/revoked/orphaned keys, upstream failures,
// malformed HTTP carrying the key), at log level debug with every request
// logged; then no form of any key may appear in anything the edge wrote
// nor in the fake services' log.
func TestSecretsNeverLogged(t *testing.T) {
	s := startStack(t, secretsConfig())
	addr := strings.TrimPrefix(s.edge.Base, "http://")

	// Identifiers of dealer 101 for the detail endpoints.
	first := func(path, field string) string {
		r := s.get(t, path, keyAlpha)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		if r.Status != 200 || json.Unmarshal(r.Body, &page) != nil || len(page.Items) == 0 {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		return fmt.Sprint(page.Items[0][field])
	}
	idAuto := first("/dealer/REWIND/listing?page_size=1", "id_auto")
	idNOS := first("/dealer/NOS/listing?page_size=1", "id_auto")
	idOffer := first("/dealer/NLT/listing?page_size=1", "id_offerta")
	slug := first("/dealer/content/faq/listing?page_size=1", "slug")

	paths := []string{
		"/dealer/openapi.json",
		"/dealer/REWIND/listing?page_size=2",
		"/dealer/NOS/listing?page_size=2&catalog_type=vcom",
		"/dealer/NLT/listing?page_size=2",
		"/dealer/REWIND/details?id_auto=" + idAuto,
		"/dealer/NOS/details?id_auto=" + idNOS,
		"/dealer/NLT/details?id_offerta=" + idOffer,
		"/dealer/content/hub?page_size=2",
		"/dealer/content/search?q=noleggio",
		"/dealer/content/faq/listing?page_size=2",
		"/dealer/content/guides/listing?page_size=2",
		"/dealer/content/news/listing?page_size=2",
		"/dealer/content/faq/details?slug=" + url.QueryEscape(slug),
		// Errors.
		"/dealer/REWIND/details?id_auto=not-a-uuid",
		"/dealer/REWIND/details?id_auto=00000000-0000-4000-8000-000000000000",
		"/dealer/NLT/details?id_offerta=999999999",
		"/dealer/REWIND/listing?page=0",
		"/dealer/content/faq/details?slug=no-such-item",
		"/dealer/rewind/listing",
		"/dealer/content/nope/listing",
		"/dealer/nope",
	}
	keys := []string{fake.BenchKey(7)}
	for _, k := range fake.DemoKeys {
		keys = append(keys, k.Key)
	}
	statuses := map[int]int{}
	var mu sync.Mutex
	count := func(st int) {
		mu.Lock()
		statuses[st]++
		mu.Unlock()
	}
	do := func(path string, headers ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, err := procs.Get(ctx, client, s.edge.Base, path, headers...)
		if err != nil {
			t.Errorf("GET %s: %v", path, err)
			return
		}
		count(r.Status)
		for _, k := range keys {
			if strings.Contains(string(r.Body), k) || strings.Contains(fmt.Sprint(r.Header), k) {
				t.Errorf("GET %s: the answer carries key %q", path, k)
			}
		}
	}
	mix := func() {
		for _, k := range keys {
			for _, h := range []string{"X-Api-Key: " + k, "Authorization: Bearer " + k} {
				for _, p := range paths {
					do(p, h)
				}
				// A key in the wrong places: a query parameter (a common
				// client mistake) and a path value.
				do("/dealer/REWIND/listing?api_key="+url.QueryEscape(k), h)
				do("/dealer/"+url.PathEscape(k)+"/listing", h)
			}
		}
	}
	mix()

	// Malformed HTTP carrying each key: the HTTP server's own error paths
	// (which quote the request they could not parse) must not log it.
	var wg sync.WaitGroup
	for _, k := range keys {
		for _, raw := range []string{
			noKey("/dealer/REWIND/listing", "X-Api-Key: "+k+"\x00\r\n"),
			noKey("/dealer/REWIND/listing", "Authorization: Bearer "+k+"\x00\r\n"),
			noKey("/dealer/REWIND/listing", "X-Api-Key: "+k+"\r\nX-Request-ID: a\rb\r\n"),
			noKey("/dealer/REWIND/listing", "X-Api-Key: "+k+"\r\nX-Pad: "+strings.Repeat("p", 5000)+"\r\n"),
			noKey("/dealer/REWIND/listing", "X-Api-Key: "+k+"\r\nTransfer-Encoding: chunked\r\n") + "zz\r\n",
			noKey("/dealer/REWIND/listing", "X-Api-Key: "+k+"\r\nContent-Length: 0\r\nContent-Length: 1\r\n") + "x",
			noKey("/dealer/REWIND/listing", "X-Api-Key: "+k+"\r\nContent-Length: 50\r\n") + "short", // 408 after read_timeout
			"GET /dealer/REWIND/listing HTTP/1.1\r\nX-Api-Key: " + k + "\r\n\r\n",                   // no Host
			"GET dealer/REWIND/listing?key=" + k + " HTTP/1.1\r\nHost: x\r\n\r\n",
			"GET /dealer/REWIND/listing\r\nX-Api-Key: " + k + "\r\n\r\n",
			noKey("/dealer/REWIND/listing", "X-Api-Key : "+k+"\r\n"),
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rawExchange(addr, "GET", []byte(raw), 6*time.Second)
				switch {
				case r.resp != nil:
					count(r.resp.StatusCode)
				case r.err != nil:
					t.Errorf("malformed request with a key: %v", r.err)
				}
			}()
		}
	}
	wg.Wait()

	// Upstream failures while keys are looked up and served: the dealers
	// service down (keys past auth.ttl are asked again), inventory and
	// content failing, then connection resets.
	time.Sleep(1100 * time.Millisecond)
	s.fake.Faults("service=dealers&down=true")
	s.fake.Faults("service=inventory&fail_rate=1")
	s.fake.Faults("service=content&reset=true")
	for _, k := range keys {
		for _, h := range []string{"X-Api-Key: " + k, "Authorization: Bearer " + k} {
			do("/dealer/REWIND/listing?page_size=3", h)
			do("/dealer/content/search?q=garanzia", h)
		}
	}
	s.fake.Faults("clear=true")
	time.Sleep(1100 * time.Millisecond)
	mix()

	// The mix covered success and every kind of error.
	for _, st := range []int{200, 400, 401, 404, 408, 422, 429, 431, 503} {
		if statuses[st] == 0 {
			t.Errorf("the mix produced no %d answer: %v", st, statuses)
		}
	}
	t.Logf("answers by status: %v", sortedCounts(statuses))

	// Every form of every key, with the keyed hash under this edge's
	// secret, in everything the edge wrote and in the fake's log (its
	// standard output is a startup banner that lists the demo keys on
	// purpose).
	secrets := []secretForm{}
	for _, k := range allKeys() {
		secrets = append(secrets, secretForms(k, secretsTestHashSecret, defaultKeyHashSecret)...)
	}
	// The metrics exposition too (auth results, key index, per-address
	// limits: counters only, never a key or a hash of one).
	metricsText := ""
	if resp, err := http.Get(s.edge.Admin + "/metrics"); err != nil {
		t.Errorf("admin /metrics: %v", err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		metricsText = string(b)
		if !strings.Contains(metricsText, "edge_auth_results_total") {
			t.Errorf("admin /metrics has no auth metrics: the scan saw too little")
		}
	}
	for _, src := range []struct{ name, text string }{
		{"admin /metrics", metricsText},
		{"dealer-edge stderr", s.edge.Stderr.String()},
		{"dealer-edge stdout", s.edge.Stdout.String()},
		{"fake-upstream stderr", s.fake.Stderr.String()},
	} {
		for _, leak := range findSecrets(src.text, secrets) {
			t.Errorf("%s: %s", src.name, leak)
		}
	}
	if n := strings.Count(s.edge.Stderr.String(), `"msg":"access"`); n < 500 {
		t.Errorf("only %d access lines: the scan saw too little", n)
	}
	checkEdgeLog(t, s.edge)
}

func sortedCounts(m map[int]int) string {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var b strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&b, "%d:%d ", k, m[k])
	}
	return b.String()
}

// TestSecretsRedisHoldsOnlyKeyedHashes: what the edge stores in Redis
// (rate-limit state, response cache) names keys only by their keyed hash
// (HMAC-SHA-256 under auth.key_hash_secret): no raw key, no plain SHA-256,
// and the rate-limit identity is the HMAC under the configured secret,
// not the default one.
func TestSecretsRedisHoldsOnlyKeyedHashes(t *testing.T) {
	s := startStack(t, map[string]any{"auth": map[string]any{"key_hash_secret": secretsTestHashSecret}})
	rdb := s.redis.Client()
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var all strings.Builder // every key name and value seen
	dump := func() []string {
		var names []string
		iter := rdb.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			k := iter.Val()
			names = append(names, k)
			all.WriteString(k + "\n")
			switch typ, _ := rdb.Type(ctx, k).Result(); typ {
			case "string":
				v, _ := rdb.Get(ctx, k).Result()
				all.WriteString(v + "\n")
			case "hash":
				for f, v := range rdb.HGetAll(ctx, k).Val() {
					all.WriteString(f + "=" + v + "\n")
				}
			}
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		return names
	}
	// Each key's rate-limit state lives only until its bucket would be
	// full again (well under a second here), so it is looked for right
	// after the key's requests. The bench plan's limit is so high that
	// its state expires at once; it is in the mix for the scan only.
	for _, k := range []string{"demo-key-alpha", "demo-key-beta", "demo-key-limited", fake.BenchKey(3)} {
		m := hmac.New(sha256.New, []byte(secretsTestHashSecret))
		m.Write([]byte(k))
		id := hex.EncodeToString(m.Sum(nil)[:16])
		found := false
		var names []string
		for attempt := 0; attempt < 3 && !found; attempt++ {
			for range 3 {
				s.get(t, "/dealer/REWIND/listing?page_size=2", "X-Api-Key: "+k)
				s.get(t, "/dealer/content/hub?page_size=2", "Authorization: Bearer "+k)
			}
			names = dump()
			for _, n := range names {
				if strings.HasSuffix(n, ":rl:"+id) {
					found = true
				}
			}
		}
		if !found && !strings.HasPrefix(k, "bench-") {
			t.Errorf("no rate-limit key named by HMAC(auth.key_hash_secret, %q) = %s… among %d keys: %v", k, id[:8], len(names), rlKeys(names))
		}
	}
	// Failed authentications from this address: the failed-auth limiter's
	// state (under an HMAC of the address) joins the scan.
	for i := range 5 {
		s.get(t, "/dealer/REWIND/listing?page_size=2", "X-Api-Key: "+fmt.Sprintf("not-a-key-%d", i))
	}
	names := dump()
	addrState := false
	for _, n := range names {
		addrState = addrState || strings.HasPrefix(n, "edge:v1:addr:")
	}
	if !addrState {
		t.Errorf("no failed-auth limiter state in Redis after failed authentications: %v", names)
	}
	if strings.Contains(all.String(), "127.0.0.1") {
		t.Errorf("redis holds the client address in the clear")
	}
	var plain []secretForm // no HMAC forms under this secret: those name the rate-limit keys
	for _, k := range allKeys() {
		plain = append(plain, secretForms(k, defaultKeyHashSecret)...)
	}
	for _, leak := range findSecrets(all.String(), plain) {
		t.Errorf("redis: %s", leak)
	}
}

func rlKeys(names []string) []string {
	var out []string
	for _, n := range names {
		if strings.Contains(n, ":rl:") {
			out = append(out, n)
		}
	}
	return out
}
