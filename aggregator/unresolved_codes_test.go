package aggregator

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/dealer-edge/dealer-edge/cache"
	"github.com/dealer-edge/dealer-edge/upstream"
	"github.com/dealer-edge/dealer-edge/upstream/fake"
)

// catalogWithoutOptionals: the catalog answers for the version (an entry
// exists: its standard equipment), but its optional and package catalogue
// does not hold the codes the vehicle confirms (a catalogue behind the
// inventory, a renamed code).
type catalogWithoutOptionals struct{ Backend }

func (b catalogWithoutOptionals) Equipment(ctx context.Context, dealerID int64, versionCode string) (upstream.Equipment, error) {
	eq, err := b.Backend.Equipment(ctx, dealerID, versionCode)
	eq.Optionals, eq.Packages = nil, nil
	return eq, err
}

// TestUnresolvedCodesAreNotNone: a variant of
// TestCatalogMissingIsNotNoEquipment. The README: accessori_opzionali /
// pacchetti are left out "when the vehicle confirms codes that could not
// be resolved"; contract 2.5: "empty means none selected". When the catalog
// has an entry for the version but none of the confirmed codes in it, the
// codes could not be resolved either, yet the detail says [] ("none
// selected") for a vehicle that confirms optionals.
func TestUnresolvedCodesAreNotNone(t *testing.T) {
	c, err := cache.New(cache.Options{ServeStaleOn: ServeStaleOn, DropOn: DropOn})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var inner Backend
	e := newIndexEdge(t, fake.Options{}, nil, false, func(o *Options) {
		o.Cache = c
		inner = o.Backend
		o.Backend = catalogWithoutOptionals{o.Backend}
	})
	uri, id := knownVehicle(t, e, "demo-key-alpha")
	v, err := inner.Vehicle(context.Background(), 101, "REWIND", id)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.ConfirmedOptionals) == 0 || v.VersionCode == "" {
		t.Skipf("vehicle %s confirms no optionals in this corpus", id)
	}
	st, body := e.body(t, uri, "demo-key-alpha")
	if st != 200 {
		t.Fatalf("%d %s", st, body)
	}
	var d struct {
		Vehicle map[string]json.RawMessage `json:"vehicle"`
	}
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	if raw, ok := d.Vehicle["accessori_opzionali"]; ok && string(raw) == "[]" {
		t.Errorf("vehicle confirms optionals %v, none resolvable in the catalog entry of %q: published accessori_opzionali %s (\"none selected\")", v.ConfirmedOptionals, v.VersionCode, raw)
	}
	if raw, ok := d.Vehicle["pacchetti"]; ok && string(raw) == "[]" && len(v.ConfirmedPackages) > 0 {
		t.Errorf("vehicle confirms packages %v, none resolvable: published pacchetti %s", v.ConfirmedPackages, raw)
	}
}
