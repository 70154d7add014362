package seekdbshim

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MySQL protocol constants used by the shim.
const (
	maxPayload = 1<<24 - 1 // a packet this long is continued by the next one

	comQuit        = 0x01
	comQuery       = 0x03
	comStmtPrepare = 0x16

	clientLongPassword  = 1 << 0 // a.k.a. CLIENT_MYSQL: unset by MariaDB servers
	clientCompress      = 1 << 5
	clientProtocol41    = 1 << 9
	clientSSL           = 1 << 11
	clientZstd          = 1 << 26
	clientDeprecateEOF  = 1 << 24
	serverMoreResults   = 0x0008
	serverSessionChange = 0x4000

	iOK  = 0x00
	iEOF = 0xfe
	iERR = 0xff
)

// packet is one MySQL protocol packet (payload without the 4-byte header).
type packet struct {
	seq     byte
	payload []byte
}

func readPacket(r *bufio.Reader) (packet, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return packet{}, err
	}
	n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
	p := packet{seq: hdr[3], payload: make([]byte, n)}
	if _, err := io.ReadFull(r, p.payload); err != nil {
		return packet{}, err
	}
	return p, nil
}

// encode returns the packet with its header, ready for a single Write. The
// payload must be shorter than maxPayload unless it is a relayed packet that
// was read with exactly that length.
func (p packet) encode() []byte {
	n := len(p.payload)
	b := make([]byte, 4, 4+n)
	b[0], b[1], b[2], b[3] = byte(n), byte(n>>8), byte(n>>16), p.seq
	return append(b, p.payload...)
}

// sqlError is a server error as carried by an ERR packet.
type sqlError struct {
	Code    uint16
	State   string
	Message string
}

func (e *sqlError) Error() string {
	return fmt.Sprintf("Error %d (%s): %s", e.Code, e.State, e.Message)
}

func (e *sqlError) payload() []byte {
	state := e.State
	if len(state) != 5 {
		state = "HY000"
	}
	b := []byte{iERR, byte(e.Code), byte(e.Code >> 8), '#'}
	b = append(b, state...)
	return append(b, e.Message...)
}

func parseErr(p []byte) *sqlError {
	e := &sqlError{State: "HY000"}
	if len(p) >= 3 {
		e.Code = binary.LittleEndian.Uint16(p[1:3])
		rest := p[3:]
		if len(rest) >= 6 && rest[0] == '#' {
			e.State = string(rest[1:6])
			rest = rest[6:]
		}
		e.Message = string(rest)
	}
	return e
}

// okPayload builds an OK packet payload (no info, no session state).
func okPayload(affected, insertID uint64, status, warnings uint16) []byte {
	b := []byte{iOK}
	b = appendLenEncInt(b, affected)
	b = appendLenEncInt(b, insertID)
	b = binary.LittleEndian.AppendUint16(b, status&^(serverSessionChange|serverMoreResults))
	return binary.LittleEndian.AppendUint16(b, warnings)
}

func appendLenEncInt(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	default:
		return binary.LittleEndian.AppendUint64(append(b, 0xfe), n)
	}
}

var errMalformed = errors.New("seekdbshim: malformed packet from upstream")

// readLenEncInt decodes a length-encoded integer at p[pos:]; null reports the
// 0xfb NULL marker.
func readLenEncInt(p []byte, pos int) (n uint64, next int, null bool, err error) {
	if pos >= len(p) {
		return 0, pos, false, errMalformed
	}
	switch c := p[pos]; {
	case c < 0xfb:
		return uint64(c), pos + 1, false, nil
	case c == 0xfb:
		return 0, pos + 1, true, nil
	case c == 0xfc:
		if pos+3 > len(p) {
			return 0, pos, false, errMalformed
		}
		return uint64(binary.LittleEndian.Uint16(p[pos+1:])), pos + 3, false, nil
	case c == 0xfd:
		if pos+4 > len(p) {
			return 0, pos, false, errMalformed
		}
		return uint64(p[pos+1]) | uint64(p[pos+2])<<8 | uint64(p[pos+3])<<16, pos + 4, false, nil
	case c == 0xfe:
		if pos+9 > len(p) {
			return 0, pos, false, errMalformed
		}
		return binary.LittleEndian.Uint64(p[pos+1:]), pos + 9, false, nil
	default:
		return 0, pos, false, errMalformed
	}
}

func readLenEncString(p []byte, pos int) (s []byte, next int, null bool, err error) {
	n, pos, null, err := readLenEncInt(p, pos)
	if err != nil || null {
		return nil, pos, null, err
	}
	if uint64(len(p)-pos) < n {
		return nil, pos, false, errMalformed
	}
	return p[pos : pos+int(n)], pos + int(n), false, nil
}

// result is the outcome of a statement the shim runs itself on a client's
// upstream session.
type result struct {
	affected, insertID uint64
	status, warnings   uint16
	columns            []string
	rows               [][]*string // nil element = SQL NULL
}

func parseOK(p []byte) (*result, error) {
	r := &result{}
	var err error
	pos := 1
	if r.affected, pos, _, err = readLenEncInt(p, pos); err != nil {
		return nil, err
	}
	if r.insertID, pos, _, err = readLenEncInt(p, pos); err != nil {
		return nil, err
	}
	if pos+4 <= len(p) {
		r.status = binary.LittleEndian.Uint16(p[pos:])
		r.warnings = binary.LittleEndian.Uint16(p[pos+2:])
	}
	return r, nil
}

// columnName extracts the name from a Protocol::ColumnDefinition41 payload.
func columnName(p []byte) (string, error) {
	pos := 0
	var name []byte
	for i := 0; i < 5; i++ { // catalog, schema, table, org_table, name
		s, next, _, err := readLenEncString(p, pos)
		if err != nil {
			return "", err
		}
		name, pos = s, next
	}
	return string(name), nil
}

// parseTextRow decodes a text-protocol result row with n columns.
func parseTextRow(p []byte, n int) ([]*string, error) {
	row := make([]*string, n)
	pos := 0
	for i := range row {
		s, next, null, err := readLenEncString(p, pos)
		if err != nil {
			return nil, err
		}
		pos = next
		if !null {
			v := string(s)
			row[i] = &v
		}
	}
	return row, nil
}
