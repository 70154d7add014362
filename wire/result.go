package wire

import (
	"encoding/binary"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// OK is what an OK packet says a statement did.
type OK struct {
	Affected, InsertID uint64
	Status, Warnings   uint16
}

// ParseOK decodes an OK packet payload (0x00 or 0xFE header, affected
// rows, last insert id, status, warnings); ok is false when it is short.
func ParseOK(p []byte) (o OK, ok bool) {
	at, ok := okStatusAt(p)
	if !ok {
		return OK{}, false
	}
	var n int
	o.Affected, n, _ = LenEnc(p[1:])
	o.InsertID, _, _ = LenEnc(p[1+n:])
	o.Status = binary.LittleEndian.Uint16(p[at:])
	if len(p) >= at+4 {
		o.Warnings = binary.LittleEndian.Uint16(p[at+2:])
	}
	return o, true
}

// okStatusAt is the offset of an OK payload's status flags.
func okStatusAt(p []byte) (int, bool) {
	if len(p) < 1 {
		return 0, false
	}
	pos := 1
	for range 2 {
		_, n, ok := LenEnc(p[pos:])
		if !ok {
			return 0, false
		}
		pos += n
	}
	if len(p) < pos+2 {
		return 0, false
	}
	return pos, true
}

// WithInsertID is the OK packet payload p saying last insert id id, all
// else as p has it (affected rows, status, warnings, info, session state);
// ok is false when p is too short to be one.
func WithInsertID(p []byte, id uint64) (out []byte, ok bool) {
	if _, ok := okStatusAt(p); !ok {
		return nil, false
	}
	_, n, _ := LenEnc(p[1:])
	_, m, _ := LenEnc(p[1+n:])
	out = make([]byte, 0, len(p)+8)
	out = append(out, p[:1+n]...)
	out = AppendLenEnc(out, id)
	return append(out, p[1+n+m:]...), true
}

// OKStatus returns the status flags of an OK packet payload.
func OKStatus(p []byte) (uint16, bool) {
	at, ok := okStatusAt(p)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint16(p[at:]), true
}

// EOFStatus returns the status flags of an EOF packet payload.
func EOFStatus(p []byte) (uint16, bool) {
	if len(p) < 5 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(p[3:]), true
}

// AddStatus sets the status flags flags in an OK payload (okLayout: a
// 0x00 or 0xFE header, then affected rows and insert id) or an EOF payload
// in place; false means p is too short to be one.
func AddStatus(p []byte, flags uint16, okLayout bool) bool {
	at := 3 // EOF: header, warnings, status
	if okLayout {
		var ok bool
		if at, ok = okStatusAt(p); !ok {
			return false
		}
	} else if len(p) < 5 {
		return false
	}
	binary.LittleEndian.PutUint16(p[at:], binary.LittleEndian.Uint16(p[at:])|flags)
	return true
}

// AppendOK appends an OK packet payload. info is the human-readable
// message; sessionTrack says the client negotiated CLIENT_SESSION_TRACK,
// under which info is length-encoded (and no session state follows); a
// caller that sends no info at all passes false.
func AppendOK(b []byte, affected uint64, status, warnings uint16, info string, sessionTrack bool) []byte {
	b = append(b, OKHeader)
	b = AppendLenEnc(b, affected)
	b = append(b, 0, byte(status), byte(status>>8), byte(warnings), byte(warnings>>8))
	if sessionTrack {
		return AppendLenEncString(b, info)
	}
	return append(b, info...)
}

// AppendEOF appends an EOF packet payload.
func AppendEOF(b []byte, status, warnings uint16) []byte {
	return append(b, EOFHeader, byte(warnings), byte(warnings>>8), byte(status), byte(status>>8))
}

// ParseErr decodes an ERR packet payload (protocol 4.1).
func ParseErr(p []byte) *mysql.MyError {
	e := &mysql.MyError{Code: ErUnknown, State: "HY000"}
	if len(p) < 3 || p[0] != ErrHeader {
		e.Message = "malformed error packet from upstream"
		return e
	}
	e.Code = binary.LittleEndian.Uint16(p[1:])
	rest := p[3:]
	if len(rest) >= 6 && rest[0] == '#' {
		e.State = string(rest[1:6])
		rest = rest[6:]
	}
	e.Message = string(rest)
	return e
}

// ErrCode is the error code of an ERR payload, 0 for another packet.
func ErrCode(p []byte) uint16 {
	if len(p) < 3 || p[0] != ErrHeader {
		return 0
	}
	return binary.LittleEndian.Uint16(p[1:])
}

// AppendErr appends e as an ERR packet payload (protocol 4.1).
func AppendErr(b []byte, e *mysql.MyError) []byte {
	state := e.State
	if len(state) != 5 {
		state = "HY000"
	}
	b = append(b, ErrHeader, byte(e.Code), byte(e.Code>>8), '#')
	b = append(b, state...)
	return append(b, e.Message...)
}
