package cookie

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// The Netscape cookies.txt format, as curl and wget read and write it: one
// cookie per line, seven TAB-separated fields
//
//	domain  include-subdomains  path  secure  expires  name  value
//
// with TRUE/FALSE flags, expires in Unix seconds (0 for a session cookie),
// a leading "." on the domain of a domain cookie, and a "#HttpOnly_" prefix
// on the domain of an HttpOnly cookie. Other lines starting with '#', and
// blank lines, are comments. SameSite and Partitioned are not represented.

const (
	netscapeHeader = "# Netscape HTTP Cookie File\n# Written by guise; one cookie per line, TAB-separated.\n\n"
	httpOnlyPrefix = "#HttpOnly_"
	maxLineBytes   = 1 << 20
)

var errNetscapeLine = errors.New("cookie: malformed cookies.txt line")

// WriteNetscape writes every unexpired cookie in the Netscape cookies.txt
// format (see ReadNetscape). Cookies whose name, value or path contain a
// TAB cannot be represented and are left out.
func (j *Jar) WriteNetscape(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(netscapeHeader)
	for _, c := range j.All() {
		if strings.ContainsAny(c.Name+c.Value+c.Path, "\t\r\n") {
			continue
		}
		if c.HttpOnly {
			bw.WriteString(httpOnlyPrefix)
		}
		if !c.HostOnly {
			bw.WriteByte('.')
		}
		bw.WriteString(c.Domain)
		bw.WriteString(tf(!c.HostOnly))
		bw.WriteString("\t")
		bw.WriteString(c.Path)
		bw.WriteString(tf(c.Secure))
		bw.WriteByte('\t')
		var exp int64
		if !c.Expires.IsZero() {
			exp = max(c.Expires.Unix(), 1)
		}
		bw.WriteString(strconv.FormatInt(exp, 10))
		bw.WriteByte('\t')
		bw.WriteString(c.Name)
		bw.WriteByte('\t')
		bw.WriteString(c.Value)
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("cookie: write cookies.txt: %w", err)
	}
	return nil
}

func tf(b bool) string {
	if b {
		return "\tTRUE"
	}
	return "\tFALSE"
}

// ReadNetscape adds the cookies of a Netscape cookies.txt file (as curl,
// wget and browser extensions write it, including curl's "#HttpOnly_"
// prefix) to the jar. A line with six fields has an empty value. Cookies
// pass the checks a Set-Cookie would; malformed lines and invalid cookies
// are skipped and reported in an *ImportError (Entry is the line number)
// after the valid ones were added. Expired cookies are skipped silently. A
// line longer than 1 MiB, or more than 64 MiB in total, is an error.
func (j *Jar) ReadNetscape(r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, maxImportBytes+1))
	if err != nil {
		return fmt.Errorf("cookie: read cookies.txt: %w", err)
	}
	if len(data) > maxImportBytes {
		return ErrImportTooLarge
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), maxLineBytes)
	j.mu.Lock()
	defer j.mu.Unlock()
	im := importer{j: j, now: j.now()}
	for line := 1; sc.Scan(); line++ {
		c, ok, err := parseNetscapeLine(sc.Text())
		switch {
		case err != nil:
			im.fail(line, err)
		case ok:
			im.add(line, c)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("cookie: read cookies.txt: %w", err) // a line over 1 MiB
	}
	return im.result()
}

// parseNetscapeLine parses one line; ok is false for comments and blanks.
func parseNetscapeLine(line string) (c *Cookie, ok bool, err error) {
	line = strings.TrimSuffix(line, "\r")
	httpOnly := false
	if strings.HasPrefix(line, httpOnlyPrefix) {
		httpOnly, line = true, line[len(httpOnlyPrefix):]
	} else if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
		return nil, false, nil
	}
	f := strings.Split(line, "\t")
	if len(f) == 6 {
		f = append(f, "")
	}
	if len(f) != 7 {
		return nil, false, errNetscapeLine
	}
	sub, ok1 := parseTF(f[1])
	sec, ok2 := parseTF(f[3])
	exp, err := strconv.ParseInt(f[4], 10, 64)
	if !ok1 || !ok2 || err != nil || exp < 0 || f[0] == "" {
		return nil, false, errNetscapeLine
	}
	c = &Cookie{
		Domain: f[0], HostOnly: !sub, Path: f[2], Secure: sec, Name: f[5], Value: f[6], HttpOnly: httpOnly,
	}
	if exp > 0 {
		c.Expires = time.Unix(min(exp, 1e11), 0).UTC()
	}
	return c, true, nil
}

func parseTF(s string) (bool, bool) {
	switch {
	case strings.EqualFold(s, "TRUE"):
		return true, true
	case strings.EqualFold(s, "FALSE"):
		return false, true
	}
	return false, false
}
