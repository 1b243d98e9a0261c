package cookie

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
)

// maxImportBytes bounds what ReadJSON and ReadNetscape read.
const maxImportBytes = 64 << 20

// ErrImportTooLarge is returned when an import exceeds 64 MiB.
var ErrImportTooLarge = errors.New("cookie: import larger than 64 MiB")

// jsonFile is the document WriteJSON writes.
type jsonFile struct {
	Version int          `json:"version"`
	Cookies []jsonCookie `json:"cookies"`
}

// jsonCookie is one cookie in JSON. Besides guise's own fields it reads the
// fields browser extensions export ("expirationDate" in Unix seconds,
// "session", sameSite "no_restriction"/"unspecified") and Playwright's
// storageState ("expires" in Unix seconds, -1 for a session cookie).
type jsonCookie struct {
	Name        string     `json:"name"`
	Value       string     `json:"value"`
	Domain      string     `json:"domain"`
	Path        string     `json:"path"`
	HostOnly    *bool      `json:"hostOnly,omitempty"` // absent: host-only unless the domain starts with '.'
	Secure      bool       `json:"secure"`
	HttpOnly    bool       `json:"httpOnly"`
	SameSite    string     `json:"sameSite,omitempty"`
	Expires     *flexTime  `json:"expires,omitempty"`
	Created     *time.Time `json:"created,omitempty"`
	LastAccess  *time.Time `json:"lastAccess,omitempty"`
	Partitioned bool       `json:"partitioned,omitempty"`

	ExpirationDate *float64 `json:"expirationDate,omitempty"` // read only
	Session        *bool    `json:"session,omitempty"`        // read only
}

// WriteJSON writes every unexpired cookie as a JSON document
// {"version":1,"cookies":[...]}, with times in RFC 3339 and session cookies
// without "expires". ReadJSON reads it back.
func (j *Jar) WriteJSON(w io.Writer) error {
	all := j.All()
	f := jsonFile{Version: 1, Cookies: make([]jsonCookie, 0, len(all))}
	for _, c := range all {
		jc := jsonCookie{
			Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, HostOnly: &c.HostOnly,
			Secure: c.Secure, HttpOnly: c.HttpOnly, SameSite: strings.ToLower(c.SameSite.String()),
			Partitioned: c.Partitioned,
		}
		created, last := c.Created, c.LastAccess
		jc.Created, jc.LastAccess = &created, &last
		if !c.Expires.IsZero() {
			jc.Expires = &flexTime{c.Expires}
		}
		f.Cookies = append(f.Cookies, jc)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&f); err != nil {
		return fmt.Errorf("cookie: write json: %w", err)
	}
	return nil
}

// ReadJSON adds the cookies of a JSON document to the jar: the format
// WriteJSON writes, or a bare array of cookie objects as browser extensions
// export them. Cookies pass the checks a Set-Cookie would (control
// characters, sizes, public suffixes, prefixes); invalid ones are skipped
// and reported in an *ImportError after the valid ones were added.
// Expired cookies are skipped silently. A cookie replaces a stored one with
// the same name, domain, host-only flag and path. Malformed JSON is an
// error and adds nothing.
func (j *Jar) ReadJSON(r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, maxImportBytes+1))
	if err != nil {
		return fmt.Errorf("cookie: read json: %w", err)
	}
	if len(data) > maxImportBytes {
		return ErrImportTooLarge
	}
	var list []jsonCookie
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		err = json.Unmarshal(data, &list)
	} else {
		var f jsonFile
		err = json.Unmarshal(data, &f)
		list = f.Cookies
	}
	if err != nil {
		return fmt.Errorf("cookie: read json: %w", err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	im := importer{j: j, now: j.now()}
	for i := range list {
		c, err := list[i].cookie()
		if err != nil {
			im.fail(i+1, err)
			continue
		}
		im.add(i+1, c)
	}
	return im.result()
}

var errJSONSameSite = errors.New("cookie: unknown sameSite value")

func (jc *jsonCookie) cookie() (*Cookie, error) {
	c := &Cookie{
		Name: jc.Name, Value: jc.Value, Domain: jc.Domain, Path: jc.Path,
		Secure: jc.Secure, HttpOnly: jc.HttpOnly, Partitioned: jc.Partitioned,
	}
	if jc.HostOnly != nil {
		c.HostOnly = *jc.HostOnly
	} else {
		c.HostOnly = !strings.HasPrefix(jc.Domain, ".")
	}
	switch strings.ToLower(jc.SameSite) {
	case "", "unspecified":
	case "none", "no_restriction":
		c.SameSite = SameSiteNone
	case "lax":
		c.SameSite = SameSiteLax
	case "strict":
		c.SameSite = SameSiteStrict
	default:
		return nil, errJSONSameSite
	}
	switch {
	case jc.Expires != nil:
		c.Expires = jc.Expires.t
	case jc.ExpirationDate != nil && (jc.Session == nil || !*jc.Session):
		if c.Expires = unixSeconds(*jc.ExpirationDate); c.Expires.IsZero() {
			c.Expires = time.Unix(0, 1) // not a session cookie: expired
		}
	}
	if jc.Created != nil {
		c.Created = *jc.Created
	}
	if jc.LastAccess != nil {
		c.LastAccess = *jc.LastAccess
	}
	return c, nil
}

// flexTime is an "expires" value: an RFC 3339 string (what WriteJSON
// writes) or a number of Unix seconds (Playwright; zero or negative means a
// session cookie).
type flexTime struct{ t time.Time }

func (f flexTime) MarshalJSON() ([]byte, error) { return json.Marshal(f.t) }

func (f *flexTime) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &f.t)
	}
	var s float64
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	f.t = unixSeconds(s)
	return nil
}

// unixSeconds converts fractional Unix seconds; zero, negative and NaN give
// the zero time, huge values are clamped.
func unixSeconds(s float64) time.Time {
	if math.IsNaN(s) || s <= 0 {
		return time.Time{}
	}
	s = min(s, 1e11)
	sec, frac := math.Modf(s)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC()
}
