// Package contracttests holds black-box tests of the whole edge: each test
// starts the edge on a free loopback port (in process, wired like
// cmd/dealer-edge, against the fake internal services and an embedded or
// real Redis) and talks HTTP to it. Every response the suite receives is
// validated against the served OpenAPI 3.1 document with a JSON Schema
// 2020-12 validator and scanned for internal-only field names.
package contracttests
