package decode

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestChain(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   []Coding
		ok     bool
		err    error
	}{
		{"none", nil, nil, true, nil},
		{"empty line", []string{""}, nil, true, nil},
		{"empty members", []string{" , ,\t,"}, nil, true, nil},
		{"identity", []string{"identity"}, nil, true, nil},
		{"gzip", []string{"gzip"}, []Coding{Gzip}, true, nil},
		{"upper case (D-06)", []string{"GZIP"}, []Coding{Gzip}, true, nil},
		{"x-gzip (D-06)", []string{"x-gzip"}, []Coding{Gzip}, true, nil},
		{"X-GZip", []string{"X-GZip"}, []Coding{Gzip}, true, nil},
		{"deflate", []string{"Deflate"}, []Coding{Deflate}, true, nil},
		{"br", []string{"BR"}, []Coding{Brotli}, true, nil},
		{"zstd", []string{"zstd"}, []Coding{Zstd}, true, nil},
		{"stacked in order (D-06)", []string{"gzip, br"}, []Coding{Gzip, Brotli}, true, nil},
		{"stacked over lines", []string{"gzip", "identity", "br", "", "zstd"}, []Coding{Gzip, Brotli, Zstd}, true, nil},
		{"OWS", []string{" \tgzip\t ,  deflate "}, []Coding{Gzip, Deflate}, true, nil},
		{"five", []string{"gzip, gzip, gzip, gzip, gzip"}, []Coding{Gzip, Gzip, Gzip, Gzip, Gzip}, true, nil},
		{"five over lines", []string{"gzip", "br", "zstd", "deflate", "gzip, identity"}, []Coding{Gzip, Brotli, Zstd, Deflate, Gzip}, true, nil},
		{"unknown (D-07)", []string{"compress"}, nil, false, nil},
		{"unknown in chain (D-07)", []string{"gzip, foo"}, nil, false, nil},
		{"unknown on another line (D-07)", []string{"gzip", "foo", "br"}, nil, false, nil},
		{"parameter is not a coding", []string{"gzip;q=1"}, nil, false, nil},
		{"gzip with inner space", []string{"g zip"}, nil, false, nil},
		{"six (D-01)", []string{"gzip,gzip,gzip,gzip,gzip,gzip"}, nil, false, ErrTooManyEncodings},
		{"six over lines (D-01)", []string{"gzip", "gzip", "gzip", "gzip", "gzip", "gzip"}, nil, false, ErrTooManyEncodings},
		{"six split unevenly (D-01)", []string{"gzip, br", "zstd,deflate", "gzip", "br"}, nil, false, ErrTooManyEncodings},
		{"six with unknowns (D-01)", []string{"a,b,c", "d,e,f"}, nil, false, ErrTooManyEncodings},
		{"identities do not count", []string{strings.Repeat("identity,", 100) + "gzip"}, []Coding{Gzip}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, err := Chain(tt.values)
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if ok != tt.ok || !slices.Equal(got, tt.want) {
				t.Fatalf("Chain(%q) = %v, %v; want %v, %v", tt.values, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestChainManyLines(t *testing.T) {
	// CVE-2023-23916: the cap is over all lines together, however many there are.
	values := make([]string, 10000)
	for i := range values {
		values[i] = "gzip"
	}
	if _, _, err := Chain(values); !errors.Is(err, ErrTooManyEncodings) {
		t.Fatalf("err = %v, want ErrTooManyEncodings", err)
	}
}

func TestAppendChain(t *testing.T) {
	dst := []Coding{Zstd}
	got, ok, err := AppendChain(dst, []string{"gzip", "br"})
	if err != nil || !ok || !slices.Equal(got, []Coding{Zstd, Gzip, Brotli}) {
		t.Fatalf("AppendChain = %v, %v, %v", got, ok, err)
	}
	got, ok, err = AppendChain(dst, []string{"gzip", "nope"})
	if err != nil || ok || !slices.Equal(got, []Coding{Zstd}) {
		t.Fatalf("AppendChain unknown = %v, %v, %v; want dst unchanged", got, ok, err)
	}
	got, _, err = AppendChain(dst, []string{"gzip,gzip,gzip", "gzip,gzip,gzip"})
	if !errors.Is(err, ErrTooManyEncodings) || !slices.Equal(got, []Coding{Zstd}) {
		t.Fatalf("AppendChain six = %v, %v; want dst unchanged and ErrTooManyEncodings", got, err)
	}
}

func TestChainAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	one := []string{"gzip"}
	two := []string{"gzip, br"}
	var buf [MaxCodings]Coding
	if n := testing.AllocsPerRun(100, func() { Chain(one) }); n != 0 {
		t.Errorf("Chain(one coding) allocs = %v, want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { AppendChain(buf[:0], two) }); n != 0 {
		t.Errorf("AppendChain allocs = %v, want 0", n)
	}
}

func TestCodingString(t *testing.T) {
	for c, want := range map[Coding]string{Gzip: "gzip", Deflate: "deflate", Brotli: "br", Zstd: "zstd", 0: "Coding(0)", 9: "Coding(9)"} {
		if got := c.String(); got != want {
			t.Errorf("Coding(%d).String() = %q, want %q", c, got, want)
		}
	}
}
