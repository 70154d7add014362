package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Greeting is an upstream server's initial handshake packet.
type Greeting struct {
	Version    string
	ConnID     uint32
	Salt       []byte
	Caps       uint32
	Collation  uint8
	Status     uint16
	AuthPlugin string
	// extCaps are MariaDB's extended capabilities (ExtCap…), when
	// the server is MariaDB (no CLIENT_MYSQL in caps).
	ExtCaps uint32
}

// ParseGreeting decodes a protocol-10 initial handshake payload.
func ParseGreeting(p []byte) (*Greeting, error) {
	if len(p) > 0 && p[0] == ErrHeader {
		return nil, &RefusedGreeting{MyError: ParseErr(p), Payload: append([]byte(nil), p...)}
	}
	if len(p) < 1 || p[0] != 10 {
		return nil, fmt.Errorf("%w: unsupported protocol version in server greeting", ErrMalformed)
	}
	g := &Greeting{}
	p = p[1:]
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, fmt.Errorf("%w: greeting version", ErrMalformed)
	}
	g.Version = string(p[:i])
	p = p[i+1:]
	if len(p) < 4+8+1+2 {
		return nil, fmt.Errorf("%w: short greeting", ErrMalformed)
	}
	g.ConnID = binary.LittleEndian.Uint32(p)
	g.Salt = append([]byte(nil), p[4:12]...)
	p = p[13:]
	g.Caps = uint32(binary.LittleEndian.Uint16(p))
	p = p[2:]
	if len(p) >= 16 {
		g.Collation = p[0]
		g.Status = binary.LittleEndian.Uint16(p[1:])
		g.Caps |= uint32(binary.LittleEndian.Uint16(p[3:])) << 16
		saltLen := int(p[5])
		if g.Caps&CapLongPassword == 0 { // CLIENT_MYSQL unset: MariaDB
			g.ExtCaps = binary.LittleEndian.Uint32(p[12:])
		}
		p = p[16:]
		if g.Caps&CapSecureConnection != 0 {
			n := max(13, saltLen-8)
			if len(p) < n {
				return nil, fmt.Errorf("%w: greeting scramble", ErrMalformed)
			}
			part := p[:n]
			if k := bytes.IndexByte(part, 0); k >= 0 {
				part = part[:k]
			}
			g.Salt = append(g.Salt, part...)
			p = p[n:]
		}
		if g.Caps&CapPluginAuth != 0 {
			if k := bytes.IndexByte(p, 0); k >= 0 {
				p = p[:k]
			}
			g.AuthPlugin = string(p)
		}
	}
	if g.AuthPlugin == "" {
		g.AuthPlugin = "mysql_native_password"
	}
	return g, nil
}

// RefusedGreeting is a server's error in place of its greeting (1040 too
// many connections, a blocked host), with the packet as it was sent: the
// server writes it before it knows the client's capabilities, so without
// the SQLSTATE marker of protocol 4.1, and drivers compare its text
// ("Error 1040: Too many connections", go-sql-driver's TestConcurrent).
type RefusedGreeting struct {
	*mysql.MyError
	Payload []byte
}

func (e *RefusedGreeting) Unwrap() error { return e.MyError }

// AppendGreeting appends the greeting the proxy sends a client, header
// included, for an upstream that greeted with g: the upstream's version,
// collation, status flags, scramble and default auth plugin (so the
// client's auth data can be passed upstream as it is), with the
// capabilities caps, MariaDB's extended capabilities extCaps (the last
// four reserved bytes) and the connection id connID.
func AppendGreeting(b []byte, g *Greeting, caps, extCaps, connID uint32) []byte {
	p := []byte{10}
	p = append(p, g.Version...)
	p = append(p, 0)
	p = binary.LittleEndian.AppendUint32(p, connID)
	salt := g.Salt
	p = append(p, salt[:min(8, len(salt))]...)
	for range 8 - min(8, len(salt)) {
		p = append(p, 0)
	}
	p = append(p, 0) // filler
	p = binary.LittleEndian.AppendUint16(p, uint16(caps))
	p = append(p, g.Collation)
	p = binary.LittleEndian.AppendUint16(p, g.Status)
	p = binary.LittleEndian.AppendUint16(p, uint16(caps>>16))
	p = append(p, byte(max(21, len(salt)+1)))
	p = append(p, make([]byte, 6)...)
	p = binary.LittleEndian.AppendUint32(p, extCaps)
	part2 := []byte{}
	if len(salt) > 8 {
		part2 = salt[8:]
	}
	p = append(p, part2...)
	for range 12 - min(12, len(part2)) {
		p = append(p, 0) // the server's scramble is 20 bytes; pad a shorter one
	}
	p = append(p, 0)
	p = append(p, g.AuthPlugin...)
	p = append(p, 0)
	b = append(b, byte(len(p)), byte(len(p)>>8), byte(len(p)>>16), 0)
	return append(b, p...)
}
