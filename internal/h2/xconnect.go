package h2

import "context"

// Extended is what an extended CONNECT (RFC 8441) adds to a Request: the
// :protocol pseudo-header and, when set, the order of its pseudo-headers
// (a browser's CONNECT for a WebSocket orders them otherwise than its
// other requests). It is apart from Request so that every other request
// stays as small as it is.
type Extended struct {
	// Protocol is the :protocol value ("websocket"); required.
	Protocol string
	// PseudoOrder, if set, orders the pseudo-headers instead of
	// Config.PseudoOrder; :protocol goes last unless it names a place.
	PseudoOrder []string
}

// RoundTripExtended sends req, a CONNECT, as an extended CONNECT with ext:
// with :scheme, :path and :protocol. The peer must have enabled it (see
// ExtendedConnect). The stream is full duplex: req.Body is read and sent as
// it comes while the response body is read, under ctx as RoundTrip's is.
func (cc *ClientConn) RoundTripExtended(ctx context.Context, req *Request, ext *Extended) (*Response, error) {
	return cc.roundTrip(ctx, req, new(Stream), ext)
}

// ExtendedConnect waits for the peer's first SETTINGS and reports whether
// it enabled the extended CONNECT of RFC 8441
// (SETTINGS_ENABLE_CONNECT_PROTOCOL = 1), which a Request with Protocol
// set needs. It returns ctx's error, or the connection's when it ends
// first.
func (cc *ClientConn) ExtendedConnect(ctx context.Context) (bool, error) {
	select {
	case <-cc.peerSettings:
	case <-cc.done:
		select {
		case <-cc.peerSettings:
		default:
			cc.mu.Lock()
			err := cc.err
			cc.mu.Unlock()
			if err == nil {
				err = ErrClosed
			}
			return false, err
		}
	case <-ctx.Done():
		return false, ctx.Err()
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.peerConnect, nil
}

// appendPseudo appends req's pseudo-headers to fs in ext's PseudoOrder, or
// order (nil: the default). A plain CONNECT has neither :scheme nor :path;
// an extended one has both, and :protocol where the order puts it, or last.
func appendPseudo(fs []tableEntry, req *Request, ext *Extended, order []string) []tableEntry {
	if ext != nil && ext.PseudoOrder != nil {
		order = ext.PseudoOrder
	} else if order == nil {
		order = defaultPseudoOrder
	}
	plain := req.Method == "CONNECT" && ext == nil
	protocol := ext != nil
	for _, name := range order {
		var v string
		switch name {
		case ":method":
			v = req.Method
		case ":authority":
			v = req.Authority
		case ":scheme":
			if plain {
				continue
			}
			v = req.Scheme
		case ":path":
			if plain {
				continue
			}
			v = req.Path
		case ":protocol":
			if !protocol {
				continue
			}
			v, protocol = ext.Protocol, false
		default:
			continue
		}
		fs = append(fs, tableEntry{name, v})
	}
	if protocol {
		fs = append(fs, tableEntry{":protocol", ext.Protocol})
	}
	return fs
}
