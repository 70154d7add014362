package wire

import (
	"encoding/binary"
	"fmt"
)

// Shape is the shape of the server's response to a command.
type Shape int

// Response shapes.
const (
	// ShapeNone: no response (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA,
	// COM_QUIT).
	ShapeNone Shape = iota
	// ShapeSingle: one packet (OK, ERR, or a string such as COM_STATISTICS').
	ShapeSingle
	// ShapeResults: OK, ERR, a LOCAL INFILE request, or a result set
	// (column count, definitions, EOF, rows, EOF), for as long as the
	// server flags more results (COM_QUERY, COM_STMT_EXECUTE).
	ShapeResults
	// ShapePrepare: COM_STMT_PREPARE_OK, then parameter and column
	// definitions, each block closed by EOF; or ERR.
	ShapePrepare
	// ShapeRows: rows up to EOF or ERR (COM_STMT_FETCH).
	ShapeRows
	// ShapeFields: column definitions up to EOF or ERR (COM_FIELD_LIST).
	ShapeFields
)

// Kind is what one packet of a response is.
type Kind int

// Packet kinds.
const (
	KindOK          Kind = iota // OK packet
	KindErr                     // ERR packet: the response ends
	KindEOF                     // EOF closing definitions (not sent under CLIENT_DEPRECATE_EOF)
	KindEnd                     // the packet ending rows or a field list: EOF, or an OK (0xFE header) under CLIENT_DEPRECATE_EOF
	KindLocalInfile             // the server asks for the client's LOAD DATA LOCAL file
	KindColumnCount             // a result set's column count
	KindColumnDef               // a column definition
	KindParamDef                // a prepared statement's parameter definition
	KindRow                     // a row (text or binary)
	KindPrepareOK               // COM_STMT_PREPARE_OK
	KindOther                   // the single packet of another answer
	KindProgress                // a MariaDB progress report: the answer goes on
)

// states of a Response.
const (
	stFirst      = iota // an answer starts: OK, ERR, LOCAL INFILE or column count
	stColumnDefs        // column definitions, then their EOF
	stColumnEOF
	stRows
	stParamDefs
	stParamEOF
	stDone
)

// PrefixLen is how many payload bytes Response.Next needs at most to
// classify a packet (an OK packet's status after two 9-byte counters).
const PrefixLen = 21

// Response follows the server's response to one command packet by packet:
// which packet comes next, when the response ends, and the server status
// its OK and EOF packets carry. It reads nothing itself, so the same
// walker serves a relay that streams packets it never holds whole and a
// reader that collects them.
type Response struct {
	shape  Shape
	cursor bool
	// noEOF: the session negotiated CLIENT_DEPRECATE_EOF (see
	// DeprecateEOF); progress and cacheMeta MariaDB's progress reports and
	// metadata caching (Progress, CacheMetadata).
	noEOF, progress, cacheMeta bool
	state                      int
	left                       uint64 // definitions left in the current block
	cols                       uint64 // a prepared statement's column definitions, after its parameters
	// Status is the server status of the last OK or EOF packet seen.
	Status uint16
	// Prepared is what COM_STMT_PREPARE_OK said (ShapePrepare).
	Prepared PrepareOK
}

// PrepareOK is the head of a COM_STMT_PREPARE_OK packet.
type PrepareOK struct {
	ID              uint32
	Columns, Params int
}

// NewResponse starts following a response of the given shape. cursor says
// the command was a COM_STMT_EXECUTE that asked for a cursor: its result
// set then ends after the column definitions when the server opened one
// (rows come with COM_STMT_FETCH).
func NewResponse(shape Shape, cursor bool) *Response {
	r := &Response{shape: shape, cursor: cursor}
	switch shape {
	case ShapeNone:
		r.state = stDone
	case ShapeRows:
		r.state = stRows
	case ShapeFields:
		r.state = stColumnDefs
	}
	return r
}

