// Package version holds guise's release version and the version of its C
// ABI: the one place both are written. The Go module's tag is "v" +
// Version; bindings/package.sh stamps the same version into the wheel and
// the npm packages; go generate (./stamp) writes it, with ABI, into the
// Python and Node packages' sources, and CI fails when they differ.
package version

import (
	"runtime/debug"
	"sync"
)

// Version is guise's release version (semantic versioning, no "v").
const Version = "0.1.0"

// ABI is the version of the C ABI (ffi/guise.h). It changes whenever a
// function's signature, a struct's layout or a constant's meaning does;
// the bindings refuse a library whose ABI is not theirs at load time.
const ABI = 1

// Build describes the binary that is running: the commit it was built
// from and whether the tree had changes, as the go command stamped them
// (go build in a git checkout), or the module version when it was built
// with go install module@version.
type Build struct {
	Commit   string // "" when not stamped
	Modified bool
	Module   string // the main module's version: "(devel)" from a checkout
	Go       string // the Go toolchain
}

var (
	buildOnce sync.Once
	build     Build
)

// commit is the commit a release build was made from, set by
// bindings/package.sh with -ldflags "-X ...internal/version.commit=HASH"
// (a build from the sdist has no git checkout for the go command to read,
// and GOFLAGS may say -buildvcs=false). It wins over the go command's stamp.
var commit string

// ReadBuild returns the running binary's Build.
func ReadBuild() Build {
	buildOnce.Do(func() {
		info, ok := debug.ReadBuildInfo()
		if !ok {
			build.Commit = commit
			return
		}
		build.Module = info.Main.Version
		build.Go = info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				build.Commit = s.Value
			case "vcs.modified":
				build.Modified = s.Value == "true"
			}
		}
		if commit != "" {
			build.Commit, build.Modified = commit, false
		}
	})
	return build
}
