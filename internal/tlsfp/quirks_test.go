package tlsfp

import (
	"testing"

	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// TestQuirksFromProfileData: what a derived resumed hello leaves out and
// whether the GREASE ECH key is an X25519 key come from the profile's data,
// not from its browser: flipping the data flips the template, whatever the
// browser is called.
func TestQuirksFromProfileData(t *testing.T) {
	hasTicket := func(tp *template) bool {
		for _, e := range tp.spec.Extensions {
			if _, ok := e.(*utls.SessionTicketExtension); ok {
				return true
			}
		}
		return false
	}
	for _, name := range []string{"chrome", "firefox"} {
		base, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, omit := range []bool{false, true} {
			for _, x25519 := range []bool{false, true} {
				p := base.Clone()
				p.TLS.HelloResumed = nil // derived from Hello
				p.TLS.ResumeOmitsSessionTicket, p.TLS.ECHX25519Key = omit, x25519
				tp, err := compile(p, nil)
				if err != nil {
					t.Fatal(err)
				}
				if !hasTicket(tp) {
					t.Fatalf("%s: the full hello has no session_ticket", name)
				}
				if got := hasTicket(tp.resumed); got == omit {
					t.Errorf("%s omit=%v: derived resumed hello has session_ticket %v", name, omit, got)
				}
				if tp.ech == nil || tp.ech.x25519Enc != (x25519 && tp.ech.encLen == 32) {
					t.Errorf("%s x25519=%v: ech shape %+v", name, x25519, tp.ech)
				}
			}
		}
	}
}
