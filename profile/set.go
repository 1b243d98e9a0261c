package profile

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Weighted is one member of a Set: a profile and its weight.
type Weighted struct {
	Profile *Profile
	// Weight is the member's share of the draws, relative to the others';
	// it must be positive.
	Weight int
}

// Set is a set of profiles with weights, for programs that should not all
// look like one browser: a Session given a Set draws one member, once, and
// is that browser for its whole life (see guise.Session.Profiles). A Set
// is read-only once in use.
type Set []Weighted

// MaxWeight bounds a Set member's weight.
const MaxWeight = 1 << 20

// Check reports why s cannot be drawn from: it is empty, or a member has
// no profile or a weight out of 1..MaxWeight. The error is a *ParseError
// whose Field is the member's index ("[2].weight").
func (s Set) Check() error {
	if len(s) == 0 {
		return &ParseError{Reason: "empty profile set"}
	}
	for i, w := range s {
		if w.Profile == nil {
			return perr(fmt.Sprintf("[%d].profile", i), "missing")
		}
		if w.Weight < 1 || w.Weight > MaxWeight {
			return perr(fmt.Sprintf("[%d].weight", i), "%d out of range 1..%d", w.Weight, MaxWeight)
		}
	}
	return nil
}

// Draw picks one member's profile with a probability proportional to its
// weight, reading random bytes from r (nil means crypto/rand). The same
// bytes give the same pick: give a seeded reader for reproducible draws.
func (s Set) Draw(r io.Reader) (*Profile, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	if r == nil {
		r = rand.Reader
	}
	total := uint64(0)
	for _, w := range s {
		total += uint64(w.Weight)
	}
	// Rejection sampling keeps every weight exact.
	limit := ^uint64(0) - ^uint64(0)%total
	var b [8]byte
	for {
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, fmt.Errorf("profile: drawing from the set: %w", err)
		}
		if v := binary.LittleEndian.Uint64(b[:]); v < limit {
			v %= total
			for _, w := range s {
				if v < uint64(w.Weight) {
					return w.Profile, nil
				}
				v -= uint64(w.Weight)
			}
		}
	}
}

// ParseSet parses a set written as comma-separated members, each a profile
// spec as Open takes it (a name or a file's path) with an optional
// ":weight" (default 1): "chrome:3,firefox:1", "mine.json:2,safari". A
// spec that is one profile's JSON is a set of that one profile. Every
// member is opened now, so a bad file or name fails here.
func ParseSet(spec string) (Set, error) {
	if s := strings.TrimSpace(spec); strings.HasPrefix(s, "{") {
		p, err := Open(s)
		if err != nil {
			return nil, err
		}
		return Set{{Profile: p, Weight: 1}}, nil
	}
	var set Set
	for i, m := range strings.Split(spec, ",") {
		m = strings.TrimSpace(m)
		name, weight := m, 1
		if j := strings.LastIndexByte(m, ':'); j >= 0 && isDigits(m[j+1:]) {
			w, err := strconv.Atoi(m[j+1:])
			if err != nil || w < 1 || w > MaxWeight {
				return nil, perr(fmt.Sprintf("[%d].weight", i), "%q out of range 1..%d", m[j+1:], MaxWeight)
			}
			name, weight = m[:j], w
		}
		if name == "" {
			return nil, perr(fmt.Sprintf("[%d]", i), "empty member in %q", spec)
		}
		p, err := Open(name)
		if err != nil {
			return nil, err
		}
		set = append(set, Weighted{Profile: p, Weight: weight})
	}
	return set, nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
