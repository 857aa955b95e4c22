package fake

import (
	"net/url"
	"testing"

	"github.com/dealer-edge/dealer-edge/upstream"
)

// snapshotAll pages the whole snapshot with the given limit and returns the
// entries and the first page's cursor.
func snapshotAll(t *testing.T, s *Server, limit string) ([]upstream.KeyIndexEntry, string) {
	t.Helper()
	var all []upstream.KeyIndexEntry
	after, cursor := "", ""
	for i := 0; ; i++ {
		var p upstream.KeySnapshotPage
		getJSON(t, s, "/dealers/v1/key-index?limit="+limit+"&after="+after, &p)
		if i == 0 {
			cursor = p.Cursor
		}
		all = append(all, p.Items...)
		if p.Next == "" {
			return all, cursor
		}
		after = p.Next
	}
}

func TestKeyIndexSnapshotPagesEveryKeyInOrder(t *testing.T) {
	s := NewServer(Options{ExtraKeys: 25})
	all, cursor := snapshotAll(t, s, "7")
	want := len(keySpecs()) + 25
	if len(all) != want || cursor == "" {
		t.Fatalf("%d entries, cursor %q; want %d", len(all), cursor, want)
	}
	seen := map[string]bool{}
	for i, e := range all {
		if i > 0 && all[i-1].KeySHA256 >= e.KeySHA256 {
			t.Fatalf("entry %d out of order", i)
		}
		seen[e.KeySHA256] = true
	}
	for _, k := range []string{"demo-key-alpha", "demo-key-revoked", BenchKey(49), LoadKey(24)} {
		if !seen[HashKey(k)] {
			t.Errorf("%s missing", k)
		}
	}
}

func TestKeyIndexChangeFeed(t *testing.T) {
	s := NewServer(Options{KeyLogRetention: 3})
	_, cursor := snapshotAll(t, s, "1000")
	changes := func(cur string) (int, upstream.KeyChangesPage) {
		var p upstream.KeyChangesPage
		st, body := get(t, s, "/dealers/v1/key-index/changes?limit=2&cursor="+url.QueryEscape(cur))
		if st == 200 {
			getJSON(t, s, "/dealers/v1/key-index/changes?limit=2&cursor="+url.QueryEscape(cur), &p)
		}
		_ = body
		return st, p
	}
	if st, p := changes(cursor); st != 200 || len(p.Items) != 0 || p.More || p.Cursor != cursor {
		t.Fatalf("no changes: %d %+v", st, p)
	}
	if err := s.AddKey("rt-key-1", 102, "", nil); err != nil {
		t.Fatal(err)
	}
	if !s.RevokeKey("demo-key-alpha") || !s.ExpireKey("demo-key-gamma") || s.RevokeKey("never-issued") {
		t.Fatal("revoke/expire of known keys must succeed, of unknown ones fail")
	}
	st, p := changes(cursor)
	if st != 200 || len(p.Items) != 2 || !p.More {
		t.Fatalf("first page: %d %+v", st, p)
	}
	if p.Items[0].KeySHA256 != HashKey("rt-key-1") || p.Items[0].Status != upstream.KeyActive || p.Items[0].Plan != PlanDefault ||
		p.Items[1].KeySHA256 != HashKey("demo-key-alpha") || p.Items[1].Status != upstream.KeyRevoked {
		t.Fatalf("changes: %+v", p.Items)
	}
	st, p2 := changes(p.Cursor)
	if st != 200 || len(p2.Items) != 1 || p2.More || p2.Items[0].ExpiresAt == nil {
		t.Fatalf("second page: %d %+v", st, p2)
	}
	// Lookups see the changes too.
	var rec upstream.KeyRecord
	getJSON(t, s, "/dealers/v1/keys/"+HashKey("rt-key-1"), &rec)
	if rec.DealerID != 102 || rec.Status != "active" {
		t.Fatalf("lookup of added key: %+v", rec)
	}
	// Retention 3: a fourth change pushes the first cursor out of the log.
	_ = s.AddKey("rt-key-2", 101, PlanBench, nil)
	for _, c := range []struct {
		name, cursor string
		want         int
	}{
		{"too old", cursor, 410},
		{"current", p2.Cursor, 200},
		{"garbage", "nonsense", 410},
		{"future", p2.Cursor + "9", 410},
	} {
		if st, _ := changes(c.cursor); st != c.want {
			t.Errorf("%s: status %d, want %d", c.name, st, c.want)
		}
	}
	s.ResetKeyLog()
	if st, _ := changes(p2.Cursor); st != 410 {
		t.Errorf("cursor of the old epoch: %d, want 410", st)
	}
	for _, bad := range []string{"/dealers/v1/key-index?limit=0", "/dealers/v1/key-index?limit=10001", "/dealers/v1/key-index/changes?limit=x"} {
		if st, _ := get(t, s, bad); st != 400 {
			t.Errorf("%s: %d, want 400", bad, st)
		}
	}
}

func TestControlKeys(t *testing.T) {
	s := NewServer(Options{})
	for _, c := range []struct {
		name, query string
		want        int
	}{
		{"add", "action=add&key=ctl-key&dealer=103&plan=limited&expires=2031-01-01T00:00:00Z", 200},
		{"revoke", "action=revoke&key=ctl-key", 200},
		{"expire", "action=expire&key=demo-key-beta", 200},
		{"unknown key", "action=revoke&key=nope", 400},
		{"bad dealer", "action=add&key=x&dealer=abc", 400},
		{"bad expiry", "action=add&key=x&dealer=1&expires=tomorrow", 400},
		{"bad action", "action=explode", 400},
	} {
		if st, body := do(s, "POST", "/_control/keys?"+c.query); st != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, st, body, c.want)
		}
	}
	var rec upstream.KeyRecord
	getJSON(t, s, "/dealers/v1/keys/"+HashKey("ctl-key"), &rec)
	if rec.Status != "revoked" || rec.Plan != "limited" || rec.DealerID != 103 {
		t.Fatalf("ctl-key: %+v", rec)
	}
}
