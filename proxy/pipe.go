package proxy

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// prefixLen is how much of each forwarded payload the relay keeps to
// interpret: enough for an OK/EOF status, a column count or a
// COM_STMT_PREPARE_OK.
const prefixLen = 32

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
func (h *packetHead) isEOF() bool { return h.first() == wire.EOFHeader && h.length < wire.MaxEOFLength }

// pipe forwards packets from src to dst without changing a byte but, when
// shift is set, their sequence numbers. It flushes dst before it would
// block reading src, so responses stream to the client as they arrive
// while packets that arrive together leave in one write.
type pipe struct {
	src     *bufio.Reader
	dst     *bufio.Writer
	srcSide side
	dstSide side
	// shift is added to the sequence number of every packet forwarded
	// (the packets the proxy forwards continue a sequence numbered
	// differently on the other side).
	shift uint8
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

// head peeks at the next packet of src: its payload length, sequence
// number and first payload bytes (at most wire.PrefixLen), valid until the
// next read from src.
func (p *pipe) head() (length int, seq uint8, prefix []byte, err error) {
	hdr, err := p.peek(wire.HeaderLen)
	if err != nil {
		return 0, 0, nil, err
	}
	n := wire.PayloadLen(hdr)
	b, err := p.peek(wire.HeaderLen + min(n, wire.PrefixLen))
	if err != nil {
		return 0, 0, nil, err
	}
	return n, b[3], b[wire.HeaderLen:], nil
}

// forward copies one physical packet from src to dst and records its head
// (with the sequence number it had in src).
func (p *pipe) forward(h *packetHead) error {
	hdr, err := p.peek(wire.HeaderLen)
	if err != nil {
		return err
	}
	n := wire.PayloadLen(hdr)
	h.length, h.seq = n, hdr[3]
	// Renumbered in the read buffer, before any later peek can move it.
	hdr[3] += p.shift
	total := wire.HeaderLen + n
	if total <= p.src.Size() {
		buf, err := p.peek(total)
		if err != nil {
			return err
		}
		h.n = copy(h.prefix[:], buf[wire.HeaderLen:])
		if _, err := p.dst.Write(buf); err != nil {
			return p.writeErr(err, true)
		}
		_, _ = p.src.Discard(total)
		return nil
	}
	// Larger than the read buffer: keep the prefix, stream the rest in
	// buffer-sized chunks so memory stays bounded.
	buf, err := p.peek(wire.HeaderLen + prefixLen)
	if err != nil {
		return err
	}
	h.n = copy(h.prefix[:], buf[wire.HeaderLen:])
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

// forwardLogical forwards a packet and any continuation packets that
// follow it (payloads of exactly wire.MaxPayload bytes continue in the next one).
// h describes the first physical packet, except that h.seq is the last
// one's, so the next packet's sequence number follows from it.
func (p *pipe) forwardLogical(h *packetHead) error {
	if err := p.forward(h); err != nil {
		return err
	}
	if h.length < wire.MaxPayload {
		return nil
	}
	var cont packetHead
	cont.length = wire.MaxPayload
	for cont.length == wire.MaxPayload {
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
