package publicshape

import _ "embed"

//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1.0 document of the public contract
// (info.version is ContractVersion), served at /dealer/openapi.json. It
// describes every response type of this package; the tests keep the two in
// agreement.
//
// The returned slice is the embedded document itself, shared by every
// caller and returned without copying: callers must not modify it.
func OpenAPI() []byte { return openAPI }
