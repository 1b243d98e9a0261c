package main

import (
	"encoding/binary"
	"math/rand/v2"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/profile"
)

// profileUsage is the help of --profile where it takes a set.
const profileUsage = "browser profile: a name (see 'guise profiles'), a profile file from 'guise capture', " +
	"or a weighted set such as chrome:3,firefox:1,mine.json:2 (one drawn per run; see --seed); default chrome"

// seedUsage is the help of --seed, the seed of a draw from a --profile set.
const seedUsage = "seed of the draw from a --profile set, for a reproducible pick (0: a random draw)"

// useProfile sets s up from --profile spec and --seed: a name stays a
// name; a file, its JSON or a set is opened now, so a bad one fails
// before any network traffic (as a usage error).
func useProfile(s *guise.Session, spec string, seed uint64) error {
	if spec == "" {
		return nil
	}
	if p, err := profile.Lookup(spec); err == nil {
		s.Profile = p.Name
		return nil
	}
	set, err := profile.ParseSet(spec)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if len(set) == 1 {
		s.Browser = set[0].Profile
		return nil
	}
	s.Profiles = set
	if seed != 0 {
		var key [32]byte
		binary.LittleEndian.PutUint64(key[:], seed)
		s.Rand = rand.NewChaCha8(key)
	}
	return nil
}

// profileName is the name of the profile s uses, for messages.
func profileName(s *guise.Session) string {
	p, err := s.ProfileInUse()
	if err != nil {
		return "(" + err.Error() + ")"
	}
	if !profile.IsEmbedded(p) {
		return p.Name + " (from a file)"
	}
	return p.Name
}
