package h1

import (
	"strings"
	"time"

	"github.com/guise-http/guise/internal/fields"
)

// KeepAlive reads the Keep-Alive response field (RFC 2068 section 19.7.1.1,
// still sent by many servers): the idle timeout the server keeps the
// connection for and the number of requests it still accepts on it. A zero
// result means the parameter was absent or invalid. A pool should retire a
// connection before either runs out.
func KeepAlive(h fields.Header) (timeout time.Duration, max int) {
	for _, f := range h {
		if !fields.EqualFold(f.Name, "keep-alive") {
			continue
		}
		for rest, more := []byte(f.Value), true; more; {
			var el []byte
			el, rest, more = cutComma(rest)
			k, v, ok := strings.Cut(string(el), "=")
			if !ok {
				continue
			}
			n, ok := parseDigits(strings.Trim(v, " \t\""))
			if !ok || n > 1<<31 {
				continue
			}
			switch strings.ToLower(strings.Trim(k, " \t")) {
			case "timeout":
				timeout = time.Duration(n) * time.Second
			case "max":
				max = int(n)
			}
		}
	}
	return timeout, max
}
