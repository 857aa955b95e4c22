package configs

import (
	"net/url"
	"strings"
	"testing"

	"github.com/dealer-edge/dealer-edge/publicshape"
)

// TestProblemBaseURLMakesURIs: server.problem_base_url prefixes the type
// of every problem answer (contract section 7: type is a "string, uri",
// the URL of the error's documentation; the code is appended to its
// path). Before 2026-11-29 any absolute http(s) URL that net/url parsed
// passed: a space, a raw "é", a '"' or '<' went into every client's
// type as is (no URI), a query or fragment took the code
// ("https://docs.example/p?v=2/not_found": one page for every code), and
// userinfo ("https://user:pw@docs.example/") was sent to every client.
func TestProblemBaseURLMakesURIs(t *testing.T) {
	for _, base := range []string{
		"https://docs.example/problem types",
		"https://docs.example/problèmes",
		`https://docs.example/p"x`,
		"https://docs.example/<p>",
		"https://docs.example/p?v=2",
		"https://docs.example/p#errors",
		"https://docs.example/p?",
		// A bare "#" has an empty fragment: net/url reports none, and the
		// code went after it ("https://docs.example/p/#not_found").
		"https://docs.example/p/#",
		"https://docs.example/p#",
		"https://editor:s3cret@docs.example/problems",
	} {
		err := validateField(t, func(c *Config) { c.Server.ProblemBaseURL = base })
		if err == nil || !strings.Contains(err.Error(), "server.problem_base_url:") {
			t.Errorf("%q: err = %v; want an error naming server.problem_base_url", base, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	for _, base := range []string{
		publicshape.DefaultProblemBase,
		"https://docs.example/errors/",
		"http://10.0.0.1:8080/p",
		"https://docs.example/probl%C3%A8mes",
		"https://[2001:db8::1]/p",
	} {
		if err := validateField(t, func(c *Config) { c.Server.ProblemBaseURL = base }); err != nil {
			t.Errorf("%q refused: %v", base, err)
			continue
		}
		// What a client is sent parses back as an absolute URI whose path
		// ends with the code.
		typ := publicshape.ProblemTypeURI(base, "not_found")
		u, err := url.Parse(typ)
		if err != nil || u.String() != typ || !strings.HasSuffix(u.EscapedPath(), "/not_found") {
			t.Errorf("%q: type %q is not a URI ending in /not_found (%v)", base, typ, err)
		}
	}
}
