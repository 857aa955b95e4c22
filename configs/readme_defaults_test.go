package configs

import (
	"encoding/json"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readmeRow is one row of a field table of configs/README.md.
type readmeRow struct {
	line       int
	field      string // as written, map keys as <name>
	def        string // the default column
	reloadable bool   // the R column
}

// readmeRows returns the rows of the field tables (| field | default |
// unit | R | meaning |) of configs/README.md.
func readmeRows(t *testing.T) []readmeRow {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []readmeRow
	inTable := false
	for i, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "| field | default | unit | R |") {
			inTable = true
			continue
		}
		if !strings.HasPrefix(line, "|") {
			inTable = false
			continue
		}
		if !inTable || strings.HasPrefix(line, "|---") {
			continue
		}
		cells := strings.SplitN(line, "|", 6) // "", field, default, unit, R, meaning...
		if len(cells) < 6 {
			t.Fatalf("configs/README.md:%d: a field row with %d cells", i+1, len(cells))
		}
		rows = append(rows, readmeRow{
			line:       i + 1,
			field:      strings.Trim(strings.TrimSpace(cells[1]), "`"),
			def:        strings.TrimSpace(cells[2]),
			reloadable: strings.TrimSpace(cells[4]) == "R",
		})
	}
	if len(rows) < 50 {
		t.Fatalf("only %d field rows found in configs/README.md", len(rows))
	}
	return rows
}

var mapKey = regexp.MustCompile(`<[a-z_]+>`)

// TestConfigReadmeFieldsExist checks that every field configs/README.md
// documents is a field of Config, so that a renamed or removed knob does
// not stay documented.
func TestConfigReadmeFieldsExist(t *testing.T) {
	paths := configPaths(reflect.TypeFor[Config](), "")
	for _, r := range readmeRows(t) {
		p := mapKey.ReplaceAllString(r.field, "<*>")
		// A row may document a whole map entry (cache.content_types.<type>).
		if !slices.ContainsFunc(paths, func(q string) bool { return q == p || strings.HasPrefix(q, p+".") }) {
			t.Errorf("configs/README.md:%d documents %s, which is not a config field", r.line, r.field)
		}
	}
}

// TestConfigReadmeReloadColumn checks the R column of configs/README.md
// against what a reload installs (RestartOnly).
func TestConfigReadmeReloadColumn(t *testing.T) {
	for _, r := range readmeRows(t) {
		p := mapKey.ReplaceAllStringFunc(r.field, func(k string) string { return strings.Trim(k, "<>") })
		live := len(RestartOnly([]string{p})) == 0
		if live != r.reloadable {
			t.Errorf("configs/README.md:%d: %s is marked reloadable=%v, but a reload installs it: %v", r.line, r.field, r.reloadable, live)
		}
	}
}

var (
	oneValue   = regexp.MustCompile("^`([^`]*)`(?: \\([^)]*\\))?$")
	namedValue = regexp.MustCompile("(?:^|[,;] )((?:[a-z_]+, )*[a-z_]+) `([^`]*)`")
	otherValue = regexp.MustCompile("every other [a-z_]+ `([^`]*)`$")
)

