//go:build cgo

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io"
	"math/rand/v2"

	"github.com/guise-http/guise/profile"
)

// profileOption is the "profile" of the options: a profile name, a profile
// file's path, its JSON (in a string, or as the object itself), or a
// weighted set ("chrome:3,firefox:1,mine.json:2"), as the command line's
// --profile takes them.
type profileOption string

// UnmarshalJSON takes a string, or a profile file's object as is.
func (p *profileOption) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '{' {
		*p = profileOption(b)
		return nil
	}
	return json.Unmarshal(b, (*string)(p))
}

// chosenProfile is a profileOption resolved: a name, or one profile, or a
// set with the randomness of its draws.
type chosenProfile struct {
	name    string
	browser *profile.Profile
	set     profile.Set
	rand    io.Reader
}

// resolve opens the option's files now, so that a bad one fails when the
// Session or Transport is made, never at a request. seed, if not 0, makes
// the draws from a set reproducible.
func (p profileOption) resolve(seed uint64) (chosenProfile, error) {
	spec := string(p)
	if spec == "" {
		return chosenProfile{}, nil
	}
	if q, err := profile.Lookup(spec); err == nil {
		return chosenProfile{name: q.Name}, nil
	}
	set, err := profile.ParseSet(spec)
	if err != nil {
		return chosenProfile{}, err
	}
	if len(set) == 1 {
		return chosenProfile{browser: set[0].Profile}, nil
	}
	c := chosenProfile{set: set}
	if seed != 0 {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], seed)
		c.rand = rand.NewChaCha8(key)
	}
	return c, nil
}
