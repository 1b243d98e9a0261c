package guise

import "github.com/guise-http/guise/internal/version"

//go:generate go run ./internal/version/stamp

// Version is guise's release version, without the "v" of the module's tag.
// The CLI (guise version), the Python wheel and the npm packages carry the
// same one.
const Version = version.Version
