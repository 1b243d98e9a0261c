package quic

import (
	"time"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/profile"
)

// AppendTransportParameters appends the body of the
// quic_transport_parameters extension the browser of q sends on a
// connection whose Source Connection ID is scid: q's parameters with
// their rules applied (GREASE redrawn, initial_source_connection_id set,
// reserved versions redrawn) in the recorded order, or shuffled as quiche
// shuffles them when q says so; with initialRTT, also initial_rtt (the
// RTT remembered from an earlier connection to the server, which Chromium
// sends). It reads from r only what the rules draw.
func AppendTransportParameters(dst []byte, q *profile.QUIC, scid []byte, initialRTT time.Duration, g *rng) []byte {
	params := make([]quicwire.TransportParameter, 0, len(q.TransportParameters))
	for _, p := range q.TransportParameters {
		tp := quicwire.TransportParameter{ID: quicwire.TransportParameterID(p.ID), Value: p.Value}
		switch p.Rule {
		case profile.ParamGREASE:
			// quiche: a random id reduced to 31*N+27 below 2^62, then a
			// random length under the bound, then the bytes.
			id := g.uint64() % (1<<62 - 31)
			tp.ID = quicwire.TransportParameterID(id/31*31 + 27)
			v := make([]byte, g.uint64()%uint64(q.GREASEParamMaxLen))
			g.read(v)
			tp.Value = v
		case profile.ParamSourceConnID:
			tp.Value = scid
		case profile.ParamVersionInformation:
			v := append([]byte(nil), p.Value...)
			for i := 0; i+4 <= len(v); i += 4 {
				if v[i]&0x0f == 0x0a && v[i+1]&0x0f == 0x0a && v[i+2]&0x0f == 0x0a && v[i+3]&0x0f == 0x0a {
					var b [4]byte
					g.read(b[:])
					for j := range b {
						v[i+j] = b[j]&0xf0 | 0x0a
					}
				}
			}
			tp.Value = v
		}
		params = append(params, tp)
	}
	if initialRTT > 0 {
		// quiche's initial_rtt: the RTT it remembers for the server,
		// in µs, shuffled in with the rest.
		params = append(params, quicwire.TransportParameter{ID: quicwire.ParamInitialRTT,
			Value: quicwire.AppendVarint(nil, uint64(max(initialRTT.Microseconds(), 1)))})
	}
	if q.ShuffleTransportParameters {
		// quiche: walk backwards, swapping each with a random earlier one.
		for i := len(params) - 1; i > 0; i-- {
			j := g.uint64() % uint64(i+1)
			params[i], params[j] = params[j], params[i]
		}
	}
	return quicwire.AppendTransportParameters(dst, params)
}
