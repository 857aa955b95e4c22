package chart

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/dealer-edge/dealer-edge/deploy/internal/edgeproc"
)

// The chart's appVersion is the edge release it deploys, and one string
// names that release everywhere: the default image tag (image.tag empty
// takes appVersion) and the app.kubernetes.io/version label are appVersion;
// the edge of that release reports "v"+appVersion (`dealer-edge
// --version`, edge_build_info: deploy/image/build.sh stamps the release tag,
// `git describe --tags`); values-production.yaml pins the same tag; the
// Dockerfile's and README's release examples build and tag it. Until
// 2026-11-29 appVersion was "0.1.0" while the production values, the
// Dockerfile and README named release 1.2.0: a default install pulled
// dealer-edge:0.1.0, an image no documented build makes, and labelled the
// pods with a version the edge did not report.
func TestAppVersionIsTheEdgeRelease(t *testing.T) {
	root := edgeproc.RepoRoot()
	b, err := os.ReadFile(filepath.Join(chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var chart struct{ AppVersion string }
	if err := yaml.Unmarshal(b, &chart); err != nil {
		t.Fatal(err)
	}
	app := chart.AppVersion
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(app) {
		t.Fatalf("Chart.yaml appVersion %q: want the release number, MAJOR.MINOR.PATCH (the release tag is v<appVersion>)", app)
	}

	r := render(t)
	ctr := r.deploy.Spec.Template.Spec.Containers[0]
	if want := "dealer-edge:" + app; ctr.Image != want {
		t.Errorf("default image %q, want %q", ctr.Image, want)
	}
	if got := r.deploy.Spec.Template.Labels["app.kubernetes.io/version"]; got != app {
		t.Errorf("pod label app.kubernetes.io/version %q, want appVersion %q", got, app)
	}

	pv, err := os.ReadFile(filepath.Join(chartDir, "values-production.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var prod struct{ Image struct{ Tag string } }
	if err := yaml.Unmarshal(pv, &prod); err != nil {
		t.Fatal(err)
	}
	if prod.Image.Tag != app {
		t.Errorf("values-production.yaml pins image.tag %q; the chart's appVersion is %q", prod.Image.Tag, app)
	}

	// The release examples: the build argument and the version the edge prints.
	for _, c := range []struct{ file, re string }{
		{"Dockerfile", `--build-arg VERSION=(\S+)`},
		{"README.md", `# dealer-edge (v\S+) \(commit`},
		{"README.md", `--build-arg VERSION=(\S+) .*-t dealer-edge:`},
		{"README.md", `--build-arg VERSION=\S+ .*-t dealer-edge:(\S+)`},
	} {
		doc, err := os.ReadFile(filepath.Join(root, c.file))
		if err != nil {
			t.Fatal(err)
		}
		ms := regexp.MustCompile(c.re).FindAllSubmatch(doc, -1)
		if len(ms) == 0 {
			t.Errorf("%s has no release example matching %s", c.file, c.re)
		}
		for _, m := range ms {
			if got := strings.TrimPrefix(string(m[1]), "v"); got != app {
				t.Errorf("%s names release %s; the chart's appVersion is %s", c.file, m[1], app)
			}
		}
	}

	// At a release commit the tag is v<appVersion>: the edge built from it
	// reports that, and the chart must deploy it.
	if out, err := exec.Command("git", "-C", root, "describe", "--tags", "--exact-match", "--match", "v[0-9]*").Output(); err == nil {
		if tag := strings.TrimSpace(string(out)); tag != "v"+app {
			t.Errorf("HEAD is release %s; the chart's appVersion is %s", tag, app)
		}
	}
}
