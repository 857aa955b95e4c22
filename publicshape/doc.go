// Package publicshape is the public face of dealer-edge: the response types
// of the public dealer API (contract v1.2.0), the pure rules that turn
// internal records into them, and the embedded OpenAPI 3.1 document that
// describes them.
//
// It is a pure leaf: it imports only the standard library, does no I/O and
// keeps no mutable state, so every rule here is a plain function that can
// be tested and fuzzed in isolation.
//
// The public boundary is an allowlist by construction. The edge encodes
// only the structs declared here, so only their fields can ever reach a
// client: an internal field (a source identifier, a lookup cascade, a raw
// technical-data directory, a rendering payload) cannot leak by being
// forgotten, because no public type has a place for it. Adding a public
// field means adding it to a struct here and to the OpenAPI document, and
// the tests check that the two agree.
package publicshape
