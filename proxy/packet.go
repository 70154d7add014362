package proxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

const (
	headerLen  = 4
	maxPayload = 1<<24 - 1
	// prefixLen is how much of each forwarded payload the relay keeps to
	// interpret: enough for an OK/EOF status, a column count or a
	// COM_STMT_PREPARE_OK.
	prefixLen = 32
)

// Packet header bytes and status flags the relay interprets.
const (
	okHeader       = 0x00
	localInfileReq = 0xFB
	eofHeader      = 0xFE
	errHeader      = 0xFF

	statusInTrans            = 0x0001
	statusAutocommit         = 0x0002
	statusMoreResults        = 0x0008
	statusCursorExists       = 0x0040
	statusNoBackslashEscapes = 0x0200
	cursorFlagsMask          = 0x0F
	maxEOFPayloadLength      = 9
)

// side names the peer an I/O error happened on.
type side int

const (
	sideClient side = iota
	sideUpstream
)

func (s side) String() string {
	if s == sideClient {
		return "client"
	}
	return "upstream"
}

// linkError is an I/O failure on one side of the relay. partial is set when a
// packet had been partly written to the other side, so no further packet may
// be written there.
type linkError struct {
	side    side
	write   bool
	partial bool
	err     error
}

func (e *linkError) Error() string {
	op := "read from"
	if e.write {
		op = "write to"
	}
	return fmt.Sprintf("%s %s: %v", op, e.side, e.err)
}

func (e *linkError) Unwrap() error { return e.err }

// errMalformed marks a packet that breaks the protocol.
var errMalformed = errors.New("malformed packet")

// packetHead is what the relay remembers of the last packet it forwarded.
type packetHead struct {
	length int
	seq    uint8
	prefix [prefixLen]byte
	n      int
}

// payload is the start of the packet's payload (at most prefixLen bytes).
func (h *packetHead) payload() []byte { return h.prefix[:h.n] }

// first is the first payload byte, or -1 for an empty payload.
func (h *packetHead) first() int {
	if h.n == 0 {
		return -1
	}
	return int(h.prefix[0])
}

// isEOF reports whether the packet is an EOF packet (0xFE, short).
func (h *packetHead) isEOF() bool { return h.first() == eofHeader && h.length < maxEOFPayloadLength }

// pipe forwards packets from src to dst without changing a byte. It flushes
// dst before it would block reading src, so responses stream to the client
// as they arrive while packets that arrive together leave in one write.
type pipe struct {
	src     *bufio.Reader
	dst     *bufio.Writer
	srcSide side
	dstSide side
}

func (p *pipe) readErr(err error) error {
	return &linkError{side: p.srcSide, err: noEOF(err)}
}

func (p *pipe) writeErr(err error, partial bool) error {
	return &linkError{side: p.dstSide, write: true, partial: partial, err: err}
}

// flush writes out what dst holds.
func (p *pipe) flush() error {
	if p.dst.Buffered() == 0 {
		return nil
	}
	if err := p.dst.Flush(); err != nil {
		return p.writeErr(err, false)
	}
	return nil
}

// flushIfBlocking flushes dst when src has nothing buffered, so the peer
// gets what is pending before the proxy waits on src.
func (p *pipe) flushIfBlocking() error {
	if p.src.Buffered() == 0 {
		return p.flush()
	}
	return nil
}

// peek returns the next n bytes of src, flushing dst first if it must wait.
func (p *pipe) peek(n int) ([]byte, error) {
	if p.src.Buffered() < n {
		if err := p.flush(); err != nil {
			return nil, err
		}
	}
	b, err := p.src.Peek(n)
	if err != nil {
		return nil, p.readErr(err)
	}
	return b, nil
}

