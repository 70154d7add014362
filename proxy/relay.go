package proxy

import (
	"bufio"
	"io"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/session"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// relay carries a client connection's answers: every response the
// upstream sends the client goes through forward, and every packet the
// proxy writes the client itself through its write methods. It follows
// each response with a wire.Response, streams the packets it does not
// change byte for byte (never holding a row), and owns the sequence
// numbers of the client's side and the server status (backend.status).
type relay struct {
	toClient   pipe // upstream → client
	toUpstream pipe // client → upstream: LOCAL INFILE files
	be         *backend
	// seq is the sequence number of the next packet to the client.
	seq uint8
	// sessionTrack: the client negotiated CLIENT_SESSION_TRACK (OK
	// packets carry their info length-encoded).
	sessionTrack bool
	// work renews the client's read deadline for each packet of a LOCAL
	// INFILE file.
	work func()
	// drop takes what a cut answer has left (max-rows).
	drop pipe
}

func newRelay(be *backend, cr *bufio.Reader, cw *bufio.Writer, work func()) *relay {
	return &relay{
		toClient:   pipe{src: be.r, dst: cw, srcSide: sideUpstream, dstSide: sideClient},
		toUpstream: pipe{src: cr, dst: be.w, srcSide: sideClient, dstSide: sideUpstream},
		be:         be, work: work,
		drop: pipe{src: be.r, dst: bufio.NewWriterSize(io.Discard, 512), srcSide: sideUpstream, dstSide: sideClient},
	}
}

// answer says how to relay one response.
type answer struct {
	shape  wire.Shape
	cursor bool // COM_STMT_EXECUTE asked for a cursor
	// shift is added to the upstream's sequence numbers toward the client
	// (and taken off the client's LOCAL INFILE packets going up): the
	// command went upstream numbered otherwise than the client numbered
	// it.
	shift uint8
	// more marks the answer's final OK or EOF "more results exist": the
	// client's input goes on after it.
	more bool
	// relabel, when set, tells names in ERR packets and column
	// definitions back in the client's words.
	relabel *session.Relabel
	// insertID, when set, gives the last insert id the OK that ends the
	// answer must say, read after it (okWithInsertID).
	insertID func(wire.OK) (id uint64, patched bool, err error)
	// maxRows cuts a result set after that many rows (0: no cap) and ends
	// the answer with capErr() instead; rows counts the rows of the
	// result set being relayed (of a cursor, across fetches).
	maxRows int64
	rows    *int64
	capErr  func() *mysql.MyError
}

// answered is what a relayed response said.
type answered struct {
	// failed: it ended in an error (the server's, of code code, or the
	// proxy's for a cut).
	failed bool
	code   uint16
	oks    []wire.OK
	// infile: a LOAD DATA LOCAL file went up.
	infile bool
	// prepared is COM_STMT_PREPARE_OK's head, when isPrepared.
	prepared   wire.PrepareOK
	isPrepared bool
}

// forward relays one response from the upstream to the client as a says,
// without flushing what it leaves buffered at the end.
func (r *relay) forward(a *answer) (answered, error) {
	var out answered
	resp := r.be.response(a.shape, a.cursor)
	r.toClient.shift, r.toUpstream.shift = a.shift, -a.shift
	defer func() { r.toClient.shift, r.toUpstream.shift, r.be.status = 0, 0, resp.Status }()
	cut := false
	var cutSeq uint8
	for !resp.Done() {
		length, seq, prefix, err := r.toClient.head()
		if err != nil {
			return out, err
		}
		kind, err := resp.Next(prefix, length)
		if err != nil {
			return out, &linkError{side: sideUpstream, err: err}
		}
		switch kind {
		case wire.KindErr:
			out.failed, out.code = true, wire.ErrCode(prefix)
		case wire.KindOK:
			if o, ok := wire.ParseOK(prefix); ok {
				out.oks = append(out.oks, o)
			}
		case wire.KindPrepareOK:
			out.prepared, out.isPrepared = resp.Prepared, true
		case wire.KindLocalInfile:
			out.infile = true
		case wire.KindColumnCount:
			if a.rows != nil {
				*a.rows = 0
			}
			if a.relabel != nil {
				a.relabel.NextResult()
			}
		case wire.KindRow:
			if a.maxRows > 0 && !cut {
				if *a.rows >= a.maxRows {
					// The client has the rows so far; the rest of the
					// answer is read and dropped, and it ends with the
					// cap's error numbered as if it followed the last row.
					if err := r.toClient.flush(); err != nil {
						return out, err
					}
					cut, cutSeq = true, r.seq
				} else {
					*a.rows++
				}
			}
		}
		if cut {
			if err := r.dropPacket(kind, seq); err != nil {
				return out, err
			}
			continue
		}
		if kind == wire.KindRow && a.relabel != nil && length < wire.MaxPayload && a.relabel.Rows() {
			if err := r.rewrite(seq+a.shift, a.relabel.Row); err != nil {
				return out, err
			}
			continue
		}
		if err := r.move(a, kind, seq, resp.Done()); err != nil {
			return out, err
		}
	}
	if cut {
		r.seq = cutSeq
		e := a.capErr()
		out.failed, out.code = true, e.Code
		return out, r.writeErrNoFlush(e)
	}
	return out, nil
}

// move moves the packet at the head of the upstream stream to the client,
// changed where a says so; last says it ends the response.
func (r *relay) move(a *answer, kind wire.Kind, seq uint8, last bool) error {
	switch {
	case kind == wire.KindErr && a.relabel != nil:
		return r.rewrite(seq+a.shift, func(p []byte) []byte {
			e := wire.ParseErr(p)
			e.Message = a.relabel.Error(e.Code, e.Message)
			return wire.AppendErr(nil, e)
		})
	case (kind == wire.KindColumnDef || kind == wire.KindParamDef) && a.relabel != nil:
		return r.rewrite(seq+a.shift, func(p []byte) []byte {
			if def, ok := a.relabel.Definition(p, kind == wire.KindColumnDef); ok {
				return def
			}
			if out, ok := relabelColumnDef(p, a.relabel.Column); ok {
				return out
			}
			return p
		})
	case last && kind == wire.KindOK && a.insertID != nil:
		return r.okWithInsertID(a, seq)
	case last && a.more && (kind == wire.KindOK || kind == wire.KindEnd):
		okLayout := kind == wire.KindOK || r.be.caps&wire.CapDeprecateEOF != 0
		return r.rewrite(seq+a.shift, func(p []byte) []byte {
			wire.AddStatus(p, wire.StatusMoreResults, okLayout)
			return p
		})
	}
	var h packetHead
	if err := r.toClient.forwardLogical(&h); err != nil {
		return err
	}
	r.seq = h.seq + a.shift + 1
	if kind == wire.KindLocalInfile {
		return r.sendFile()
	}
	return nil
}

// rewrite reads the next packet from upstream whole and writes change of
// it to the client numbered from seq.
func (r *relay) rewrite(seq uint8, change func([]byte) []byte) error {
	if err := r.toClient.flushIfBlocking(); err != nil {
		return err
	}
	p, _, err := wire.ReadPacket(r.toClient.src, nil, internalLimit)
	if err != nil {
		return &linkError{side: sideUpstream, err: noEOF(err)}
	}
	if r.seq, err = wire.WritePacket(r.toClient.dst, seq, change(p)); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// sendFile relays the file the client sends for LOAD DATA LOCAL, up to the
// empty packet that ends it. The server's answer follows.
func (r *relay) sendFile() error {
	if err := r.toClient.flush(); err != nil {
		return err
	}
	for {
		if r.work != nil {
			r.work()
		}
		var h packetHead
		if err := r.toUpstream.forwardLogical(&h); err != nil {
			return err
		}
		if h.length == 0 {
			return r.toUpstream.flush()
		}
	}
}

// dropPacket reads and drops the packet at the head of the upstream
// stream (the rest of a cut answer); a LOCAL INFILE request the client
// never saw gets an empty file.
func (r *relay) dropPacket(kind wire.Kind, seq uint8) error {
	var h packetHead
	if err := r.drop.forwardLogical(&h); err != nil {
		return err
	}
	if kind != wire.KindLocalInfile {
		return nil
	}
	if _, err := wire.WritePacket(r.be.w, h.seq+1, nil); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := r.be.w.Flush(); err != nil {
		return &linkError{side: sideUpstream, write: true, err: err}
	}
	return nil
}

// The client's pending command packet is taken by exactly one of
// readCommand, discardCommand and passCommand; the packets the proxy then
// writes the client follow its sequence number.

// readCommand reads the client's pending command packet whole (at most
// limit bytes).
func (r *relay) readCommand(limit int) ([]byte, error) {
	p, seq, err := wire.ReadPacket(r.toUpstream.src, nil, limit)
	if err != nil {
		return nil, &linkError{side: sideClient, err: noEOF(err)}
	}
	r.seq = seq + 1
	return p, nil
}

// discardCommand reads and drops the client's pending command packet.
func (r *relay) discardCommand() error {
	var h packetHead
	if err := (&pipe{src: r.toUpstream.src, dst: r.drop.dst, srcSide: sideClient, dstSide: sideUpstream}).forwardLogical(&h); err != nil {
		return err
	}
	r.seq = h.seq + 1
	return nil
}

// passCommand forwards the client's pending command packet upstream
// untouched and flushes it.
func (r *relay) passCommand() error {
	var h packetHead
	if err := r.toUpstream.forwardLogical(&h); err != nil {
		return err
	}
	r.seq = h.seq + 1
	return r.toUpstream.flush()
}

// flush sends the client what is buffered for it.
func (r *relay) flush() error {
	if err := r.toClient.dst.Flush(); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// writeErr sends the client a proxy-made ERR packet and flushes.
func (r *relay) writeErr(e *mysql.MyError) error {
	if err := r.writeErrNoFlush(e); err != nil {
		return err
	}
	return r.flush()
}

func (r *relay) writeErrNoFlush(e *mysql.MyError) error {
	return r.write(wire.AppendErr(nil, e))
}

// write sends the client one proxy-made packet, unflushed.
func (r *relay) write(p []byte) error {
	var err error
	if r.seq, err = wire.WritePacket(r.toClient.dst, r.seq, p); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// writeReply writes a proxy-made answer, unflushed: an OK packet or a
// text result set; more says another result of the same input follows.
func (r *relay) writeReply(rep *session.Reply, more bool) error {
	switch {
	case rep.Defs != nil:
		return r.writeResultSet(rep.Defs, rep.Rows, more)
	case rep.Columns != nil:
		defs := make([][]byte, len(rep.Columns))
		for i, c := range rep.Columns {
			defs[i] = wire.TextColumnDef(c)
			if r.be.extCaps&wire.ExtCapExtendedMetadata != 0 {
				defs[i] = wire.WithExtendedMetadata(defs[i])
			}
		}
		return r.writeResultSet(defs, rep.Rows, more)
	}
	return r.write(wire.AppendOK(nil, rep.Affected, r.replyStatus(more), uint16(min(len(rep.Warnings), 65535)), rep.Info, r.sessionTrack))
}

// writeResultSet writes a proxy-made text result set of the given column
// definition packets and rows, unflushed.
func (r *relay) writeResultSet(defs [][]byte, rows [][]*string, more bool) error {
	st := r.replyStatus(more)
	count := wire.AppendLenEnc(nil, uint64(len(defs)))
	if r.be.extCaps&wire.ExtCapCacheMetadata != 0 {
		count = append(count, 1) // the definitions follow
	}
	err := r.write(count)
	for _, d := range defs {
		if err == nil {
			err = r.write(d)
		}
	}
	noEOF := r.be.caps&wire.CapDeprecateEOF != 0
	if err == nil && !noEOF {
		err = r.write(wire.AppendEOF(nil, st, 0))
	}
	for _, row := range rows {
		if err == nil {
			err = r.write(wire.AppendTextRow(nil, row))
		}
	}
	if err == nil && noEOF {
		// Rows end with an OK whose header is 0xFE.
		end := wire.AppendOK(nil, 0, st, 0, "", false)
		end[0] = wire.EOFHeader
		err = r.write(end)
	} else if err == nil {
		err = r.write(wire.AppendEOF(nil, st, 0))
	}
	return err
}

// replyStatus is the server status of an answer the proxy makes: the
// flags it can vouch for (no session-state block follows), with more
// results only when more says so (the status of the last upstream answer
// may still carry the flag).
func (r *relay) replyStatus(more bool) uint16 {
	st := r.be.status & (wire.StatusInTrans | wire.StatusAutocommit | wire.StatusNoBackslashEscapes)
	if more {
		st |= wire.StatusMoreResults
	}
	return st
}

// relabelColumnDef rewrites the names of a ColumnDefinition41 payload
// through column; ok is false when nothing changes (or p is malformed).
func relabelColumnDef(p []byte, column func(wire.ColumnNames, []byte) (wire.ColumnNames, []byte, bool)) ([]byte, bool) {
	n, rest, ok := wire.ParseColumnDef(p)
	if !ok {
		return nil, false
	}
	if n, rest, ok = column(n, rest); !ok {
		return nil, false
	}
	return wire.AppendColumnDef(make([]byte, 0, len(p)+8), n, rest), true
}
