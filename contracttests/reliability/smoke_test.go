package reliability

import "testing"

// TestStackServes is the harness's own check: the three processes start
// and a request goes through them, a miss then a hit.
func TestStackServes(t *testing.T) {
	s := startStack(t, nil)
	for i, want := range []string{"MISS", "HIT"} {
		r := s.get(t, "/dealer/REWIND/listing?page_size=2", keyAlpha)
		if r.Status != 200 || r.Header.Get("X-Cache") != want {
			t.Fatalf("request %d: %d X-Cache %q: %s", i, r.Status, r.Header.Get("X-Cache"), r.Body)
		}
	}
	if n := s.fake.Calls()["inventory"]; n != 1 {
		t.Errorf("inventory calls %d, want 1", n)
	}
	s.fake.Faults("service=inventory&down=true")
	if v, ok := s.edge.Metric("edge_requests_total", `route="inventory_listing"`); !ok || v < 2 {
		t.Errorf("edge_requests_total %v %v", v, ok)
	}
}
