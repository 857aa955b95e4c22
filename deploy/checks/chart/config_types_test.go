package chart

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// edgeNonStringFields asks the edge, field by field, which of the fields
// configs/README.md documents it refuses as a JSON string, and what it
// wants there: the JSON Schema type of its Go type. A map's placeholder
// (cache.content_types.<type>, rate_limit.plans.<plan>.rate) is "x".
func edgeNonStringFields(t *testing.T) map[string]string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(edgeproc.RepoRoot(), "configs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	edge := edgeBinary(t)
	dir := t.TempDir()
	refused := regexp.MustCompile(`cannot unmarshal string into Go struct field \S* of type (\S*)`)
	out := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9_]+(?:\\.[a-z0-9_<>]+)+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		field := regexp.MustCompile(`<[a-z]+>`).ReplaceAllString(m[1], "x")
		var v any = "1"
		parts := strings.Split(field, ".")
		for i := len(parts) - 1; i >= 0; i-- {
			v = map[string]any{parts[i]: v}
		}
		b, _ := json.Marshal(v)
		p := filepath.Join(dir, fmt.Sprintf("config-%d.json", i))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			res, _ := exec.Command(edge, "--check-config", p).CombinedOutput()
			r := refused.FindSubmatch(res)
			if r == nil || !strings.Contains(string(res), "config "+p+": "+field+": ") && !strings.Contains(string(res), "config "+p+": "+strings.Join(parts[:len(parts)-1], ".")) {
				return // a string is what the edge wants there (or it names another reason)
			}
			typ := "object"
			switch s := string(r[1]); {
			case s == "bool":
				typ = "boolean"
			case s == "float64" || s == "float32":
				typ = "number"
			case strings.HasPrefix(s, "int") || strings.HasPrefix(s, "uint"):
				typ = "integer"
			case strings.HasPrefix(s, "[]"):
				typ = "array"
			}
			mu.Lock()
			out[field] = typ
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(out) < 20 {
		t.Fatalf("the edge refused a string in only %d documented fields: %v; the probe is broken", len(out), out)
	}
	return out
}

// schemaAt walks values.schema.json to the schema of config.<field>
// (properties, else additionalProperties).
func schemaAt(schema map[string]any, field string) map[string]any {
	s := schema["properties"].(map[string]any)["config"].(map[string]any)
	if field == "" {
		return s
	}
	for _, p := range strings.Split(field, ".") {
		props, _ := s["properties"].(map[string]any)
		next, _ := props[p].(map[string]any)
		if next == nil {
			next, _ = s["additionalProperties"].(map[string]any)
		}
		if next == nil {
			return nil
		}
		s = next
	}
	return s
}

// A number quoted in the values (config.cache.l1_max_bytes: "1073741824")
// reached config.json as a string and the edge refused to start ("cannot
// unmarshal string into Go struct field .cache.l1_max_bytes of type
// int64"): the pods crash-looped on a chart that rendered and linted. The
// schema now gives the JSON type of every field where the edge wants
// other than a string, as the edge itself says (a string is tried in each
// documented field through --check-config), and helm refuses the values.
func TestConfigSchemaTypesMatchEdge(t *testing.T) {
	want := edgeNonStringFields(t)
	b, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	fields := slices.Sorted(func(yield func(string) bool) {
		for f := range want {
			if !yield(f) {
				return
			}
		}
	})
	var args []string
	for _, f := range fields {
		s := schemaAt(schema, f)
		if got, _ := s["type"].(string); got != want[f] {
			t.Errorf("values.schema.json config.%s: type %q; the edge wants %s", f, got, want[f])
		}
		args = append(args, "--set-string", "config."+f+"=1")
	}
	// The schema types no field the edge takes as a string.
	var walk func(s map[string]any, path string)
	walk = func(s map[string]any, path string) {
		props, _ := s["properties"].(map[string]any)
		if ap, ok := s["additionalProperties"].(map[string]any); ok {
			props = map[string]any{"x": ap}
		}
		if len(props) == 0 {
			if _, ok := want[path]; !ok && path != "" {
				t.Errorf("values.schema.json types config.%s (%v); the edge takes a string there or does not know it", path, s["type"])
			}
			return
		}
		for k, v := range props {
			p := k
			if path != "" {
				p = path + "." + k
			}
			walk(v.(map[string]any), p)
		}
	}
	walk(schemaAt(schema, ""), "")

	// helm refuses each quoted value, naming it.
	_, err = helmTemplate(t, args...)
	if err == nil {
		t.Fatalf("a string in each of %v rendered", fields)
	}
	for _, f := range fields {
		if !strings.Contains(err.Error(), "at '/config/"+strings.ReplaceAll(f, ".", "/")+"': got string, want "+want[f]) {
			t.Errorf("helm's refusal does not name config.%s (want %s):\n%v", f, want[f], err)
		}
	}
	// Numbers and booleans render, from a values file (helm's --set
	// keeps a fraction such as 2.5 a string; --set-json does not).
	vf := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vf, []byte("memoryMiB: 2048\nconfig:\n  cache: {l1_max_bytes: 1073741824}\n"+
		"  rate_limit: {plans: {gold: {rate: 2.5, burst: 10}}}\n  log: {access_log: false}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := helmTemplate(t, "-f", vf); err != nil {
		t.Errorf("numbers in config: %v", err)
	}
	if _, err := helmTemplate(t, "--set-json", `config.rate_limit.plans.gold.rate=2.5`); err != nil {
		t.Errorf("--set-json of a fraction: %v", err)
	}
}
