package main

import "testing"

// TestCachePurgePrefixFrozen: the generation keys and the purge channel stay
// under the prefix the releases of contract version 1.2.0 used, whatever
// contract version this release serves, so that during a rolling deploy
// across a contract version the releases on both sides see each other's
// purges (cache.Options.PurgePrefix; TestPurgeReachesAnotherContractVersion
// in package cache shows the split they suffered under cachePrefix). A
// change of cachePurgePrefix splits every rolling deploy that carries it.
func TestCachePurgePrefixFrozen(t *testing.T) {
	if cachePurgePrefix != "edge:c1.2.0" {
		t.Fatalf("cachePurgePrefix = %q; the released instances purge under %q", cachePurgePrefix, "edge:c1.2.0")
	}
}
