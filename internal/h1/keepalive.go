package h1

import (
	"bytes"
	"time"
)

// keepAliveParams reads the timeout and max parameters of one Keep-Alive
// response field value (RFC 2068 section 19.7.1.1, still sent by many
// servers) into timeout and max; invalid ones are ignored. A zero timeout
// means none was given, max -1 the same. frame honours both: max=0 (or
// timeout=0, a server that keeps no idle connection) retires the
// connection after this response, and Conn.IdleTimeout reports the
// timeout for the pool.
func keepAliveParams(v []byte, timeout time.Duration, max int) (time.Duration, int) {
	zero := false // timeout=0: no idle time at all, as no further request
	for rest, more := v, true; more; {
		var el []byte
		el, rest, more = cutComma(rest)
		i := bytes.IndexByte(el, '=')
		if i < 0 {
			continue
		}
		n, ok := parseDigits(bytes.Trim(el[i+1:], " \t\""))
		if !ok || n > 1<<31 {
			continue
		}
		switch k := bytes.Trim(el[:i], " \t"); {
		case eqFold(k, "timeout"):
			timeout = time.Duration(n) * time.Second
			zero = n == 0
		case eqFold(k, "max"):
			max = int(n)
		}
	}
	if zero {
		max = 0
	}
	return timeout, max
}