// DeprecateEOF follows the response as a session that negotiated
// CLIENT_DEPRECATE_EOF gets it: no EOF closes definitions, and an OK packet
// with a 0xFE header (shorter than a continued row) ends rows.
func (r *Response) DeprecateEOF() *Response {
	r.noEOF = true
	return r
}

// Progress follows the response as a session that negotiated MariaDB's
// progress reports gets it: packets with an 0xFF header and error code
// 0xFFFF may come before the answer, and do not end it.
func (r *Response) Progress() *Response {
	r.progress = true
	return r
}

// CacheMetadata follows the response as a session that negotiated MariaDB's
// metadata caching gets it: a result set's column count is followed by a
// byte saying whether its column definitions follow (0: the client has
// them from an earlier execution).
func (r *Response) CacheMetadata() *Response {
	r.cacheMeta = true
	return r
}

// isEnd reports whether a packet ends rows or a field list.
func (r *Response) isEnd(first, length int) bool {
	if r.noEOF {
		return first == EOFHeader && length < MaxPayload
	}
	return IsEOF(first, length)
}

// Done reports whether the response has ended.
func (r *Response) Done() bool { return r.state == stDone }

// Next classifies the next packet of the response from the start of its
// payload (at least PrefixLen bytes, or all of it when shorter) and its
// payload length (that of the first physical packet of a logical one), and
// moves past it. It fails with ErrMalformed for a packet that cannot come
// here.
func (r *Response) Next(prefix []byte, length int) (Kind, error) {
	first := -1
	if len(prefix) > 0 {
		first = int(prefix[0])
	}
	if r.progress && r.state != stDone && first == ErrHeader && len(prefix) >= 3 && prefix[1] == 0xFF && prefix[2] == 0xFF {
		// A progress report (error code 0xFFFF), before the answer or in
		// it (REPAIR TABLE sends them between its definitions and rows):
		// no packet of an answer starts so.
		return KindProgress, nil
	}
	switch r.state {
	case stFirst:
		return r.first(prefix, first, length)
	case stColumnDefs:
		if r.shape == ShapeFields {
			return r.fieldList(prefix, first, length)
		}
		if r.left--; r.left == 0 {
			r.state = stColumnEOF
			if r.noEOF {
				r.afterColumns()
			}
		}
		return KindColumnDef, nil
	case stParamDefs:
		if r.left--; r.left == 0 {
			r.state = stParamEOF
			if r.noEOF {
				r.startColumns(r.cols, stDone)
			}
		}
		return KindParamDef, nil
	case stParamEOF:
		if err := r.definitionsEOF("parameter definitions", first, length, prefix); err != nil {
			return 0, err
		}
		r.startColumns(r.cols, stDone)
		return KindEOF, nil
	case stColumnEOF:
		if err := r.definitionsEOF("column definitions", first, length, prefix); err != nil {
			return 0, err
		}
		r.afterColumns()
		if r.state == stRows && r.cursor && r.Status&StatusCursorExists != 0 {
			r.state = stDone // rows come with COM_STMT_FETCH
		}
		return KindEOF, nil
	case stRows:
		return r.row(prefix, first, length)
	}
	return 0, malformed("packet after the end of the response")
}

// afterColumns moves past a block of column definitions: a prepared
// statement's response ends, a result set's rows follow.
func (r *Response) afterColumns() {
	if r.shape == ShapePrepare {
		r.state = stDone
		return
	}
	r.state = stRows
}

// row classifies a packet where rows go: a row, or what ends them.
func (r *Response) row(prefix []byte, first, length int) (Kind, error) {
	switch {
	case first == ErrHeader:
		r.state = stDone
		return KindErr, nil
	case r.isEnd(first, length):
		if err := r.endStatus(prefix); err != nil {
			return 0, err
		}
		r.state = stDone
		if r.shape == ShapeResults && r.Status&StatusMoreResults != 0 {
			r.state = stFirst
		}
		return KindEnd, nil
	}
	return KindRow, nil
}

