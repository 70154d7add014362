package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

func TestPacketHead(t *testing.T) {
	var h packetHead
	if h.first() != -1 || len(h.payload()) != 0 || h.isEOF() {
		t.Errorf("zero head: first %d payload %v isEOF %v", h.first(), h.payload(), h.isEOF())
	}
	set := func(length int, p []byte) {
		h = packetHead{length: length}
		h.n = copy(h.prefix[:], p)
	}
	set(5, []byte{0xFE, 0, 0, 2, 0})
	if !h.isEOF() || h.first() != wire.EOFHeader {
		t.Error("5-byte 0xFE packet is not EOF")
	}
	set(wire.MaxEOFLength-1, []byte{0xFE, 0, 0, 2, 0, 0, 0, 0})
	if !h.isEOF() {
		t.Error("8-byte 0xFE packet is not EOF")
	}
	set(wire.MaxEOFLength, []byte{0xFE, 1, 2, 3, 4, 5, 6, 7, 8})
	if h.isEOF() {
		t.Error("9-byte 0xFE packet (a row / lenenc) counted as EOF")
	}
	set(1000, testkit.Payload(prefixLen, 1))
	if len(h.payload()) != prefixLen {
		t.Errorf("payload len %d, want %d", len(h.payload()), prefixLen)
	}
}

// --- pipe --------------------------------------------------------------------

func newTestPipe(src io.Reader, readBuf int, dst io.Writer, writeBuf int) *pipe {
	return &pipe{
		src: bufio.NewReaderSize(src, readBuf), dst: bufio.NewWriterSize(dst, writeBuf),
		srcSide: sideUpstream, dstSide: sideClient,
	}
}

func checkHead(t *testing.T, h *packetHead, payload []byte, seq uint8) {
	t.Helper()
	if h.length != len(payload) || h.seq != seq {
		t.Errorf("head length %d seq %d, want %d %d", h.length, h.seq, len(payload), seq)
	}
	want := payload[:min(len(payload), prefixLen)]
	if !bytes.Equal(h.payload(), want) || h.n != len(want) {
		t.Errorf("head prefix % x (n=%d), want % x", h.payload(), h.n, want)
	}
}

func TestPipeForward(t *testing.T) {
	sizes := []int{0, 1, 5, 31, 32, 33, 59, 60, 61, 63, 64, 65, 100, 128, 200, 1000, 4096, 70000}
	for _, readBuf := range []int{64, 100, 4096} {
		for _, writeBuf := range []int{16, 4096} {
			for _, chunky := range []bool{false, true} {
				var in []byte
				for i, n := range sizes {
					in = append(in, testkit.Packet(uint8(i*7), testkit.Payload(n, byte(i)))...)
				}
				var r io.Reader = bytes.NewReader(in)
				if chunky {
					r = &chunkReader{r: r, sizes: []int{1, 3, 7, 50, 2, 64, 1000}}
				}
				var out bytes.Buffer
				p := newTestPipe(r, readBuf, &out, writeBuf)
				for i, n := range sizes {
					var h packetHead
					if err := p.forward(&h); err != nil {
						t.Fatalf("readBuf %d writeBuf %d chunky %v: packet %d (%d bytes): %v", readBuf, writeBuf, chunky, i, n, err)
					}
					checkHead(t, &h, testkit.Payload(n, byte(i)), uint8(i*7))
				}
				// The stream is over: a clean EOF between packets is reported
				// as a read error on the source side, nothing partial.
				var h packetHead
				err := p.forward(&h)
				var le *linkError
				if !errors.As(err, &le) || le.side != sideUpstream || le.write || le.partial || !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("forward at end of stream: %#v", err)
				}
				if err := p.dst.Flush(); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(out.Bytes(), in) {
					t.Fatalf("readBuf %d writeBuf %d chunky %v: output differs from input (%d vs %d bytes)", readBuf, writeBuf, chunky, out.Len(), len(in))
				}
			}
		}
	}
}

// chunkReader returns data in reads of cycling sizes.
type chunkReader struct {
	r     io.Reader
	sizes []int
	i     int
}

