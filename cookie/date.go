package cookie

import (
	"strings"
	"time"
)

// parseCookieDate implements the lenient cookie-date algorithm of RFC 6265
// section 5.1.1. Its cost is linear in len(s) and it does not allocate.
func parseCookieDate(s string) (time.Time, bool) {
	var (
		foundTime, foundDay, foundMonth, foundYear bool
		hour, minute, second, day, year            int
		month                                      time.Month
	)
	for len(s) > 0 {
		i := 0
		for i < len(s) && isDateDelimiter(s[i]) {
			i++
		}
		s = s[i:]
		j := 0
		for j < len(s) && !isDateDelimiter(s[j]) {
			j++
		}
		tok := s[:j]
		s = s[j:]
		if tok == "" {
			continue
		}
		if !foundTime {
			if h, m, sec, ok := parseHMS(tok); ok {
				foundTime, hour, minute, second = true, h, m, sec
				continue
			}
		}
		if !foundDay {
			if n, digits := leadingDigits(tok, 1, 2); digits > 0 {
				foundDay, day = true, n
				continue
			}
		}
		if !foundMonth && len(tok) >= 3 {
			if m := monthIndex(tok[:3]); m > 0 {
				foundMonth, month = true, m
				continue
			}
		}
		if !foundYear {
			if n, digits := leadingDigits(tok, 2, 4); digits > 0 {
				foundYear, year = true, n
				continue
			}
		}
	}
	if !foundTime || !foundDay || !foundMonth || !foundYear {
		return time.Time{}, false
	}
	if year >= 70 && year <= 99 {
		year += 1900
	} else if year >= 0 && year <= 69 {
		year += 2000
	}
	if day < 1 || day > 31 || year < 1601 || hour > 23 || minute > 59 || second > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, month, day, hour, minute, second, 0, time.UTC)
	if t.Day() != day {
		return time.Time{}, false // e.g. 31 Feb
	}
	return t, true
}

// isDateDelimiter is RFC 6265's delimiter: %x09 / %x20-2F / %x3B-40 /
// %x5B-60 / %x7B-7E.
func isDateDelimiter(c byte) bool {
	return c == 0x09 || (c >= 0x20 && c <= 0x2f) || (c >= 0x3b && c <= 0x40) ||
		(c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e)
}

// leadingDigits parses min..max digits at the start of tok, which must be
// followed by the end or a non-digit. It returns the count of digits, or 0.
func leadingDigits(tok string, min, max int) (int, int) {
	n, i := 0, 0
	for i < len(tok) && i < max+1 && tok[i] >= '0' && tok[i] <= '9' {
		n = n*10 + int(tok[i]-'0')
		i++
	}
	if i < min || i > max {
		return 0, 0
	}
	return n, i
}

// parseHMS parses time = hms-time [ non-digit *OCTET ], with
// hms-time = 1*2DIGIT ":" 1*2DIGIT ":" 1*2DIGIT.
func parseHMS(tok string) (h, m, s int, ok bool) {
	var vals [3]int
	for k := 0; k < 3; k++ {
		n, d := 0, 0
		for d < len(tok) && d < 3 && tok[d] >= '0' && tok[d] <= '9' {
			n = n*10 + int(tok[d]-'0')
			d++
		}
		if d < 1 || d > 2 {
			return 0, 0, 0, false
		}
		vals[k] = n
		tok = tok[d:]
		if k < 2 {
			if tok == "" || tok[0] != ':' {
				return 0, 0, 0, false
			}
			tok = tok[1:]
		}
	}
	return vals[0], vals[1], vals[2], true
}

var monthNames = [...]string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

func monthIndex(s string) time.Month {
	for i, m := range monthNames {
		if strings.EqualFold(s, m) {
			return time.Month(i + 1)
		}
	}
	return 0
}
