// Package configs is dealer-edge's configuration: the file's Go types, their
// defaults, loading (unknown fields are errors), validation with errors that
// name the field as it is spelled in the file, which fields a reload
// installs, and the mapping of the reloadable part to the aggregator's
// settings. The example and demo files beside it are tested against it.
//
// Every consumer validates with this code: the edge at start and on reload,
// `dealer-edge --check-config`, and the deployment checks through that flag.
package configs
