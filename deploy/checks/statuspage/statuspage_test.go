// Package statuspage tests the admin listener's live status page in a
// real headless chromium driven by chromedp, against the real edge
// binary: the page asks for the admin token, renders the tables, its
// numbers move while traffic runs, a purge from its form empties that
// dealer's cache (and only that dealer's), the reload button reloads. It
// saves a screenshot under deploy/out/ (UPDATE_SCREENSHOT=1 also writes
// docs/status-page.png for the README).
package statuspage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

const token = "status-page-test-token-0123456789"

func chromiumPath(t *testing.T) string {
	for _, p := range []string{os.Getenv("CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Fatal("chromium not found (scripts/test.sh installs Debian's chromium; or set CHROMIUM)")
	return ""
}

// traffic sends requests of two dealers until stop is closed.
func traffic(t *testing.T, e *edgeproc.Edge, stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	paths := []string{"/dealer/REWIND/listing?page_size=2", "/dealer/NOS/listing?page_size=3", "/dealer/content/hub"}
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		case <-time.After(40 * time.Millisecond):
		}
		key := "demo-key-alpha"
		if i%2 == 1 {
			key = "demo-key-beta"
		}
		e.Get(t, paths[i%len(paths)], key)
	}
}

func TestStatusPageInChromium(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "edge.json")
	if err := os.WriteFile(cfg, []byte(`{"admin_token": "`+token+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := edgeproc.Start(t, "--config", cfg)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // tests run as root in CI containers
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 1100),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()

	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatalf("evaluate %s: %v", js, err)
		}
		return s
	}
	cellJS := func(table, key, col string) string {
		return fmt.Sprintf(`(function(){var c=document.querySelector('#%s tr[data-%s="%s"] td[data-col="%s"]');return c?c.textContent:"";})()`, table, map[string]string{"routes": "route", "services": "service"}[table], key, col)
	}
	waitFor := func(what string, d time.Duration, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(d)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; page text:\n%s", what, eval(`document.body.innerText`))
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	// The page asks for the token: the status call answered 401.
	run("open the page", chromedp.Navigate(e.Admin+"/"), chromedp.WaitVisible(chromedp.CSS(`#login`)))
	if rows := eval(`String(document.querySelectorAll('#routes tbody tr').length)`); rows != "0" {
		t.Fatalf("%s route rows shown without the token", rows)
	}
	run("enter the token",
		chromedp.SendKeys(chromedp.CSS(`#token`), token),
		chromedp.Click(chromedp.CSS(`#token-btn`)),
		chromedp.WaitNotVisible(chromedp.CSS(`#login`)),
		chromedp.WaitVisible(chromedp.CSS(`#routes tr[data-route="inventory_listing"]`)),
	)
	if ttl := eval(cellJS("routes", "inventory_listing", "ttl")); ttl != "30.0 s" && ttl != "30 s" && !strings.HasPrefix(ttl, "30") {
		t.Errorf("inventory_listing TTL cell %q, want the default 30 s", ttl)
	}
	// A detail route remembers an unknown id for not_found_ttl (default
	// 10 s); a listing remembers nothing and shows an empty cell.
	if nf := eval(cellJS("routes", "inventory_details", "notfound")); nf != "10 s" {
		t.Errorf("inventory_details 404-remembered cell %q, want the default 10 s", nf)
	}
	if nf := eval(cellJS("routes", "inventory_listing", "notfound")); nf != "" {
		t.Errorf("inventory_listing 404-remembered cell %q, want empty", nf)
	}
	if b := eval(cellJS("services", "inventory", "breaker")); b != "closed" {
		t.Errorf("inventory breaker %q, want closed", b)
	}
	for _, id := range []string{"redis", "l1", "limiter", "reload"} {
		if txt := eval(`document.getElementById("` + id + `").textContent`); txt == "" || txt == "\u2013" {
			t.Errorf("#%s is empty", id)
		}
	}
	if r := eval(`document.getElementById("redis").textContent`); r != "up" {
		t.Errorf("redis %q, want up", r)
	}
	// The limiter card shows both limiters' state: the per-key one and the
	// per-client-address one (failed authentications, the OpenAPI
	// document), each on Redis while Redis is up.
	if l := eval(`document.getElementById("limiter").textContent`); !strings.HasPrefix(l, "key: redis \u00b7 address: redis \u00b7 ") {
		t.Errorf("limiter card %q, want the per-key and the per-address limiter, both on redis", l)
	}
	// No traffic yet: no rate of inventory_listing.
	rps := func() float64 {
		v, err := strconv.ParseFloat(eval(cellJS("routes", "inventory_listing", "rps")), 64)
		if err != nil {
			return -1
		}
		return v
	}
	if r := rps(); r > 0 {
		t.Errorf("inventory_listing shows %v req/s before any traffic", r)
	}

	// Numbers move while traffic runs.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go traffic(t, e, stop, &wg)
	waitFor("req/s of inventory_listing to rise", 30*time.Second, func() bool { return rps() > 1 })
	waitFor("a hit ratio", 20*time.Second, func() bool {
		return strings.HasSuffix(eval(cellJS("routes", "inventory_listing", "hit")), "%")
	})
	waitFor("upstream calls per second", 20*time.Second, func() bool {
		v, err := strconv.ParseFloat(eval(cellJS("services", "dealers", "calls")), 64)
		return err == nil && v >= 0 && eval(cellJS("services", "dealers", "calls")) != "\u2013"
	})
	first := eval(`document.getElementById("updated").textContent`)
	waitFor("the page to poll again", 10*time.Second, func() bool {
		return eval(`document.getElementById("updated").textContent`) != first
	})
	if p99 := eval(cellJS("routes", "inventory_listing", "p99")); !strings.HasSuffix(p99, "ms") && !strings.HasSuffix(p99, " s") {
		t.Errorf("p99 cell %q, want a duration", p99)
	}
	shot := screenshot(t, ctx)
	close(stop)
	wg.Wait()

	// A purge from the page empties dealer 101's cache, not dealer 102's.
	for _, k := range []string{"demo-key-alpha", "demo-key-beta"} {
		e.Get(t, "/dealer/REWIND/listing?page_size=2", k)
		if _, xc := e.Get(t, "/dealer/REWIND/listing?page_size=2", k); xc != "HIT" {
			t.Fatalf("%s: X-Cache %q before the purge, want HIT", k, xc)
		}
	}
	run("purge dealer 101 from the page",
		chromedp.SetValue(chromedp.CSS(`#purge-id`), "101"),
		chromedp.Click(chromedp.CSS(`#purge-btn`)),
	)
	waitFor("the purge confirmation", 10*time.Second, func() bool {
		return eval(`document.getElementById("msg").textContent`) == "dealer 101 purged"
	})
	if _, xc := e.Get(t, "/dealer/REWIND/listing?page_size=2", "demo-key-alpha"); xc != "MISS" {
		t.Errorf("dealer 101 after the purge: X-Cache %q, want MISS", xc)
	}
	if _, xc := e.Get(t, "/dealer/REWIND/listing?page_size=2", "demo-key-beta"); xc != "HIT" {
		t.Errorf("dealer 102 after purging 101: X-Cache %q, want HIT", xc)
	}
	if !strings.Contains(e.Stderr(), `"msg":"cache purged","dealer_id":101`) {
		t.Error("no cache purged event line for dealer 101")
	}

	// The reload button reloads the config file; the card shows the result.
	run("reload from the page", chromedp.Click(chromedp.CSS(`#reload-btn`)))
	waitFor("the reload confirmation", 10*time.Second, func() bool {
		return eval(`document.getElementById("msg").textContent`) == "config reloaded"
	})
	waitFor("the reload card", 10*time.Second, func() bool {
		return strings.HasSuffix(eval(`document.getElementById("reload").textContent`), ": ok")
	})

	if os.Getenv("UPDATE_SCREENSHOT") != "" {
		if err := os.WriteFile(filepath.Join(edgeproc.RepoRoot(), "docs", "status-page.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// screenshot saves the page as deploy/out/status-page.png (a CI
// artifact) and returns the PNG.
func screenshot(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		t.Fatalf("screenshot is not a PNG (%d bytes)", len(png))
	}
	dir := filepath.Join(edgeproc.RepoRoot(), "deploy", "out")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "status-page.png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return png
}
