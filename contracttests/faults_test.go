package contracttests

import (
	"testing"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

func firstVehicleWithMedia(t *testing.T, e *env) string {
	t.Helper()
	r := e.get("/dealer/REWIND/listing?page_size=100", keyAlpha)
	for _, it := range r.items() {
		if it["has_podcast"] == true || it["has_video"] == true {
			return it["id_auto"].(string)
		}
	}
	t.Fatal("no vehicle with media")
	return ""
}

// TestVehicleDetailMediaDown: media is optional; without it the detail is
// served, marked partial and not cached.
func TestVehicleDetailMediaDown(t *testing.T) {
	e := startEnv(t, envOptions{})
	id := firstVehicleWithMedia(t, e)
	e.fake.SetDown(upstream.SvcMedia, true)
	for i := 0; i < 2; i++ {
		r := e.get("/dealer/REWIND/details?id_auto="+id, keyAlpha)
		v, _ := r.json["vehicle"].(map[string]any)
		if r.status != 200 || r.header.Get("X-Edge-Partial") != "true" || r.header.Get("X-Cache") != "BYPASS" {
			t.Fatalf("media down: %d partial=%q cache=%q", r.status, r.header.Get("X-Edge-Partial"), r.header.Get("X-Cache"))
		}
		if v["podcast"] != nil || v["video"] != nil {
			t.Errorf("media objects without media service")
		}
		if r.header.Get("Cache-Control") != "private, no-store" {
			t.Errorf("partial Cache-Control %q", r.header.Get("Cache-Control"))
		}
	}
	e.fake.SetDown(upstream.SvcMedia, false)
	time.Sleep(600 * time.Millisecond) // breaker open interval of the harness
	r := e.get("/dealer/REWIND/details?id_auto="+id, keyAlpha)
	if r.status != 200 || r.header.Get("X-Edge-Partial") != "" || r.header.Get("X-Cache") != "MISS" {
		t.Errorf("after recovery: %d partial=%q cache=%q", r.status, r.header.Get("X-Edge-Partial"), r.header.Get("X-Cache"))
	}
}

// TestSlowCatalogIs503WithinBudget: a required service slower than its
// timeout gives 503 service_unavailable quickly, never a hang.
func TestSlowCatalogIs503WithinBudget(t *testing.T) {
	e := startEnv(t, envOptions{})
	r := e.get("/dealer/NOS/listing?page_size=1", keyAlpha)
	id := r.items()[0]["id_auto"].(string)
	e.fake.SetLatency(upstream.SvcCatalog, 3*time.Second)
	start := time.Now()
	d := e.get("/dealer/NOS/details?id_auto="+id, keyAlpha)
	if d.status != 503 || d.code() != "service_unavailable" {
		t.Fatalf("slow catalog: %d %s", d.status, d.code())
	}
	if el := time.Since(start); el > 1500*time.Millisecond {
		t.Errorf("503 after %v; the catalog timeout is 500ms", el)
	}
}

// TestOpenBreakerFailsFast: after consecutive failures the breaker opens
// and later requests get 503 without waiting for the backend.
func TestOpenBreakerFailsFast(t *testing.T) {
	e := startEnv(t, envOptions{})
	e.get("/dealer/REWIND/listing", keyAlpha) // resolve the key first
	e.fake.SetLatency(upstream.SvcInventory, 2*time.Second)
	for i := 0; i < 3; i++ {
		if r := e.get("/dealer/REWIND/listing?page="+string(rune('2'+i)), keyAlpha); r.status != 503 {
			t.Fatalf("slow inventory: %d", r.status)
		}
	}
	if st := e.up.BreakerStates()[upstream.SvcInventory]; st != upstream.BreakerOpen {
		t.Fatalf("breaker %q after 3 timeouts", st)
	}
	before := e.fake.Calls(upstream.SvcInventory)
	start := time.Now()
	r := e.get("/dealer/REWIND/listing?page=9", keyAlpha)
	if r.status != 503 || time.Since(start) > 100*time.Millisecond {
		t.Errorf("open breaker: %d after %v", r.status, time.Since(start))
	}
	if e.fake.Calls(upstream.SvcInventory) != before {
		t.Error("open breaker still called the backend")
	}
	// Recovery: the backend heals, the half-open probe closes the breaker.
	e.fake.SetLatency(upstream.SvcInventory, 0)
	time.Sleep(600 * time.Millisecond)
	if r := e.get("/dealer/REWIND/listing?page=10", keyAlpha); r.status != 200 {
		t.Errorf("after recovery: %d", r.status)
	}
}

// TestHubAllSectionsDown: with the content service down and nothing
// cached the hub is 503; search too.
func TestHubAllSectionsDown(t *testing.T) {
	e := startEnv(t, envOptions{})
	e.get("/dealer/REWIND/listing", keyAlpha)
	e.fake.SetDown(upstream.SvcContent, true)
	if r := e.get("/dealer/content/hub", keyAlpha); r.status != 503 {
		t.Errorf("hub: %d", r.status)
	}
	if r := e.get("/dealer/content/search?q=fiat", keyAlpha); r.status != 503 {
		t.Errorf("search: %d", r.status)
	}
}

// TestDealersServiceDownKeepsServingKnownKeys: a resolved key keeps
// working from the in-process auth cache while the dealers service is
// down; an unknown key gets 503, not 401.
func TestDealersServiceDownKeepsServingKnownKeys(t *testing.T) {
	e := startEnv(t, envOptions{settings: func(s *aggregatorSettings) { s.AuthTTL = time.Millisecond }})
	if r := e.get("/dealer/NOS/listing", keyAlpha); r.status != 200 {
		t.Fatal(r.status)
	}
	e.fake.SetDown(upstream.SvcDealers, true)
	time.Sleep(5 * time.Millisecond)
	if r := e.get("/dealer/NOS/listing", keyAlpha); r.status != 200 {
		t.Errorf("known key with dealers down: %d", r.status)
	}
	if r := e.get("/dealer/NOS/listing", keyBeta); r.status != 503 {
		t.Errorf("unresolved key with dealers down: %d %s", r.status, r.code())
	}
}
