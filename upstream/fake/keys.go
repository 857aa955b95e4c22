package fake

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// DemoKey is one API key known to the fake dealers service.
type DemoKey struct {
	Key         string // the raw key, as a client sends it
	DealerID    int64
	Description string
}

// DemoKeys lists the demo API keys of the fake dealers service, for
// printing by the edge's demo mode. It is a copy: the fake itself never
// reads it, so changing it changes nothing. Load-test keys bench-key-000 ..
// bench-key-049 are known too but not listed; see BenchKey.
var DemoKeys = demoKeys()

// Plans of the demo keys.
const (
	PlanDefault = "default"
	PlanLimited = "limited"
	PlanBench   = "bench"
)

// BenchKeys is the number of load-test keys, BenchKey(0) ..
// BenchKey(BenchKeys-1).
const BenchKeys = 50

// BenchKey returns the i-th load-test key, "bench-key-000" for 0. The keys
// map to dealers 101, 102 and 103 round robin, are active and have plan
// "bench".
func BenchKey(i int) string { return fmt.Sprintf("bench-key-%03d", i) }

type keySpec struct {
	DemoKey
	id     string
	status string
	plan   string
	expiry *time.Time
	listed bool
}

func keySpecs() []keySpec {
	exp := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) // demo-key-expired
	future := time.Date(2030, 12, 31, 23, 59, 59, 0, time.UTC)
	ks := []keySpec{
		{DemoKey{"demo-key-alpha", 101, "Alpha Motori (101), active, plan default"}, "key_alpha_01", "active", PlanDefault, nil, true},
		{DemoKey{"demo-key-beta", 102, "BetaCar (102), active, plan default"}, "key_beta_01", "active", PlanDefault, &future, true},
		{DemoKey{"demo-key-gamma", 103, "Gamma Auto (103), active, plan default"}, "key_gamma_01", "active", PlanDefault, nil, true},
		{DemoKey{"demo-key-expired", 101, "Alpha Motori (101), expired on 2024-01-01 -> 401 expired_api_key"}, "key_alpha_old", "active", PlanDefault, &exp, true},
		{DemoKey{"demo-key-orphan", 199, "dealer 199 does not exist -> 404 dealer_not_found"}, "key_orphan", "active", PlanDefault, nil, true},
		{DemoKey{"demo-key-limited", 101, "Alpha Motori (101), active, plan limited (low rate limit)"}, "key_alpha_limited", "active", PlanLimited, nil, true},
		{DemoKey{"demo-key-revoked", 101, "Alpha Motori (101), revoked -> 401 invalid_api_key"}, "key_alpha_revoked", "revoked", PlanDefault, nil, true},
	}
	ids := []int64{101, 102, 103}
	for i := 0; i < BenchKeys; i++ {
		d := ids[i%len(ids)]
		ks = append(ks, keySpec{
			DemoKey: DemoKey{BenchKey(i), d, fmt.Sprintf("load-test key %d of dealer %d, plan bench", i, d)},
			id:      fmt.Sprintf("key_bench_%03d", i),
			status:  "active",
			plan:    PlanBench,
		})
	}
	return ks
}

func demoKeys() []DemoKey {
	var out []DemoKey
	for _, k := range keySpecs() {
		if k.listed {
			out = append(out, k.DemoKey)
		}
	}
	return out
}

// HashKey returns the lowercase hex SHA-256 of a raw key: the form in which
// the dealers service stores keys and the edge looks them up.
func HashKey(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// keyRecord builds the dealers service's record of one key.
func (k keySpec) record() upstream.KeyRecord {
	r := upstream.KeyRecord{KeyID: k.id, DealerID: k.DealerID, Status: k.status, Plan: k.plan}
	if k.expiry != nil {
		t := *k.expiry
		r.ExpiresAt = &t
	}
	return r
}

// LoadKey returns the i-th extra key of Options.ExtraKeys,
// "load-key-0000000" for 0: active, plan bench, of dealers 101, 102 and 103
// round robin.
func LoadKey(i int) string { return fmt.Sprintf("load-key-%07d", i) }

// MaxFleetDealers bounds Options.FleetDealers.
const MaxFleetDealers = 2000

// FleetDealerID returns the dealer id of the i-th fleet dealer of
// Options.FleetDealers: 1001 for 0.
func FleetDealerID(i int) int64 { return 1001 + int64(i) }

// FleetKey returns the key of the i-th fleet dealer of
// Options.FleetDealers, "fleet-key-0000" for 0: active, plan bench.
func FleetKey(i int) string { return fmt.Sprintf("fleet-key-%04d", i) }

// fleetSpecs returns the specs of n fleet dealers: Alpha Motori's sizes,
// their own ids, names and domains.
func fleetSpecs(n int) []dealerSpec {
	out := make([]dealerSpec, n)
	for i := range out {
		id := FleetDealerID(i)
		out[i] = dealerSpec{id, fmt.Sprintf("Fleet Dealer %d S.r.l.", id), fmt.Sprintf("Fleet %d", id), "Bologna", "BO",
			fmt.Sprintf("www.fleet%d.example.it", id), 330, 215, 64}
	}
	return out
}

// loadDefaults fills the store with the demo and bench keys, n extra keys
// and the keys of fleet fleet dealers, without change-log entries.
func (ks *keyStore) loadDefaults(n, fleet int) error {
	for _, k := range keySpecs() {
		if err := ks.load(HashKey(k.Key), k.record()); err != nil {
			return err
		}
	}
	ids := []int64{101, 102, 103}
	for i := 0; i < n; i++ {
		rec := upstream.KeyRecord{KeyID: fmt.Sprintf("key_load_%07d", i), DealerID: ids[i%len(ids)], Status: upstream.KeyActive, Plan: PlanBench}
		if err := ks.load(HashKey(LoadKey(i)), rec); err != nil {
			return err
		}
	}
	for i := 0; i < fleet; i++ {
		rec := upstream.KeyRecord{KeyID: fmt.Sprintf("key_fleet_%04d", i), DealerID: FleetDealerID(i), Status: upstream.KeyActive, Plan: PlanBench}
		if err := ks.load(HashKey(FleetKey(i)), rec); err != nil {
			return err
		}
	}
	slices.Sort(ks.sorted)
	// The entries' JSON in one block, in snapshot order (see inOrder).
	total := 0
	for _, sk := range ks.byHash {
		total += len(sk.entryJSON)
	}
	block := make([]byte, 0, total)
	ks.inOrder = make([][]byte, len(ks.sorted))
	for i, h := range ks.sorted {
		sk := ks.byHash[h]
		start := len(block)
		block = append(block, sk.entryJSON...)
		sk.entryJSON = block[start:len(block):len(block)]
		ks.inOrder[i] = sk.entryJSON
	}
	return nil
}
