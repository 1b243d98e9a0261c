package altsvc

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	for in, want := range map[string][]Alternative{
		`h3=":443"`:                                     {{Protocol: "h3", Port: 443, MaxAge: DefaultMaxAge}},
		`h3=":8443"; ma=60, h2=":443"`:                  {{Protocol: "h3", Port: 8443, MaxAge: time.Minute}, {Protocol: "h2", Port: 443, MaxAge: DefaultMaxAge}},
		` h3="alt.example:443";MA=5; persist=1 `:        {{Protocol: "h3", Host: "alt.example", Port: 443, MaxAge: 5 * time.Second, Persist: true}},
		`h3=":443"; ma=86400; foo="a,b;c", ,h3-29=":1"`: {{Protocol: "h3", Port: 443, MaxAge: DefaultMaxAge}, {Protocol: "h3-29", Port: 1, MaxAge: DefaultMaxAge}},
		`w%3Dx%3Ay=":80"`:                               {{Protocol: "w=x:y", Port: 80, MaxAge: DefaultMaxAge}},
		`h3="[::1]:443"; ma=99999999999999999999999`:    {{Protocol: "h3", Host: "[::1]", Port: 443, MaxAge: maxMaxAge}},
	} {
		got, clear, err := Parse(in)
		if err != nil || clear || len(got) != len(want) {
			t.Errorf("%q: %v %v %v", in, got, clear, err)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%q: [%d] %+v, want %+v", in, i, got[i], want[i])
			}
		}
	}
	if _, clear, err := Parse(" clear "); !clear || err != nil {
		t.Errorf("clear: %v %v", clear, err)
	}
}

// TestParseBadInput is RELIABILITY Q-57: malformed values are typed
// errors (ErrSyntax with an offset), never a panic, and an over-long value
// is refused whole.
func TestParseBadInput(t *testing.T) {
	for _, in := range []string{
		``, `h3`, `h3=:443`, `h3=":443`, `h3="443"`, `h3=":0"`, `h3=":65536"`, `h3=":-1"`, `h3=":443";`,
		`h3=":443"; ma`, `h3=":443"; ma=x`, `h3=":443" h2=":443"`, `h3="[::1:443"`, `h%zz=":443"`,
		`h3="a/b:443"`, "h3=\":44\x013\"", `h3=":443"; =1`, `clear, h3=":443"`,
		`h3=":443", ` + strings.Repeat("x", MaxFieldLen),
	} {
		_, _, err := Parse(in)
		var se *SyntaxError
		if !errors.Is(err, ErrSyntax) || !errors.As(err, &se) {
			t.Errorf("%.40q: %v, want a SyntaxError", in, err)
		}
	}
	many := strings.Repeat(`h3=":443", `, 40) + `h3=":1"`
	if alts, _, err := Parse(many); err != nil || len(alts) != MaxAlternatives {
		t.Errorf("41 alternatives: %d kept, %v", len(alts), err)
	}
}

func TestCache(t *testing.T) {
	var c Cache
	now := time.Unix(1e9, 0)
	const o = "https://a.example:443"
	if _, ok := c.Lookup(o, now); ok {
		t.Fatal("empty cache answered")
	}
	c.Update(o, []string{`h2=":443", h3="other.example:443", h3=":8443"; ma=60`}, now)
	a, ok := c.Lookup(o, now)
	if !ok || a.Port != 8443 || a.Host != "" {
		t.Fatalf("%+v %v", a, ok)
	}
	if _, ok := c.Lookup(o, now.Add(61*time.Second)); ok {
		t.Error("expired alternative answered")
	}
	if _, ok := c.Lookup("https://b.example:443", now); ok {
		t.Error("another origin answered")
	}
	if err := c.Update(o, []string{`h3=`}, now); !errors.Is(err, ErrSyntax) {
		t.Errorf("bad value: %v", err)
	}
	if _, ok := c.Lookup(o, now); !ok {
		t.Error("a bad value dropped the alternative")
	}
	c.Update(o, []string{"clear"}, now)
	if _, ok := c.Lookup(o, now); ok || c.Len() != 0 {
		t.Error("clear kept the alternative")
	}
	for i := range MaxOrigins + 10 {
		c.Update("https://h"+string(rune('a'+i%26))+strings.Repeat("x", i/26)+":443", []string{`h3=":443"`}, now)
	}
	if c.Len() > MaxOrigins {
		t.Errorf("%d origins past the bound", c.Len())
	}
}

// TestBrokenBackoff is RELIABILITY Q-58: a broken alternative is skipped
// for 5 minutes, then 10, 20 ... (Chromium's doubling) up to 2 days, and
// forgotten once it works.
func TestBrokenBackoff(t *testing.T) {
	var c Cache
	now := time.Unix(1e9, 0)
	const o = "https://a.example:443"
	c.Update(o, []string{`h3=":443"; ma=31536000`}, now)
	a, _ := c.Lookup(o, now)
	want := BrokenDelay
	for i := range 12 {
		d := c.MarkBroken(o, a, now)
		if d != want {
			t.Fatalf("failure %d: %v, want %v", i+1, d, want)
		}
		if _, ok := c.Lookup(o, now.Add(d-time.Second)); ok {
			t.Fatalf("failure %d: offered before %v", i+1, d)
		}
		if _, ok := c.Lookup(o, now.Add(d)); !ok {
			t.Fatalf("failure %d: not offered after %v", i+1, d)
		}
		now = now.Add(d)
		want = min(want*2, MaxBrokenDelay)
	}
	c.MarkWorking(o, a)
	if d := c.MarkBroken(o, a, now); d != BrokenDelay {
		t.Errorf("after working: %v", d)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`h3=":443"; ma=86400`, `clear`, `h3="a:1";persist=1, h2=":2"`, `w%3D=":1"; x="\"y"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		alts, clear, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("untyped %v", err)
			}
			return
		}
		if clear && len(alts) > 0 || !clear && len(alts) == 0 || len(alts) > MaxAlternatives {
			t.Fatalf("%d alternatives, clear %v", len(alts), clear)
		}
		for _, a := range alts {
			if a.Port < 1 || a.Port > 65535 || a.MaxAge < 0 || a.MaxAge > maxMaxAge || a.Protocol == "" {
				t.Fatalf("%+v", a)
			}
		}
	})
}
