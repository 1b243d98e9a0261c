package profile

import (
	"errors"
	"io"
	"os"
	"strings"
)

// LoadError is the error of Load and Open for a profile file that cannot be
// read or does not parse: the file's path, and the cause, a *ParseError
// when the file is not a valid profile.
type LoadError struct {
	Path string
	Err  error
}

// Error returns "profile: <path>: <cause>".
func (e *LoadError) Error() string {
	return "profile: " + e.Path + ": " + strings.TrimPrefix(e.Err.Error(), "profile: ")
}

// Unwrap returns the cause.
func (e *LoadError) Unwrap() error { return e.Err }

// Load reads the profile file at path (as `guise capture` writes it) and
// parses it with Parse: the checks the embedded profiles pass, so a bad
// file fails here, with the field and the reason, and never at a request.
// Any error is a *LoadError. The profile is the caller's; give the same
// *Profile to every Session that should share connections.
func Load(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	p, err := Parse(b)
	if err != nil {
		return nil, &LoadError{Path: path, Err: err}
	}
	return p, nil
}

// Open returns the profile spec names: a profile file's JSON when spec
// starts with "{", the file at spec when spec looks like a path (it holds
// a path separator or ends in ".json"), else the embedded profile of that
// name (Lookup), or failing that a file of that name. It is what the
// command line's --profile and the bindings' profile option take.
func Open(spec string) (*Profile, error) {
	s := strings.TrimSpace(spec)
	if strings.HasPrefix(s, "{") {
		return Parse([]byte(s))
	}
	if looksLikePath(spec) {
		return Load(spec)
	}
	p, err := Lookup(spec)
	if err == nil || !errors.Is(err, ErrUnknown) {
		return p, err
	}
	if fi, serr := os.Stat(spec); serr == nil && fi.Mode().IsRegular() {
		return Load(spec)
	}
	return nil, err
}

func looksLikePath(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(strings.ToLower(s), ".json")
}

// IsEmbedded reports whether p is one of the embedded profiles, as Lookup
// returns them (not a copy, nor a file's).
func IsEmbedded(p *Profile) bool {
	if p == nil {
		return false
	}
	q, err := Lookup(p.Name)
	return err == nil && q == p
}