func (c *chunkReader) Read(b []byte) (int, error) {
	n := c.sizes[c.i%len(c.sizes)]
	c.i++
	return c.r.Read(b[:min(n, len(b))])
}

func TestPipeForwardLeavesNextPacket(t *testing.T) {
	in := append(testkit.Packet(1, testkit.Payload(500, 1)), testkit.Packet(2, []byte{0xFE, 0, 0, 2, 0})...)
	var out bytes.Buffer
	p := newTestPipe(bytes.NewReader(in), 64, &out, 4096)
	var h packetHead
	if err := p.forward(&h); err != nil {
		t.Fatal(err)
	}
	_ = p.dst.Flush()
	if out.Len() != 504 {
		t.Fatalf("forwarded %d bytes, want 504", out.Len())
	}
	if err := p.forward(&h); err != nil {
		t.Fatal(err)
	}
	checkHead(t, &h, []byte{0xFE, 0, 0, 2, 0}, 2)
	if !h.isEOF() {
		t.Error("EOF not recognised")
	}
}

func TestPipeForwardLogical(t *testing.T) {
	big := testkit.Payload(2*wire.MaxPayload+10, 9)
	tests := []struct {
		name    string
		packets [][]byte // physical payloads of one logical packet
	}{
		{"single small", [][]byte{testkit.Payload(10, 1)}},
		{"single large", [][]byte{testkit.Payload(5000, 2)}},
		{"one below max", [][]byte{big[:wire.MaxPayload-1]}},
		{"exactly max, empty continuation", [][]byte{big[:wire.MaxPayload], {}}},
		{"max plus 10", [][]byte{big[:wire.MaxPayload], big[wire.MaxPayload : wire.MaxPayload+10]}},
		{"two max, empty continuation", [][]byte{big[:wire.MaxPayload], big[wire.MaxPayload : 2*wire.MaxPayload], {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []byte
			for i, pl := range tt.packets {
				in = append(in, testkit.Packet(uint8(3+i), pl)...)
			}
			logicalEnd := len(in)
			// A following packet must be left for the next call.
			next := testkit.Packet(uint8(3+len(tt.packets)), []byte{0x00, 0x00, 0x00, 0x02, 0x00})
			in = append(in, next...)
			readBufs := []int{64, 4096}
			if len(in) > 2*wire.MaxPayload {
				readBufs = readBufs[1:] // 64-byte chunks of 32 MiB are slow under -race
			}
			for _, readBuf := range readBufs {
				var out bytes.Buffer
				p := newTestPipe(bytes.NewReader(in), readBuf, &out, 4096)
				var h packetHead
				if err := p.forwardLogical(&h); err != nil {
					t.Fatalf("readBuf %d: %v", readBuf, err)
				}
				// Length and prefix describe the first physical packet; seq
				// is the last one's, so the next sequence number follows.
				checkHead(t, &h, tt.packets[0], uint8(3+len(tt.packets)-1))
				_ = p.dst.Flush()
				if !bytes.Equal(out.Bytes(), in[:logicalEnd]) {
					t.Fatalf("readBuf %d: output (%d bytes) is not the logical packet (%d bytes)", readBuf, out.Len(), logicalEnd)
				}
				if err := p.forwardLogical(&h); err != nil {
					t.Fatal(err)
				}
				checkHead(t, &h, next[wire.HeaderLen:], uint8(3+len(tt.packets)))
				_ = p.dst.Flush()
				if !bytes.Equal(out.Bytes(), in) {
					t.Fatal("output differs from input after the next packet")
				}
			}
		})
	}
}

// failReader returns data, then err.
type failReader struct {
	data []byte
	err  error
}

func (r *failReader) Read(b []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(b, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestPipeForwardReadErrors(t *testing.T) {
	boom := errors.New("boom")
	pkt := testkit.Packet(4, testkit.Payload(200, 4))
	tests := []struct {
		name        string
		in          []byte
		err         error // what the reader fails with after in
		readBuf     int
		wantErr     error
		wantPartial bool
		wantOut     int // bytes of in on dst afterwards
	}{
		{"empty, EOF", nil, io.EOF, 64, io.ErrUnexpectedEOF, false, 0},
		{"empty, boom", nil, boom, 64, boom, false, 0},
		{"half header", pkt[:2], io.EOF, 64, io.ErrUnexpectedEOF, false, 0},
		{"header only, small path", pkt[:4], io.EOF, 4096, io.ErrUnexpectedEOF, false, 0},
		{"mid payload, small path", pkt[:150], boom, 4096, boom, false, 0},
		{"one byte short, small path", pkt[:len(pkt)-1], io.EOF, 4096, io.ErrUnexpectedEOF, false, 0},
		{"inside prefix, large path", pkt[:20], io.EOF, 64, io.ErrUnexpectedEOF, false, 0},
		{"exactly prefix, large path", pkt[:wire.HeaderLen+prefixLen], io.EOF, 64, io.ErrUnexpectedEOF, true, wire.HeaderLen + prefixLen},
		{"after first chunk, large path", pkt[:64], boom, 64, boom, true, 64},
		// Chunks are whole buffers once the source has to be read again, so
		// the bytes of a final short read stay behind.
		{"mid payload, large path", pkt[:150], io.EOF, 64, io.ErrUnexpectedEOF, true, 128},
		{"one byte short, large path", pkt[:len(pkt)-1], io.EOF, 64, io.ErrUnexpectedEOF, true, 192},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			p := newTestPipe(&failReader{data: append([]byte(nil), tt.in...), err: tt.err}, tt.readBuf, &out, 4096)
			p.srcSide, p.dstSide = sideClient, sideUpstream
			var h packetHead
			err := p.forward(&h)
			var le *linkError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v (%T), want *linkError", err, err)
			}
			if le.side != sideClient || le.write || le.partial != tt.wantPartial || !errors.Is(err, tt.wantErr) {
				t.Errorf("linkError{side %v write %v partial %v err %v}, want side client, read, partial %v, %v",
					le.side, le.write, le.partial, le.err, tt.wantPartial, tt.wantErr)
			}
			if !strings.HasPrefix(err.Error(), "read from client: ") {
				t.Errorf("Error() = %q", err.Error())
			}
			_ = p.dst.Flush()
			if !bytes.Equal(out.Bytes(), tt.in[:tt.wantOut]) {
				t.Errorf("dst got %d bytes, want the first %d of the input", out.Len(), tt.wantOut)
			}
		})
	}
}

