package proxy

import "github.com/sqlfork/sqlfork-proxy/wire"

// okWithInsertID moves the OK packet that ends the answer, at the head of
// the upstream stream, to the client saying the last insert id a.insertID
// gives for it (the server's when it gives none; session/insertid.go), and
// "more results" when a says so. a.insertID may run a query on the
// upstream connection: the answer has been read whole by then, and the
// client has not had its end.
func (r *relay) okWithInsertID(a *answer, seq uint8) error {
	if err := r.toClient.flushIfBlocking(); err != nil {
		return err
	}
	p, _, err := wire.ReadPacket(r.toClient.src, nil, internalLimit)
	if err != nil {
		return &linkError{side: sideUpstream, err: noEOF(err)}
	}
	if o, ok := wire.ParseOK(p); ok {
		id, patched, err := a.insertID(o)
		if err != nil {
			return linkOr(err)
		}
		if q, ok := wire.WithInsertID(p, id); ok && patched {
			p = q
		}
	}
	if a.more {
		wire.AddStatus(p, wire.StatusMoreResults, true)
	}
	if r.seq, err = wire.WritePacket(r.toClient.dst, seq+a.shift, p); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}
