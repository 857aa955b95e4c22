package aggregator

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
)

// TestCatalogMissingIsNotNoEquipment: contract 2.5 says
// accessori_opzionali are "optionals explicitly confirmed for this
// vehicle; empty means none selected" (pacchetti the same), and the README
// says "empty array when none". When the catalog service has no entry for
// the vehicle's version (a 404, which fillVehicle tolerates and answers
// 200), the edge cannot resolve the codes the vehicle confirms, yet it
// publishes empty arrays: a client is told "no optionals selected" for a
// vehicle that has some, and the answer is cached for the route's TTL.
func TestCatalogMissingIsNotNoEquipment(t *testing.T) {
	e, fb, _ := faultyEdge(t, newNFClock(), cache.Options{})
	uri, id := knownVehicle(t, e, "demo-key-alpha")
	v, err := fb.Backend.Vehicle(context.Background(), 101, "REWIND", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.ConfirmedOptionals) == 0 {
		t.Skipf("vehicle %s confirms no optionals in this corpus", id)
	}
	fb.set(nil, nil, fmt.Errorf("upstream catalog: %w", upstream.ErrNotFound))
	st, body := e.body(t, uri, "demo-key-alpha")
	if st != 200 {
		t.Fatalf("catalog 404: %d %s", st, body)
	}
	var d struct {
		Vehicle map[string]json.RawMessage `json:"vehicle"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if raw, ok := d.Vehicle["accessori_opzionali"]; ok && string(raw) == "[]" {
		t.Errorf("vehicle confirms optionals %v, catalog has no entry for version %q: published accessori_opzionali %s (\"none selected\"); cache-control %q",
			v.ConfirmedOptionals, v.VersionCode, raw, e.request(uri, "demo-key-alpha").Response.Header.Peek("Cache-Control"))
	}
	if raw, ok := d.Vehicle["accessori_serie"]; ok && string(raw) == "[]" {
		t.Errorf("catalog has no entry for version %q: published accessori_serie %s as the version's complete standard equipment", v.VersionCode, raw)
	}
}