// forward copies one physical packet from src to dst and records its head.
func (p *pipe) forward(h *packetHead) error {
	hdr, err := p.peek(headerLen)
	if err != nil {
		return err
	}
	n := payloadLen(hdr)
	h.length, h.seq = n, hdr[3]
	total := headerLen + n
	if total <= p.src.Size() {
		buf, err := p.peek(total)
		if err != nil {
			return err
		}
		h.n = copy(h.prefix[:], buf[headerLen:])
		if _, err := p.dst.Write(buf); err != nil {
			return p.writeErr(err, true)
		}
		_, _ = p.src.Discard(total)
		return nil
	}
	// Larger than the read buffer: keep the prefix, stream the rest in
	// buffer-sized chunks so memory stays bounded.
	buf, err := p.peek(headerLen + prefixLen)
	if err != nil {
		return err
	}
	h.n = copy(h.prefix[:], buf[headerLen:])
	for remaining, written := total, false; remaining > 0; written = true {
		chunk := min(remaining, p.src.Size())
		if p.src.Buffered() > 0 {
			chunk = min(chunk, p.src.Buffered())
		} else if err := p.dst.Flush(); err != nil { // about to block: send what we have
			return p.writeErr(err, true)
		}
		b, err := p.src.Peek(chunk)
		if err != nil {
			return &linkError{side: p.srcSide, partial: written, err: noEOF(err)}
		}
		if _, err := p.dst.Write(b); err != nil {
			return p.writeErr(err, true)
		}
		_, _ = p.src.Discard(chunk)
		remaining -= chunk
	}
	return nil
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// payloadLen decodes the 3-byte payload length of a packet header.
func payloadLen(hdr []byte) int { return int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16 }

// forwardLogical forwards a packet and any continuation packets that
// follow it (payloads of exactly maxPayload bytes continue in the next one).
// h describes the first physical packet, except that h.seq is the last
// one's, so the next packet's sequence number follows from it.
func (p *pipe) forwardLogical(h *packetHead) error {
	if err := p.forward(h); err != nil {
		return err
	}
	if h.length < maxPayload {
		return nil
	}
	var cont packetHead
	cont.length = maxPayload
	for cont.length == maxPayload {
		if err := p.forward(&cont); err != nil {
			// The first part of the logical packet is already out.
			var le *linkError
			if errors.As(err, &le) {
				le.partial = true
			}
			return err
		}
	}
	h.seq = cont.seq
	return nil
}

// readPacket reads one logical packet (joining continuations) of at most
// limit bytes from r, returning its payload and the last sequence number.
func readPacket(r *bufio.Reader, buf []byte, limit int) ([]byte, uint8, error) {
	payload := buf[:0]
	var seq uint8
	for {
		var hdr [headerLen]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if len(payload) > 0 && err == io.EOF {
				err = io.ErrUnexpectedEOF // a continuation is missing
			}
			return nil, 0, err
		}
		n := payloadLen(hdr[:])
		seq = hdr[3]
		if len(payload)+n > limit {
			return nil, 0, fmt.Errorf("%w: packet of more than %d bytes", errMalformed, limit)
		}
		start := len(payload)
		payload = append(payload, make([]byte, n)...)
		if _, err := io.ReadFull(r, payload[start:]); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, 0, err
		}
		if n < maxPayload {
			return payload, seq, nil
		}
	}
}

// writePacket writes payload as one logical packet starting at sequence seq
// and returns the next sequence number. It does not flush.
func writePacket(w *bufio.Writer, seq uint8, payload []byte) (uint8, error) {
	for {
		n := len(payload)
		if n > maxPayload {
			n = maxPayload
		}
		hdr := [headerLen]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}
		if _, err := w.Write(hdr[:]); err != nil {
			return seq, err
		}
		if _, err := w.Write(payload[:n]); err != nil {
			return seq, err
		}
		seq++
		payload = payload[n:]
		if n < maxPayload {
			return seq, nil
		}
	}
}

// lenEnc decodes a length-encoded integer, returning it and its size; ok is
// false when b is too short or holds the NULL marker.
func lenEnc(b []byte) (v uint64, size int, ok bool) {
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

// appendLenEnc appends v as a length-encoded integer.
func appendLenEnc(b []byte, v uint64) []byte {
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

// okStatus returns the status flags of an OK packet payload (0x00 or 0xFE
// header followed by affected rows and last insert id).
func okStatus(p []byte) (uint16, bool) {
	if len(p) < 1 {
		return 0, false
	}
	pos := 1
	for i := 0; i < 2; i++ {
		_, n, ok := lenEnc(p[pos:])
		if !ok {
			return 0, false
		}
		pos += n
	}
	if len(p) < pos+2 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(p[pos:]), true
}

// eofStatus returns the status flags of an EOF packet payload.
func eofStatus(p []byte) (uint16, bool) {
	if len(p) < 5 {
		return 0, false
	}
	return binary.LittleEndian.Uint16(p[3:]), true
}
