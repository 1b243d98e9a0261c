package fingerprint

import "testing"

// The echo server parses every connection's hello and computes its
// fingerprints; these budgets keep that cheap.
func BenchmarkParseClientHelloJA4(b *testing.B) {
	r := loadRecordings(b)[0] // Chromium 156, 2 KB post-quantum hello
	b.SetBytes(int64(len(r.hello)))
	b.ReportAllocs()
	for b.Loop() {
		ch, err := ParseClientHello(r.hello)
		if err != nil {
			b.Fatal(err)
		}
		if len(ch.JA4()) != 36 {
			b.Fatal("ja4")
		}
	}
}

func BenchmarkClientHelloAllFingerprints(b *testing.B) {
	r := loadRecordings(b)[0]
	ch, err := ParseClientHello(r.hello)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_, _, _, _ = ch.JA3(), ch.JA3Hash(), ch.JA3N(), ch.JA3NHash()
		_, _, _, _ = ch.JA4(), ch.JA4R(), ch.JA4O(), ch.JA4RO()
	}
}

func BenchmarkParseHTTP2Akamai(b *testing.B) {
	r := loadRecordings(b)[0]
	b.SetBytes(int64(len(r.stream)))
	b.ReportAllocs()
	for b.Loop() {
		h, err := ParseHTTP2(r.stream)
		if err != nil {
			b.Fatal(err)
		}
		_ = h.Akamai()
	}
}

func BenchmarkParseHTTP1RequestJA4H(b *testing.B) {
	head := []byte(foxioJA4HHead)
	b.SetBytes(int64(len(head)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := ParseHTTP1Request(head)
		if err != nil {
			b.Fatal(err)
		}
		_ = r.JA4H()
	}
}

// Allocation budgets, measured on the Chromium recording: parsing the
// hello allocates the ClientHello, its typed lists and strings; JA4 only
// its result string.
func TestClientHelloAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	r := loadRecordings(t)[0]
	parse := testing.AllocsPerRun(100, func() {
		if _, err := ParseClientHello(r.hello); err != nil {
			t.Fatal(err)
		}
	})
	ch, _ := ParseClientHello(r.hello)
	ja4 := testing.AllocsPerRun(100, func() { _ = ch.JA4() })
	ja3 := testing.AllocsPerRun(100, func() { _ = ch.JA3Hash() })
	t.Logf("ParseClientHello %v allocs, JA4 %v, JA3Hash %v", parse, ja4, ja3)
	if parse > 13 || ja4 > 1 || ja3 > 1 {
		t.Errorf("allocs: ParseClientHello %v (budget 13), JA4 %v (budget 1), JA3Hash %v (budget 1)", parse, ja4, ja3)
	}
}
