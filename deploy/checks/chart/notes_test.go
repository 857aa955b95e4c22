package chart

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// renderNotes renders the chart's templates/NOTES.txt with the given helm
// arguments, without a cluster: `helm template` never prints NOTES, and
// `helm install --dry-run=client` (helm 3.22) still asks the cluster for
// its version. So the chart is copied and NOTES.txt's text, unchanged,
// becomes a named template that a manifest of the copy prints as one
// string; `helm template --show-only` renders that manifest with the same
// values, helpers and release as NOTES.
func renderNotes(t *testing.T, args ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "dealer-edge")
	err := filepath.WalkDir(chartDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(chartDir, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	notes, err := os.ReadFile(filepath.Join(chartDir, "templates", "NOTES.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "_notes-under-test.tpl"),
		[]byte(`{{- define "notes-under-test" -}}`+string(notes)+`{{- end -}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "templates", "notes-under-test.yaml"),
		[]byte(`notes: {{ include "notes-under-test" . | toJson }}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := execHelm(t, append([]string{"template", "edge", dir, "--kube-version", "1.31.0", "--show-only", "templates/notes-under-test.yaml"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helm template %v: %v\n%s", args, err, stderr.String())
	}
	var doc struct{ Notes string }
	if err := yaml.Unmarshal(out, &doc); err != nil || doc.Notes == "" {
		t.Fatalf("rendered notes %q: %v", out, err)
	}
	return doc.Notes
}

// NOTES.txt says how many replicas run. With the HPA on, the Deployment
// has no replicas field and the HPA keeps hpa.minReplicas to
// hpa.maxReplicas pods; until 2026-11-29 NOTES printed replicaCount then
// ("2 replicas, HPA true" where the HPA ran 4 to 12).
func TestNotesReplicaCount(t *testing.T) {
	for _, c := range []struct {
		args      []string
		want, not string
	}{
		{[]string{"--set", "replicaCount=2", "--set", "hpa.enabled=true", "--set", "hpa.minReplicas=4", "--set", "hpa.maxReplicas=12"},
			"(4 to 12 replicas", "(2 replicas"},
		{[]string{"--set", "replicaCount=2", "--set", "hpa.enabled=false", "--set", "hpa.minReplicas=4", "--set", "hpa.maxReplicas=12"},
			"(2 replicas", "4 to 12"},
	} {
		first, _, _ := strings.Cut(renderNotes(t, c.args...), "\n")
		if !strings.Contains(first, c.want) || strings.Contains(first, c.not) {
			t.Errorf("%v: NOTES say %q; want %q (not %q)", c.args, first, c.want, c.not)
		}
	}
}
