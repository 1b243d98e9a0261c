package cookie

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func fillJar(t *testing.T, j *Jar) {
	t.Helper()
	set(t, j, "https://www.example.com/a/b", "sess=1", "pers=2; Max-Age=3600; HttpOnly",
		"dom=3; Domain=example.com; Path=/; Secure; SameSite=Strict", "__Host-h=4; Secure; Path=/; SameSite=None",
		"part=5; Secure; Partitioned; SameSite=Lax", "novalue=", "nameless")
	set(t, j, "https://192.168.1.1/", "ip=6")
}

func cookieKey(c *Cookie) string {
	return c.Name + "|" + c.Value + "|" + c.Domain + "|" + c.Path + "|" +
		map[bool]string{true: "H", false: "D"}[c.HostOnly] + map[bool]string{true: "S", false: "-"}[c.Secure] +
		map[bool]string{true: "O", false: "-"}[c.HttpOnly]
}

func TestJSONRoundTrip(t *testing.T) {
	j, _ := newTestJar(t, nil)
	fillJar(t, j)
	var buf bytes.Buffer
	if err := j.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	j2, _ := newTestJar(t, nil)
	if err := j2.ReadJSON(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("ReadJSON: %v\n%s", err, buf.String())
	}
	a, b := j.All(), j2.All()
	if len(a) != len(b) || len(a) != 8 {
		t.Fatalf("round trip: %d vs %d cookies", len(a), len(b))
	}
	for i := range a {
		if *a[i] != *b[i] && !(cookieKey(a[i]) == cookieKey(b[i]) && a[i].Expires.Equal(b[i].Expires) &&
			a[i].SameSite == b[i].SameSite && a[i].Partitioned == b[i].Partitioned && a[i].Created.Equal(b[i].Created)) {
			t.Errorf("cookie %d: %+v != %+v", i, a[i], b[i])
		}
	}
	for _, u := range []string{"https://www.example.com/a/b", "https://x.example.com/", "https://192.168.1.1/"} {
		if h1, h2 := header(t, j, u, SameSiteRequest), header(t, j2, u, SameSiteRequest); h1 != h2 {
			t.Errorf("%s: %q vs %q after import", u, h1, h2)
		}
	}
}

// TestJSONExtensionFormat reads the array format browser extensions write.
func TestJSONExtensionFormat(t *testing.T) {
	j, _ := newTestJar(t, nil)
	in := `[
 {"domain":".example.com","hostOnly":false,"httpOnly":true,"name":"a","path":"/","sameSite":"no_restriction","secure":true,"session":false,"expirationDate":1800000000.5,"value":"1"},
 {"domain":"www.example.com","hostOnly":true,"name":"b","path":"/","sameSite":"unspecified","secure":false,"session":true,"value":"2"},
 {"domain":"old.example.com","hostOnly":true,"name":"c","path":"/","session":false,"expirationDate":1000,"value":"3"},
 {"domain":".co.uk","hostOnly":false,"name":"evil","path":"/","value":"4"},
 {"domain":"www.example.com","hostOnly":true,"name":"x","path":"/","sameSite":"weird","value":"5"},
 {"domain":"example.com","name":"ho","path":"/","value":"6"},
 {"domain":".example.com","name":"dom","path":"/","value":"7"}
]`
	err := j.ReadJSON(strings.NewReader(in))
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Skipped != 2 || ie.Entry != 4 || !errors.Is(err, ErrPublicSuffix) {
		t.Fatalf("ReadJSON = %v (%+v)", err, ie)
	}
	if got := header(t, j, "https://www.example.com/", CrossSite); got != "a=1" {
		t.Fatalf("cross-site header %q", got)
	}
	if got := header(t, j, "https://www.example.com/", SameSiteRequest); got != "a=1; b=2; dom=7" {
		t.Fatalf("header %q", got)
	}
	if got := header(t, j, "https://example.com/", SameSiteRequest); got != "a=1; ho=6; dom=7" {
		t.Fatalf("header %q", got)
	}
	all := j.All()
	if len(all) != 4 || all[0].Name != "a" || !all[0].Expires.Equal(time.Unix(1800000000, 5e8)) ||
		all[0].HostOnly || !all[0].HttpOnly || all[0].SameSite != SameSiteNone || !all[3].Expires.IsZero() {
		t.Fatalf("imported: %+v %+v", all[0], all[1])
	}
	if err := j.ReadJSON(strings.NewReader(`{"cookies": [`)); err == nil || errors.As(err, &ie) {
		t.Fatalf("malformed JSON: %v", err)
	}
}

func TestNetscapeRoundTrip(t *testing.T) {
	j, _ := newTestJar(t, nil)
	fillJar(t, j)
	set(t, j, "https://tab.example.com/", "t=a\tb") // not representable
	var buf bytes.Buffer
	if err := j.WriteNetscape(&buf); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"# Netscape HTTP Cookie File\n",
		"\n#HttpOnly_www.example.com\tFALSE\t/a\tFALSE\t" + "1780318800" + "\tpers\t2\n",
		"\n.example.com\tTRUE\t/\tTRUE\t0\tdom\t3\n",
		"\nwww.example.com\tFALSE\t/a\tFALSE\t0\t\tnameless\n",
		"\n192.168.1.1\tFALSE\t/\tFALSE\t0\tip\t6\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "a\tb") {
		t.Error("cookie with a TAB written")
	}
	j2, _ := newTestJar(t, nil)
	if err := j2.ReadNetscape(strings.NewReader(out)); err != nil {
		t.Fatal(err)
	}
	a, b := j.All(), j2.All()
	a = slices.DeleteFunc(a, func(c *Cookie) bool { return c.Name == "t" })
	if len(b) != len(a) {
		t.Fatalf("%d cookies read back, want %d", len(b), len(a))
	}
	for i := range b {
		if cookieKey(a[i]) != cookieKey(b[i]) || !a[i].Expires.Equal(b[i].Expires) {
			t.Errorf("cookie %d: %s vs %s", i, cookieKey(a[i]), cookieKey(b[i]))
		}
	}
}

