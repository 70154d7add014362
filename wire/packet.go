package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

const (
	// HeaderLen is the size of a packet header: 3 bytes of payload length
	// and a sequence number.
	HeaderLen = 4
	// MaxPayload is the largest payload of one physical packet; a logical
	// packet with a payload of exactly this size continues in the next.
	MaxPayload = 1<<24 - 1
)

// First payload bytes that tell packets apart.
const (
	OKHeader          = 0x00
	LocalInfileHeader = 0xFB // the server asks for a LOAD DATA LOCAL file
	EOFHeader         = 0xFE // also an authentication switch request
	ErrHeader         = 0xFF
	// MaxEOFLength is one more than the longest EOF payload: a 0xFE packet
	// of this length or more is something else (a row, a length).
	MaxEOFLength = 9
)

// ErrMalformed marks a packet that breaks the protocol.
var ErrMalformed = errors.New("malformed packet")

// PayloadLen decodes the 3-byte payload length of a packet header.
func PayloadLen(hdr []byte) int { return int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16 }

// IsEOF reports whether a packet whose payload starts with first and is
// length bytes long is an EOF packet.
func IsEOF(first, length int) bool { return first == EOFHeader && length < MaxEOFLength }

// ReadPacket reads one logical packet (joining continuations) of at most
// limit bytes from r, returning its payload (in buf's storage when it
// fits) and the last sequence number.
func ReadPacket(r io.Reader, buf []byte, limit int) ([]byte, uint8, error) {
	payload := buf[:0]
	var seq uint8
	for {
		var hdr [HeaderLen]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if len(payload) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF // a continuation is missing
			}
			return nil, 0, err
		}
		n := PayloadLen(hdr[:])
		seq = hdr[3]
		if len(payload)+n > limit {
			return nil, 0, fmt.Errorf("%w: packet of more than %d bytes", ErrMalformed, limit)
		}
		start := len(payload)
		payload = append(payload, make([]byte, n)...)
		if _, err := io.ReadFull(r, payload[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		if n < MaxPayload {
			return payload, seq, nil
		}
	}
}

// WritePacket writes payload as one logical packet starting at sequence
// seq and returns the next sequence number. It does not flush.
func WritePacket(w io.Writer, seq uint8, payload []byte) (uint8, error) {
	for {
		n := min(len(payload), MaxPayload)
		hdr := [HeaderLen]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}
		if _, err := w.Write(hdr[:]); err != nil {
			return seq, err
		}
		if _, err := w.Write(payload[:n]); err != nil {
			return seq, err
		}
		seq++
		payload = payload[n:]
		if n < MaxPayload {
			return seq, nil
		}
	}
}

// LenEnc decodes a length-encoded integer, returning it and its size; ok
// is false when b is too short or holds the NULL marker.
func LenEnc(b []byte) (v uint64, size int, ok bool) {
	if len(b) == 0 {
		return 0, 0, false
	}
	switch b[0] {
	case 0xFB, 0xFF:
		return 0, 1, false
	case 0xFC:
		if len(b) < 3 {
			return 0, 0, false
		}
		return uint64(binary.LittleEndian.Uint16(b[1:])), 3, true
	case 0xFD:
		if len(b) < 4 {
			return 0, 0, false
		}
		return uint64(b[1]) | uint64(b[2])<<8 | uint64(b[3])<<16, 4, true
	case 0xFE:
		if len(b) < 9 {
			return 0, 0, false
		}
		return binary.LittleEndian.Uint64(b[1:]), 9, true
	}
	return uint64(b[0]), 1, true
}

// AppendLenEnc appends v as a length-encoded integer.
func AppendLenEnc(b []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(b, byte(v))
	case v < 1<<16:
		return append(b, 0xFC, byte(v), byte(v>>8))
	case v < 1<<24:
		return append(b, 0xFD, byte(v), byte(v>>8), byte(v>>16))
	}
	return append(b, 0xFE, byte(v), byte(v>>8), byte(v>>16), byte(v>>24),
		byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
}

// LenEncString decodes a length-encoded string at the start of b,
// returning it and the rest of b; ok is false when b is too short.
func LenEncString(b []byte) (s, rest []byte, ok bool) {
	l, n, ok := LenEnc(b)
	if !ok || uint64(len(b)-n) < l {
		return nil, nil, false
	}
	return b[n : n+int(l)], b[n+int(l):], true
}

// AppendLenEncString appends s as a length-encoded string.
func AppendLenEncString(b []byte, s string) []byte {
	return append(AppendLenEnc(b, uint64(len(s))), s...)
}

// errShort is ErrMalformed for a packet that ends before what.
func errShort(what string) error { return fmt.Errorf("%w: short %s", ErrMalformed, what) }
