package guise

import (
	"reflect"
	"testing"

	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/profile"
)

// TestHPACKStyleFromData: each profile's HPACK data gives the encoder the
// style guise used before the style was data (Firefox's for Firefox,
// Chromium's for every other profile), so HEADERS blocks are unchanged.
func TestHPACKStyleFromData(t *testing.T) {
	for _, name := range profile.Names() {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want := h2.ChromiumHPACK()
		if p.Browser == profile.Firefox {
			want = h2.FirefoxHPACK()
		}
		if got := h2Config(p).HPACK; !reflect.DeepEqual(got, want) {
			t.Errorf("%s: HPACK style %+v, want %+v", name, got, want)
		}
	}
}
