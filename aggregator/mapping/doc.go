// Package mapping turns internal-service records (package upstream) into
// public response types (package publicshape), by allowlist: every public
// field is copied by name, and nothing else is. Internal-only fields
// (source ids, lookup cascades, technical-data directories, rendering/SEO
// payloads, raw version optionals, hidden records) have no public field to
// land in, so they cannot leak through this package.
//
// It also owns the public visibility rules of editorial content, in one
// place (Visible): FAQ overrides, hidden items, news provenance and the
// listing order. publicshape stays a pure leaf that imports nothing of the
// project; this package is the bridge between the two.
package mapping