// TestConfigReadmeDefaults checks the default column of configs/README.md
// (and its route defaults table) against Default(): a single value for a
// plain field, "name `value`" pairs for a map entry's fields.
func TestConfigReadmeDefaults(t *testing.T) {
	flat := Default().Flatten()
	for _, r := range readmeRows(t) {
		if m := oneValue.FindStringSubmatch(r.def); m != nil && !strings.Contains(r.field, "<") {
			got, ok := flat[r.field]
			if !ok {
				t.Errorf("configs/README.md:%d: %s has no default in Default()", r.line, r.field)
				continue
			}
			if !sameValue(m[1], got) {
				t.Errorf("configs/README.md:%d: %s default is documented as %s, Default() has %s", r.line, r.field, m[1], got)
			}
			continue
		}
		if strings.Contains(r.field, "<") && r.def != "see below" && r.def != "none" {
			// rate_limit.plans.<plan>.rate: default `50`, limited `10`, ...;
			// upstream.timeouts.<service>: dealers, inventory `800ms`; ...
			var pairs [][]string
			for _, m := range namedValue.FindAllStringSubmatch(r.def, -1) {
				for _, name := range strings.Split(m[1], ", ") {
					pairs = append(pairs, []string{"", name, m[2]})
				}
			}
			if len(pairs) == 0 {
				t.Errorf("configs/README.md:%d: %s: cannot read the default column %q", r.line, r.field, r.def)
			}
			named := map[string]bool{}
			for _, kv := range pairs {
				named[kv[1]] = true
			}
			if m := otherValue.FindStringSubmatch(r.def); m != nil {
				// "every other route `1`": each default key not named.
				prefix, suffix, _ := strings.Cut(mapKey.ReplaceAllString(r.field, "\x00"), "\x00")
				for p := range flat {
					key, ok := strings.CutPrefix(p, prefix)
					if ok && strings.HasSuffix(key, suffix) && !named[strings.TrimSuffix(key, suffix)] {
						pairs = append(pairs, []string{"", strings.TrimSuffix(key, suffix), m[1]})
					}
				}
			} else if len(pairs) > 0 {
				// The named keys are every key of the map's default.
				prefix, suffix, _ := strings.Cut(mapKey.ReplaceAllString(r.field, "\x00"), "\x00")
				for p := range flat {
					key, ok := strings.CutPrefix(p, prefix)
					if ok && strings.HasSuffix(key, suffix) && !named[strings.TrimSuffix(key, suffix)] {
						t.Errorf("configs/README.md:%d: %s has a default in Default() the row does not name", r.line, p)
					}
				}
			}
			for _, kv := range pairs {
				p := mapKey.ReplaceAllString(r.field, kv[1])
				got, ok := flat[p]
				if !ok {
					t.Errorf("configs/README.md:%d: %s is documented with a default, Default() has none", r.line, p)
					continue
				}
				if !sameValue(kv[2], got) {
					t.Errorf("configs/README.md:%d: %s default is documented as %s, Default() has %s", r.line, p, kv[2], got)
				}
			}
			continue
		}
		if r.def != "see below" && r.def != "none" {
			t.Errorf("configs/README.md:%d: %s: cannot read the default column %q", r.line, r.field, r.def)
		}
	}

	// The route defaults table: | `route` | endpoint | `ttl` / `swr` / `sie` / `not_found_ttl` |
	b, _ := os.ReadFile("README.md")
	routeRow := regexp.MustCompile("(?m)^\\| `([a-z_]+)` \\| `/dealer[^|]*\\| `([^`]+)` / `([^`]+)` / `([^`]+)` / `([^`]+)` \\|$")
	seen := map[string]bool{}
	for _, m := range routeRow.FindAllStringSubmatch(string(b), -1) {
		seen[m[1]] = true
		for i, f := range []string{"ttl", "stale_while_revalidate", "stale_if_error", "not_found_ttl"} {
			p := "cache.routes." + m[1] + "." + f
			got, ok := flat[p]
			if !ok && f == "not_found_ttl" {
				got, ok = `"0s"`, true // omitted when zero
			}
			if !ok {
				t.Errorf("configs/README.md: route defaults list %s, Default() has no such route", m[1])
				break
			}
			if !sameValue(m[2+i], got) {
				t.Errorf("configs/README.md: route defaults: %s is documented as %s, Default() has %s", p, m[2+i], got)
			}
		}
	}
	for name := range Default().Cache.Routes {
		if !seen[name] {
			t.Errorf("configs/README.md: route defaults table has no row for %s", name)
		}
	}
}

// sameValue reports whether doc (as written in the README) and js (a
// JSON value of Flatten) are the same value: durations, times and numbers
// compare by value.
func sameValue(doc, js string) bool {
	var v any
	if json.Unmarshal([]byte(js), &v) != nil {
		return false
	}
	switch v := v.(type) {
	case string:
		if doc == `""` {
			return v == ""
		}
		if d1, err := time.ParseDuration(doc); err == nil {
			d2, err := time.ParseDuration(v)
			return err == nil && d1 == d2
		}
		if t1, err := time.Parse(time.RFC3339, doc); err == nil {
			t2, err := time.Parse(time.RFC3339, v)
			return err == nil && t1.Equal(t2)
		}
		return doc == v
	case float64:
		f, err := strconv.ParseFloat(doc, 64)
		return err == nil && f == v
	case bool:
		return doc == strconv.FormatBool(v)
	case []any:
		return doc == "[]" && len(v) == 0
	case map[string]any:
		return doc == "{}" && len(v) == 0
	case nil:
		return doc == "[]" || doc == "{}" || doc == "null"
	}
	return false
}

// TestRootReadmeRouteDefaults checks the route policy table of the
// repository's README ("Response cache": | route | ttl |
// stale_while_revalidate | stale_if_error |) against Default(), as
// TestConfigReadmeDefaults checks configs/README.md's, so that the two
// tables cannot drift apart.
func TestRootReadmeRouteDefaults(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?m)^\s*\| ([a-z_]+) \| ([0-9a-z.]+) \| ([0-9a-z.]+) \| ([0-9a-z.]+) \|$`)
	flat := Default().Flatten()
	seen := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(string(b), -1) {
		if _, ok := Default().Cache.Routes[m[1]]; !ok {
			continue
		}
		seen[m[1]] = true
		for i, f := range []string{"ttl", "stale_while_revalidate", "stale_if_error"} {
			p := "cache.routes." + m[1] + "." + f
			if !sameValue(m[2+i], flat[p]) {
				t.Errorf("README.md: route policy table: %s is %s, Default() has %s", p, m[2+i], flat[p])
			}
		}
	}
	for name := range Default().Cache.Routes {
		if !seen[name] {
			t.Errorf("README.md: the route policy table has no row for %s", name)
		}
	}
}
