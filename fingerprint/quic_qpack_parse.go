package fingerprint

import (
	"slices"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
)

// QPACKInstruction is one instruction of a client's QPACK encoder stream
// (RFC 9204 §4.3), as it was sent.
type QPACKInstruction struct {
	// Kind is "set_dynamic_table_capacity", "insert_with_name_reference",
	// "insert_with_literal_name" or "duplicate".
	Kind string
	// Static is set for a name reference into the static table.
	Static bool
	// Index is the wire index (static, or relative to the insert count
	// for a dynamic name reference and a duplicate); the capacity for
	// set_dynamic_table_capacity.
	Index uint64
	// Name and Value are the inserted entry's.
	Name, Value               string
	NameHuffman, ValueHuffman bool
	// InsertCount is the table's insert count after the instruction.
	InsertCount uint64
}

// QPACKLine is one field line of a field section (RFC 9204 §4.5), as it
// was sent.
type QPACKLine struct {
	// Kind is "indexed", "indexed_post_base", "literal_name_reference",
	// "literal_post_base_name_reference" or "literal_literal_name".
	Kind string
	// Static is set for a reference into the static table.
	Static bool
	// Index is the wire index: static, relative to the Base, or post-base.
	Index uint64
	// NeverIndexed is a literal's N bit.
	NeverIndexed              bool
	NameHuffman, ValueHuffman bool
	Name, Value               string
}

// decodeQPACK decodes the client's encoder stream and the requests' field
// sections with a dynamic table as large as the server allowed. Each
// section is decoded against the table as it stood once exactly its
// Required Insert Count entries were in: every entry it may reference is
// there then (later inserts can only have evicted some).
func (h *HTTP3) decodeQPACK(qr *QUICRecord) {
	var enc []byte
	for _, s := range qr.Streams {
		if s.ID%4 != 2 {
			continue
		}
		if t, n := quicwire.Varint(s.Data); n > 0 && t == uint64(h3wire.StreamQPACKEncoder) {
			enc = s.Data[n:]
			break
		}
	}
	dec := h3.NewQPACKDecoder(qr.QPACKMaxTableCapacity, int(qr.QPACKBlockedStreams))
	// The prefixes are read once the whole stream is in, so that a
	// Required Insert Count decodes against the final insert count.
	all := h3.NewQPACKDecoder(qr.QPACKMaxTableCapacity, int(qr.QPACKBlockedStreams))
	all.Feed(enc)
	type pending struct {
		i   int
		ric uint64
	}
	var todo []pending
	for i := range h.Requests {
		q := &h.Requests[i]
		if q.headers == nil {
			continue
		}
		ric, _, err := all.Prefix(q.headers)
		if err != nil {
			q.Err = err.Error()
			continue
		}
		todo = append(todo, pending{i, ric})
	}
	slices.SortStableFunc(todo, func(a, b pending) int { return cmpUint(a.ric, b.ric) })
	var inserts uint64
	decodeReady := func() {
		for len(todo) > 0 && todo[0].ric <= inserts {
			h.Requests[todo[0].i].decodeHeaders(dec)
			todo = todo[1:]
		}
	}
	decodeReady()
	// One byte at a time, so that each section sees the table at its
	// Required Insert Count.
	for i := range enc {
		ins, _, err := dec.Feed(enc[i : i+1])
		h.QPACKEncoder = append(h.QPACKEncoder, qpackInstructions(ins)...)
		if err != nil {
			h.QPACKEncoderErr = err.Error()
			break
		}
		if len(ins) > 0 {
			inserts = ins[len(ins)-1].InsertCount
			decodeReady()
		}
	}
	for _, p := range todo {
		h.Requests[p.i].Err = "fingerprint: qpack: the section needs inserts the encoder stream did not carry"
	}
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// decodeHeaders decodes the request's HEADERS with dec.
func (q *H3Request) decodeHeaders(dec *h3.QPACKDecoder) {
	ric, base, lines, err := dec.Decode(q.headers, maxH3FieldSection)
	q.RequiredInsertCount, q.Base = ric, base
	if ric > 0 {
		if base >= ric {
			q.DeltaBase = base - ric
		} else {
			q.DeltaBase = ric - base - 1 // with the sign bit
		}
	}
	for _, l := range lines {
		q.Fields = append(q.Fields, fields.Field{Name: l.Name, Value: l.Value})
		q.Lines = append(q.Lines, QPACKLine{Kind: l.Kind.String(), Static: l.Static, Index: l.Index,
			NeverIndexed: l.NeverIndexed, NameHuffman: l.NameHuffman, ValueHuffman: l.ValueHuffman,
			Name: l.Name, Value: l.Value})
	}
	if err != nil {
		q.Err = err.Error()
	}
}

func qpackInstructions(in []h3.QPACKInstruction) []QPACKInstruction {
	var out []QPACKInstruction
	for _, i := range in {
		out = append(out, QPACKInstruction{Kind: i.Kind.String(), Static: i.Static, Index: i.Index,
			Name: i.Name, Value: i.Value, NameHuffman: i.NameHuffman, ValueHuffman: i.ValueHuffman,
			InsertCount: i.InsertCount})
	}
	return out
}
