package wire

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
)

// The compressed protocol (CLIENT_COMPRESS), between the client and the
// proxy only: the upstream connection stays uncompressed, so the relay
// reads and writes plain packets as ever. After the login every byte each
// way travels in compressed packets — a 7-byte header (3 bytes of payload
// length, a sequence number, 3 bytes of uncompressed length, 0 when the
// payload is not compressed) and a zlib stream (or the bytes as they are)
// of the plain packets' bytes. Compressed packets are numbered apart from
// plain ones: from 0 at each command the client sends, on through the
// answer.

const (
	compHeaderLen = 7
	// minCompress is the shortest payload worth compressing (MySQL's
	// MIN_COMPRESS_LENGTH): shorter ones go as they are.
	minCompress = 50
)

// compSeq is the compressed sequence number a connection's reader and
// writer share.
type compSeq struct{ next uint8 }

// compReader reads the plain bytes of a stream of compressed packets,
// decompressing as it goes (never more than one packet's zlib window in
// memory).
type compReader struct {
	src  io.Reader
	seq  *compSeq
	cur  io.Reader // the current packet's plain bytes
	left *io.LimitedReader
	zr   io.ReadCloser
}

func (r *compReader) Read(p []byte) (int, error) {
	for {
		if r.cur != nil {
			n, err := r.cur.Read(p)
			if n > 0 {
				return n, nil
			}
			if err != io.EOF {
				return 0, err
			}
			if err := r.endPacket(); err != nil {
				return 0, err
			}
		}
		if err := r.nextPacket(); err != nil {
			return 0, err
		}
	}
}

// nextPacket reads the next compressed packet's header.
func (r *compReader) nextPacket() error {
	var h [compHeaderLen]byte
	if _, err := io.ReadFull(r.src, h[:]); err != nil {
		return err
	}
	n, plain := PayloadLen(h[:3]), PayloadLen(h[4:7])
	r.seq.next = h[3] + 1
	r.left = &io.LimitedReader{R: r.src, N: int64(n)}
	if plain == 0 {
		r.cur = r.left
		return nil
	}
	if r.zr == nil {
		zr, err := zlib.NewReader(r.left)
		if err != nil {
			return fmt.Errorf("%w: compressed packet: %w", ErrMalformed, err)
		}
		r.zr = zr
	} else if err := r.zr.(zlib.Resetter).Reset(r.left, nil); err != nil {
		return fmt.Errorf("%w: compressed packet: %w", ErrMalformed, err)
	}
	r.cur = io.LimitReader(r.zr, int64(plain))
	return nil
}

// endPacket drops what is left of the current compressed packet (a zlib
// stream's checksum).
func (r *compReader) endPacket() error {
	r.cur = nil
	if r.left.N > 0 {
		if _, err := io.Copy(io.Discard, r.left); err != nil {
			return err
		}
	}
	if r.left.N > 0 {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// compWriter writes plain bytes as compressed packets: each Write (a
// flush of the buffered writer above it) becomes one or more packets.
type compWriter struct {
	dst io.Writer
	seq *compSeq
	buf bytes.Buffer // a payload being compressed
	out []byte       // a packet being written
	zw  *zlib.Writer
}

func (w *compWriter) Write(p []byte) (int, error) {
	for done := 0; done < len(p); {
		n := min(len(p)-done, MaxPayload)
		if err := w.packet(p[done : done+n]); err != nil {
			return done, err
		}
		done += n
	}
	return len(p), nil
}

// packet writes one compressed packet of plain bytes b.
func (w *compWriter) packet(b []byte) error {
	body, plain := b, 0
	if len(b) >= minCompress {
		w.buf.Reset()
		if w.zw == nil {
			w.zw, _ = zlib.NewWriterLevel(&w.buf, zlib.BestSpeed)
		} else {
			w.zw.Reset(&w.buf)
		}
		if _, err := w.zw.Write(b); err != nil {
			return err
		}
		if err := w.zw.Close(); err != nil {
			return err
		}
		if w.buf.Len() < len(b) {
			body, plain = w.buf.Bytes(), len(b)
		}
	}
	n := len(body)
	w.out = append(w.out[:0], byte(n), byte(n>>8), byte(n>>16), w.seq.next, byte(plain), byte(plain>>8), byte(plain>>16))
	w.out = append(w.out, body...)
	w.seq.next++
	_, err := w.dst.Write(w.out)
	return err
}

// Compressed is the plain stream of a connection that speaks the
// compressed protocol over r and w: the reader decompresses what r
// carries, the writer compresses into w, and the two share the compressed
// sequence numbers.
func Compressed(r io.Reader, w io.Writer) (io.Reader, io.Writer) {
	seq := &compSeq{}
	return &compReader{src: r, seq: seq}, &compWriter{dst: w, seq: seq}
}
