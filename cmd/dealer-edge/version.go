package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by deploy/image/build.sh (and so by the Dockerfile):
//
//	-ldflags "-X main.version=v1.2.0 -X main.commit=0123abc -X main.buildTime=2026-11-23T21:00:00Z"
//
// Without them the module's build info fills what it knows.
var (
	version   string
	commit    string
	buildTime string
)

// buildIdentity says which binary this is.
type buildIdentity struct {
	Version, Commit, BuildTime, GoVersion string
}

// identity merges the link-time values with the binary's build info
// (module version for `go install ...@vX`, VCS revision and time when the
// build stamped them), then "unknown" for what neither knows.
func identity() buildIdentity {
	id := buildIdentity{Version: version, Commit: commit, BuildTime: buildTime, GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if id.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			id.Version = bi.Main.Version
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if id.Commit == "" {
					id.Commit = s.Value
				}
			case "vcs.time":
				if id.BuildTime == "" {
					id.BuildTime = s.Value
				}
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && commit == "" && id.Commit != "" {
			id.Commit += "-dirty"
		}
	}
	if id.Version == "" {
		id.Version = "devel"
	}
	if id.Commit == "" {
		id.Commit = "unknown"
	}
	if id.BuildTime == "" {
		id.BuildTime = "unknown"
	}
	return id
}

func (id buildIdentity) String() string {
	return fmt.Sprintf("dealer-edge %s (commit %s, built %s, %s)", id.Version, id.Commit, id.BuildTime, id.GoVersion)
}