// TestPipeForwardLogicalContinuationReadError: once the first physical
// packet of a logical packet (payload of exactly wire.MaxPayload bytes) has been
// forwarded, the destination expects a continuation packet; a read error
// before it arrives leaves a partly written packet there, so the error must
// be partial (otherwise session.fail writes an ERR packet that the client
// takes as the continuation).
func TestPipeForwardLogicalContinuationReadError(t *testing.T) {
	first := testkit.Packet(0, testkit.Payload(wire.MaxPayload, 7))
	second := testkit.Packet(1, testkit.Payload(100, 8))
	tests := []struct {
		name string
		in   []byte
	}{
		{"nothing after first", first},
		{"half a continuation header", append(append([]byte(nil), first...), second[:2]...)},
		{"continuation header only", append(append([]byte(nil), first...), second[:wire.HeaderLen]...)},
		{"continuation cut short", append(append([]byte(nil), first...), second[:50]...)},
	}
	for i, tt := range tests {
		readBufs := []int{4096}
		if i == 0 {
			readBufs = append(readBufs, 64) // 16 MiB in 64-byte chunks is slow under -race
		}
		for _, readBuf := range readBufs {
			var out bytes.Buffer
			p := newTestPipe(&failReader{data: tt.in, err: io.EOF}, readBuf, &out, 4096)
			var h packetHead
			err := p.forwardLogical(&h)
			var le *linkError
			if !errors.As(err, &le) || le.side != sideUpstream || le.write {
				t.Fatalf("%s/readBuf %d: err = %#v, want read error on upstream", tt.name, readBuf, err)
			}
			if !le.partial {
				t.Errorf("%s/readBuf %d: continuation read failed after %d bytes of the logical packet reached dst, but linkError.partial = false",
					tt.name, readBuf, len(first))
			}
		}
	}
}