func TestReadNetscape(t *testing.T) {
	j, _ := newTestJar(t, nil)
	in := strings.Join([]string{
		"# Netscape HTTP Cookie File",
		"# a comment",
		"",
		".example.com\tTRUE\t/\tFALSE\t0\tdom\t1",
		"#HttpOnly_www.example.com\tFALSE\t/\tTRUE\t1800000000\tho\t2\r",
		"www.example.com\tFALSE\t/\tFALSE\t0\tempty", // six fields: empty value
		"www.example.com\tFALSE\t/\tFALSE\t1000\texpired\tx",
		"bad line",                                         // 5: malformed
		".co.uk\tTRUE\t/\tFALSE\t0\tsuper\t1",              // 6: public suffix
		"www.example.com\tMAYBE\t/\tFALSE\t0\tx\t1",        // 7: bad flag
		"www.example.com\tFALSE\t/\tFALSE\t-1\tx\t1",       // 8: bad expiry
		"www.example.com\tFALSE\t/\tFALSE\t0\t__Host-x\t1", // 9: prefix without Secure
		"www.example.com\tFALSE\t/\tFALSE\t0\tnul\ta\x00b", // 10: control char
		"co.uk\tFALSE\t/\tFALSE\t0\tsuffixhost\t1",         // host-only on a suffix is fine
	}, "\n")
	err := j.ReadNetscape(strings.NewReader(in))
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Skipped != 6 || ie.Entry != 8 {
		t.Fatalf("ReadNetscape = %v", err)
	}
	if got := header(t, j, "https://www.example.com/", SameSiteRequest); got != "dom=1; ho=2; empty=" {
		t.Fatalf("header %q", got)
	}
	if got := header(t, j, "http://www.example.com/", SameSiteRequest); got != "dom=1; empty=" {
		t.Fatalf("http header %q", got)
	}
	if got := header(t, j, "https://co.uk/", SameSiteRequest); got != "suffixhost=1" {
		t.Fatalf("suffix host %q", got)
	}
	for _, c := range j.All() {
		if c.Name == "ho" && (!c.HttpOnly || !c.Secure || c.Expires.Unix() != 1800000000) {
			t.Fatalf("ho: %+v", c)
		}
	}
	// Over-long line.
	err = j.ReadNetscape(strings.NewReader(strings.Repeat("x", maxLineBytes+1)))
	if err == nil || errors.As(err, &ie) {
		t.Fatalf("over-long line: %v", err)
	}
}

// TestImportLimits: imports obey the caps too.
func TestImportLimits(t *testing.T) {
	j, _ := newTestJar(t, &Options{MaxPerDomain: 10})
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("example.com\tFALSE\t/\tFALSE\t0\tc")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("\tv\n")
	}
	if err := j.ReadNetscape(strings.NewReader(b.String())); err != nil {
		t.Fatal(err)
	}
	if j.Len() > 10 {
		t.Fatalf("Len %d", j.Len())
	}
}

// TestJSONPlaywright reads Playwright's storageState cookies.
func TestJSONPlaywright(t *testing.T) {
	j, _ := newTestJar(t, nil)
	in := `{"cookies":[
 {"name":"s","value":"1","domain":"www.example.com","path":"/","expires":-1,"httpOnly":true,"secure":true,"sameSite":"Lax"},
 {"name":"d","value":"2","domain":".example.com","path":"/","expires":1800000000,"httpOnly":false,"secure":false,"sameSite":"None"}
],"origins":[]}`
	err := j.ReadJSON(strings.NewReader(in))
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Skipped != 1 || ie.Entry != 2 || !errors.Is(err, ErrSameSiteNone) {
		t.Fatalf("ReadJSON = %v", err)
	}
	all := j.All()
	if len(all) != 1 || all[0].Name != "s" || !all[0].HostOnly || !all[0].Expires.IsZero() || all[0].SameSite != SameSiteLax {
		t.Fatalf("imported %+v", all)
	}
	in = `{"cookies":[{"name":"d","value":"2","domain":".example.com","path":"/","expires":1800000000.25,"sameSite":"Strict"}]}`
	if err := j.ReadJSON(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	if got := header(t, j, "https://a.example.com/", SameSiteRequest); got != "d=2" {
		t.Fatalf("header %q", got)
	}
	for _, c := range j.All() {
		if c.Name == "d" && (!c.Expires.Equal(time.Unix(1800000000, 25e7)) || c.HostOnly) {
			t.Fatalf("d: %+v", c)
		}
	}
	if err := j.ReadJSON(strings.NewReader(`{"cookies":[{"name":"x","expires":true}]}`)); err == nil || errors.As(err, &ie) {
		t.Fatalf("bad expires: %v", err)
	}
}
