package h2

import "context"

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

// appendPseudo appends req's pseudo-headers to fs in req.PseudoOrder, or
// order (nil: the default). A plain CONNECT has neither :scheme nor :path;
// an extended one has both, and :protocol where the order puts it, or last.
func appendPseudo(fs []tableEntry, req *Request, order []string) []tableEntry {
	if req.PseudoOrder != nil {
		order = req.PseudoOrder
	} else if order == nil {
		order = defaultPseudoOrder
	}
	plain := req.Method == "CONNECT" && req.Protocol == ""
	protocol := req.Protocol != ""
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
			v, protocol = req.Protocol, false
		default:
			continue
		}
		fs = append(fs, tableEntry{name, v})
	}
	if protocol {
		fs = append(fs, tableEntry{":protocol", req.Protocol})
	}
	return fs
}