// first classifies the packet that starts an answer.
func (r *Response) first(prefix []byte, first, length int) (Kind, error) {
	switch r.shape {
	case ShapeSingle:
		r.state = stDone
		switch first {
		case ErrHeader:
			return KindErr, nil
		case OKHeader:
			if st, ok := OKStatus(prefix); ok {
				r.Status = st
			}
			return KindOK, nil
		}
		return KindOther, nil
	case ShapePrepare:
		return r.prepareOK(prefix, first)
	}
	switch first {
	case ErrHeader:
		r.state = stDone
		return KindErr, nil
	case OKHeader:
		st, ok := OKStatus(prefix)
		if !ok {
			return 0, malformed("OK packet")
		}
		r.Status = st
		if st&StatusMoreResults == 0 {
			r.state = stDone
		}
		return KindOK, nil
	case LocalInfileHeader:
		// The client's file goes up next; the server then answers the
		// LOAD DATA as any statement.
		return KindLocalInfile, nil
	}
	cols, n, ok := LenEnc(prefix)
	if !ok || length >= MaxPayload || cols == 0 {
		return 0, malformed("column count")
	}
	if r.cacheMeta {
		if len(prefix) <= n {
			return 0, malformed("column count without its metadata flag")
		}
		if prefix[n] == 0 { // no definitions: the client has them
			r.state = stColumnEOF
			if r.noEOF {
				r.afterColumns()
			}
			return KindColumnCount, nil
		}
	}
	r.startColumns(cols, stColumnEOF)
	return KindColumnCount, nil
}

// prepareOK classifies the first packet of a COM_STMT_PREPARE response.
func (r *Response) prepareOK(prefix []byte, first int) (Kind, error) {
	switch first {
	case ErrHeader:
		r.state = stDone
		return KindErr, nil
	case OKHeader:
	default:
		r.state = stDone
		return KindOther, nil
	}
	if len(prefix) < 9 {
		return 0, malformed("COM_STMT_PREPARE_OK")
	}
	r.Prepared = PrepareOK{ID: binary.LittleEndian.Uint32(prefix[1:]),
		Columns: int(binary.LittleEndian.Uint16(prefix[5:])), Params: int(binary.LittleEndian.Uint16(prefix[7:]))}
	r.cols = uint64(r.Prepared.Columns)
	if r.Prepared.Params > 0 {
		r.state, r.left = stParamDefs, uint64(r.Prepared.Params)
	} else {
		r.startColumns(r.cols, stDone)
	}
	return KindPrepareOK, nil
}

// fieldList classifies a packet of a COM_FIELD_LIST response.
func (r *Response) fieldList(prefix []byte, first, length int) (Kind, error) {
	switch {
	case first == ErrHeader:
		r.state = stDone
		return KindErr, nil
	case r.isEnd(first, length):
		r.state = stDone
		return KindEnd, r.endStatus(prefix)
	}
	return KindColumnDef, nil
}

// startColumns expects n column definitions and their EOF, or goes to
// state none when there are none.
func (r *Response) startColumns(n uint64, none int) {
	if n == 0 {
		r.state = none
		return
	}
	r.state, r.left = stColumnDefs, n
}

// endStatus records the status of the packet ending rows: an EOF, or an
// OK under CLIENT_DEPRECATE_EOF.
func (r *Response) endStatus(prefix []byte) error {
	if !r.noEOF {
		return r.eofStatus(prefix)
	}
	st, ok := OKStatus(prefix)
	if !ok {
		return malformed("OK packet ending rows")
	}
	r.Status = st
	return nil
}

// eofStatus records the status of an EOF packet.
func (r *Response) eofStatus(prefix []byte) error {
	st, ok := EOFStatus(prefix)
	if !ok {
		return malformed("EOF packet")
	}
	r.Status = st
	return nil
}

// definitionsEOF reads the EOF packet that ends what (parameter or column
// definitions): the status it carries, or that it is no EOF.
func (r *Response) definitionsEOF(what string, first, length int, prefix []byte) error {
	if !IsEOF(first, length) {
		return malformed("end of " + what)
	}
	return r.eofStatus(prefix)
}

func malformed(what string) error { return fmt.Errorf("%w: %s", ErrMalformed, what) }
