package profile_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/guise-http/guise/profile"
)

func ExampleLookup() {
	p, err := profile.Lookup("firefox")
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Name, p.Browser, p.Version, p.OS, p.Recorded)
	var settings []string
	for _, s := range p.HTTP2.Settings {
		settings = append(settings, fmt.Sprintf("%v=%d", s.ID, s.Value))
	}
	fmt.Println(strings.Join(settings, " "))
	nav := p.HeaderSet(profile.Navigate, profile.H2)
	fmt.Println(nav.Header[0].Name, "|", nav.PerRequest)
	// Output:
	// firefox153-linux firefox 153 linux true
	// HEADER_TABLE_SIZE=65536 ENABLE_PUSH=0 INITIAL_WINDOW_SIZE=131072 MAX_FRAME_SIZE=16384
	// user-agent | [referer cookie sec-fetch-site]
}

func ExampleNames() {
	for _, name := range profile.Names() {
		fmt.Println(name)
	}
	// Output:
	// chrome156-android
	// chrome156-linux
	// chrome156-macos
	// chrome156-windows
	// edge156-macos
	// edge156-windows
	// firefox153-linux
	// firefox153-macos
	// firefox153-windows
	// okhttp4-android
	// safari18-ios
	// safari18-macos
	// safari26-ios
	// safari26-macos
}

func ExampleLoad() {
	_, err := profile.Load("testdata/no-such-profile.json")
	var le *profile.LoadError
	fmt.Println(errors.As(err, &le), le.Path)
	// Output:
	// true testdata/no-such-profile.json
}

func ExampleSet_Draw() {
	set, err := profile.ParseSet("chrome:3,firefox:1")
	if err != nil {
		panic(err)
	}
	seeded := rand.NewChaCha8([32]byte{1}) // any io.Reader; nil means crypto/rand
	n := map[profile.Browser]int{}
	for range 400 {
		p, err := set.Draw(seeded)
		if err != nil {
			panic(err)
		}
		n[p.Browser]++
	}
	fmt.Println(n[profile.Chrome] > 250, n[profile.Firefox] > 60)
	// Output:
	// true true
}
