//go:build cgo

package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"

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
		// A Transport's Sessions may start on several threads at once.
		c.rand = &lockedReader{r: rand.NewChaCha8(key)}
	}
	return c, nil
}

// lockedReader serialises the reads of r.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(b)
}

// requestProfiles caches the profiles of requests' own profile options
// (a file's path with its modification time and size, or its JSON), so
// that a request per call does not parse the file, nor compile a new
// profile, every time.
var requestProfiles sync.Map // string → *profile.Profile

// requestProfile resolves a request's profile option that is not a name:
// a file or its JSON, or a set, drawn from per request (each isolated
// request is a visit of its own).
func requestProfile(spec string) (*profile.Profile, error) {
	key := spec
	if fi, err := os.Stat(spec); err == nil {
		key = fmt.Sprintf("%s\x00%d\x00%d", spec, fi.ModTime().UnixNano(), fi.Size())
	}
	if v, ok := requestProfiles.Load(key); ok {
		return v.(profile.Set).Draw(nil)
	}
	c, err := profileOption(spec).resolve(0)
	if err != nil {
		return nil, err
	}
	set := c.set
	if c.browser != nil {
		set = profile.Set{{Profile: c.browser, Weight: 1}}
	}
	v, _ := requestProfiles.LoadOrStore(key, set)
	return v.(profile.Set).Draw(nil)
}
