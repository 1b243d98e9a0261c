package fields

import (
	"slices"
	"testing"
)

func names(h Header) []string {
	var n []string
	for _, f := range h {
		n = append(n, f.Name+"="+f.Value)
	}
	return n
}

func TestMergeKeepsDefaultOrderAndCallerCase(t *testing.T) {
	defaults := Header{{"Host", ""}, {"User-Agent", "ua"}, {"Accept", "*/*"}, {"Accept-Encoding", "gzip"}}
	user := Header{{"x-new", "1"}, {"user-agent", "mine"}, {"X-Two", "2"}, {"ACCEPT", "a"}, {"accept", "b"}}
	got := names(Merge(nil, defaults, user))
	want := []string{"Host=", "user-agent=mine", "ACCEPT=a", "accept=b", "Accept-Encoding=gzip", "x-new=1", "X-Two=2"}
	if !slices.Equal(got, want) {
		t.Fatalf("Merge\n got %q\nwant %q", got, want)
	}
}

func TestMergeAllocatesNothingWithRoom(t *testing.T) {
	defaults := Header{{"a", "1"}, {"b", "2"}, {"c", "3"}}
	user := Header{{"B", "x"}, {"d", "4"}}
	dst := make(Header, 0, 8)
	if n := testing.AllocsPerRun(100, func() { dst = Merge(dst[:0], defaults, user) }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}

func TestSetDelGet(t *testing.T) {
	h := Header{{"A", "1"}, {"b", "2"}, {"a", "3"}}
	if h.Get("a") != "1" || !h.Has("B") || h.Has("c") {
		t.Fatal("lookups")
	}
	if v := h.Values("A"); !slices.Equal(v, []string{"1", "3"}) {
		t.Fatalf("Values %q", v)
	}
	h.Set("a", "9")
	if got := names(h); !slices.Equal(got, []string{"A=9", "b=2"}) {
		t.Fatalf("Set %q", got)
	}
	h.Set("c", "4")
	h = h.Del("B")
	if got := names(h); !slices.Equal(got, []string{"A=9", "c=4"}) {
		t.Fatalf("Del %q", got)
	}
	c := h.Clone()
	c[0].Value = "x"
	if h[0].Value != "9" {
		t.Fatal("Clone shares its backing array")
	}
}

func TestValidation(t *testing.T) {
	for _, n := range []string{"a", "X-Foo", "!#$%&'*+-.^_`|~09"} {
		if !ValidName(n) {
			t.Errorf("ValidName(%q) = false", n)
		}
	}
	for _, n := range []string{"", "a b", "a:b", "a\r", "имя", "a\x00", "a\x7f", "(x)"} {
		if ValidName(n) {
			t.Errorf("ValidName(%q) = true", n)
		}
	}
	for _, v := range []string{"", "a b", "a\tb", "\x80\xff obs-text", `"q"`} {
		if !ValidValue(v) {
			t.Errorf("ValidValue(%q) = false", v)
		}
	}
	for _, v := range []string{"a\rb", "a\nb", "a\x00", "a\x7f", " lead", "trail\t", "a\x01"} {
		if ValidValue(v) {
			t.Errorf("ValidValue(%q) = true", v)
		}
	}
}

func TestHasTokenAndEqualFold(t *testing.T) {
	if !HasToken("gzip, Chunked", "chunked") || HasToken("xchunked", "chunked") || HasToken("", "a") {
		t.Fatal("HasToken")
	}
	if !EqualFold("Content-Length", "content-LENGTH") || EqualFold("a", "ab") || EqualFold("K", "\u212a") {
		t.Fatal("EqualFold")
	}
}
