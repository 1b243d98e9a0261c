package fingerprint

import "strconv"

// Akamai returns the Akamai HTTP/2 fingerprint (Shuster and Segal, Black
// Hat EU 2017) as fingerprint services print it:
// "SETTINGS|WINDOW_UPDATE|PRIORITY|PSEUDO_HEADER_ORDER", e.g.
// "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p". SETTINGS is
// "id:value" pairs joined by ';' in wire order; WINDOW_UPDATE the connection
// increment sent before the first HEADERS, "00" if none; PRIORITY the
// PRIORITY frames before the first HEADERS as
// "stream:exclusive:dependency:weight" joined by ',', "0" if none; and the
// pseudo-header order of the first request as first letters joined by ','.
func (h *HTTP2) Akamai() string { return string(h.appendAkamai(nil)) }

// AkamaiHash returns the lowercase hex MD5 of Akamai.
func (h *HTTP2) AkamaiHash() string { return md5Hex(h.appendAkamai(nil)) }

func (h *HTTP2) appendAkamai(b []byte) []byte {
	for i, s := range h.Settings {
		if i > 0 {
			b = append(b, ';')
		}
		b = strconv.AppendUint(b, uint64(s.ID), 10)
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(s.Value), 10)
	}
	b = append(b, '|')
	if h.ConnWindowUpdate == 0 {
		b = append(b, "00"...)
	} else {
		b = strconv.AppendUint(b, uint64(h.ConnWindowUpdate), 10)
	}
	b = append(b, '|')
	if len(h.Priorities) == 0 {
		b = append(b, '0')
	}
	for i, p := range h.Priorities {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(p.StreamID), 10)
		b = append(b, ':')
		if p.Priority.Exclusive {
			b = append(b, '1')
		} else {
			b = append(b, '0')
		}
		b = append(b, ':')
		b = strconv.AppendUint(b, uint64(p.Priority.StreamDep), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(p.Priority.Weight), 10)
	}
	b = append(b, '|')
	if len(h.Requests) > 0 {
		for i, name := range h.Requests[0].PseudoOrder {
			if i > 0 {
				b = append(b, ',')
			}
			if len(name) > 1 {
				b = append(b, name[1])
			}
		}
	}
	return b
}
