package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"strings"
	"sync"
	"testing"
	"time"
)

// testPacket frames payload as one physical packet with sequence seq. The
// payload must be shorter than 1<<24 bytes.
func testPacket(seq uint8, payload []byte) []byte {
	n := len(payload)
	b := make([]byte, 0, headerLen+n)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(b, payload...)
}

// testPayload is n deterministic, non-repeating-looking bytes.
func testPayload(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed)*2654435761 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

// --- length-encoded integers ------------------------------------------------

func TestLenEncRoundTrip(t *testing.T) {
	tests := []struct {
		v    uint64
		want []byte
	}{
		{0, []byte{0x00}},
		{1, []byte{0x01}},
		{250, []byte{0xFA}},
		{251, []byte{0xFC, 0xFB, 0x00}},
		{252, []byte{0xFC, 0xFC, 0x00}},
		{255, []byte{0xFC, 0xFF, 0x00}},
		{256, []byte{0xFC, 0x00, 0x01}},
		{65535, []byte{0xFC, 0xFF, 0xFF}},
		{65536, []byte{0xFD, 0x00, 0x00, 0x01}},
		{1<<24 - 1, []byte{0xFD, 0xFF, 0xFF, 0xFF}},
		{1 << 24, []byte{0xFE, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00}},
		{1<<32 + 5, []byte{0xFE, 0x05, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00}},
		{math.MaxUint64, []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}},
	}
	for _, tt := range tests {
		got := appendLenEnc(nil, tt.v)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("appendLenEnc(%d) = % x, want % x", tt.v, got, tt.want)
		}
		// Appends, leaving what is there.
		pre := []byte("abc")
		if got := appendLenEnc(pre, tt.v); !bytes.Equal(got[:3], []byte("abc")) || !bytes.Equal(got[3:], tt.want) {
			t.Errorf("appendLenEnc(abc, %d) = % x", tt.v, got)
		}
		v, size, ok := lenEnc(tt.want)
		if !ok || v != tt.v || size != len(tt.want) {
			t.Errorf("lenEnc(% x) = %d, %d, %v; want %d, %d, true", tt.want, v, size, ok, tt.v, len(tt.want))
		}
		// Trailing bytes do not change the result.
		v, size, ok = lenEnc(append(append([]byte(nil), tt.want...), 0xFF, 0x00, 0x01))
		if !ok || v != tt.v || size != len(tt.want) {
			t.Errorf("lenEnc(% x + trailer) = %d, %d, %v", tt.want, v, size, ok)
		}
		// Every proper prefix of a multi-byte encoding is too short.
		for i := 0; i < len(tt.want); i++ {
			if _, size, ok := lenEnc(tt.want[:i]); ok || size != 0 {
				t.Errorf("lenEnc(% x) (truncated) = size %d ok %v, want 0 false", tt.want[:i], size, ok)
			}
		}
	}
}

func TestLenEncNotValues(t *testing.T) {
	tests := []struct {
		name     string
		in       []byte
		wantSize int
	}{
		{"nil", nil, 0},
		{"empty", []byte{}, 0},
		{"NULL marker", []byte{0xFB}, 1},
		{"NULL marker with trailer", []byte{0xFB, 0x01, 0x02}, 1},
		{"0xFF (ERR header, not a length)", []byte{0xFF, 0x00, 0x00}, 1},
		{"FC alone", []byte{0xFC}, 0},
		{"FC one byte", []byte{0xFC, 0x01}, 0},
		{"FD two bytes", []byte{0xFD, 0x01, 0x02}, 0},
		{"FE eight bytes", []byte{0xFE, 1, 2, 3, 4, 5, 6, 7}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, size, ok := lenEnc(tt.in)
			if ok || v != 0 || size != tt.wantSize {
				t.Errorf("lenEnc(% x) = %d, %d, %v; want 0, %d, false", tt.in, v, size, ok, tt.wantSize)
			}
		})
	}
}

// --- OK / EOF status ---------------------------------------------------------

func TestOkStatus(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		want   uint16
		wantOK bool
	}{
		{"okPayload autocommit", okPayload(statusAutocommit, 0), statusAutocommit, true},
		{"okPayload in trans, warnings", okPayload(statusInTrans|statusAutocommit, 3), statusInTrans | statusAutocommit, true},
		// OK after "INSERT ... 3 rows", last insert id 300 (0xFC-encoded),
		// more results, 1 warning, then an info string.
		{"insert with info", append([]byte{0x00, 0x03, 0xFC, 0x2C, 0x01, 0x0A, 0x00, 0x01, 0x00}, "Records: 3  Duplicates: 0  Warnings: 1"...),
			statusAutocommit | statusMoreResults, true},
		// 8-byte affected rows and 3-byte insert id.
		{"big counters", []byte{0x00, 0xFE, 1, 0, 0, 0, 1, 0, 0, 0, 0xFD, 1, 2, 3, 0x03, 0x00, 0, 0}, statusInTrans | statusAutocommit, true},
		// CLIENT_DEPRECATE_EOF style OK with 0xFE header.
		{"0xFE header OK", []byte{0xFE, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00}, 0x0022, true},
		// Session-state tracking data after the status is ignored.
		{"session track", []byte{0x00, 0x00, 0x00, 0x02, 0x40, 0x00, 0x00, 0x00, 0x05, 0x00, 0x03, 0x02, 0x01, 0x31}, 0x4002, true},
		{"status only, no warnings", []byte{0x00, 0x00, 0x00, 0x02, 0x00}, statusAutocommit, true},

		{"nil", nil, 0, false},
		{"header only", []byte{0x00}, 0, false},
		{"no insert id", []byte{0x00, 0x00}, 0, false},
		{"no status", []byte{0x00, 0x00, 0x00}, 0, false},
		{"half status", []byte{0x00, 0x00, 0x00, 0x02}, 0, false},
		{"affected rows truncated", []byte{0x00, 0xFC, 0x01}, 0, false},
		{"insert id truncated", []byte{0x00, 0x01, 0xFE, 0, 0, 0, 0}, 0, false},
		{"affected rows NULL", []byte{0x00, 0xFB, 0x00, 0x02, 0x00}, 0, false},
		{"insert id 0xFF", []byte{0x00, 0x00, 0xFF, 0x02, 0x00}, 0, false},
		{"counters consume status", []byte{0x00, 0x00, 0xFC, 0x02, 0x00}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := okStatus(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("okStatus(% x) = %#04x, %v; want %#04x, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestEofStatus(t *testing.T) {
	tests := []struct {
		name   string
		in     []byte
		want   uint16
		wantOK bool
	}{
		{"plain EOF", []byte{0xFE, 0x00, 0x00, 0x02, 0x00}, statusAutocommit, true},
		{"warnings, more results", []byte{0xFE, 0x05, 0x00, 0x0A, 0x00}, statusAutocommit | statusMoreResults, true},
		{"cursor exists", []byte{0xFE, 0x00, 0x00, 0x42, 0x00}, statusCursorExists | statusAutocommit, true},
		{"last row sent", []byte{0xFE, 0x00, 0x00, 0x82, 0x00}, 0x0080 /* SERVER_STATUS_LAST_ROW_SENT */ | statusAutocommit, true},
		{"high byte", []byte{0xFE, 0x00, 0x00, 0x00, 0x40}, 0x4000, true},
		{"nil", nil, 0, false},
		{"header only", []byte{0xFE}, 0, false},
		{"pre-4.1 EOF", []byte{0xFE, 0x00}, 0, false},
		{"no status", []byte{0xFE, 0x00, 0x00}, 0, false},
		{"half status", []byte{0xFE, 0x00, 0x00, 0x02}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := eofStatus(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("eofStatus(% x) = %#04x, %v; want %#04x, %v", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestOkPayloadParses(t *testing.T) {
	for _, st := range []uint16{0, statusAutocommit, statusInTrans | statusMoreResults, 0xFFFF} {
		p := okPayload(st, 7)
		if p[0] != okHeader {
			t.Fatalf("okPayload header %#x", p[0])
		}
		if got, ok := okStatus(p); !ok || got != st {
			t.Errorf("okStatus(okPayload(%#x)) = %#x, %v", st, got, ok)
		}
		if w := uint16(p[5]) | uint16(p[6])<<8; w != 7 {
			t.Errorf("okPayload warnings = %d, want 7", w)
		}
	}
}

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
	if !h.isEOF() || h.first() != eofHeader {
		t.Error("5-byte 0xFE packet is not EOF")
	}
	set(maxEOFPayloadLength-1, []byte{0xFE, 0, 0, 2, 0, 0, 0, 0})
	if !h.isEOF() {
		t.Error("8-byte 0xFE packet is not EOF")
	}
	set(maxEOFPayloadLength, []byte{0xFE, 1, 2, 3, 4, 5, 6, 7, 8})
	if h.isEOF() {
		t.Error("9-byte 0xFE packet (a row / lenenc) counted as EOF")
	}
	set(1000, testPayload(prefixLen, 1))
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
					in = append(in, testPacket(uint8(i*7), testPayload(n, byte(i)))...)
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
					checkHead(t, &h, testPayload(n, byte(i)), uint8(i*7))
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
	in := append(testPacket(1, testPayload(500, 1)), testPacket(2, []byte{0xFE, 0, 0, 2, 0})...)
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
	big := testPayload(2*maxPayload+10, 9)
	tests := []struct {
		name    string
		packets [][]byte // physical payloads of one logical packet
	}{
		{"single small", [][]byte{testPayload(10, 1)}},
		{"single large", [][]byte{testPayload(5000, 2)}},
		{"one below max", [][]byte{big[:maxPayload-1]}},
		{"exactly max, empty continuation", [][]byte{big[:maxPayload], {}}},
		{"max plus 10", [][]byte{big[:maxPayload], big[maxPayload : maxPayload+10]}},
		{"two max, empty continuation", [][]byte{big[:maxPayload], big[maxPayload : 2*maxPayload], {}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in []byte
			for i, pl := range tt.packets {
				in = append(in, testPacket(uint8(3+i), pl)...)
			}
			logicalEnd := len(in)
			// A following packet must be left for the next call.
			next := testPacket(uint8(3+len(tt.packets)), []byte{0x00, 0x00, 0x00, 0x02, 0x00})
			in = append(in, next...)
			readBufs := []int{64, 4096}
			if len(in) > 2*maxPayload {
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
				checkHead(t, &h, next[headerLen:], uint8(3+len(tt.packets)))
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
	pkt := testPacket(4, testPayload(200, 4))
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
		{"exactly prefix, large path", pkt[:headerLen+prefixLen], io.EOF, 64, io.ErrUnexpectedEOF, true, headerLen + prefixLen},
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
// packet of a logical packet (payload of exactly maxPayload bytes) has been
// forwarded, the destination expects a continuation packet; a read error
// before it arrives leaves a partly written packet there, so the error must
// be partial (otherwise session.fail writes an ERR packet that the client
// takes as the continuation).
func TestPipeForwardLogicalContinuationReadError(t *testing.T) {
	first := testPacket(0, testPayload(maxPayload, 7))
	second := testPacket(1, testPayload(100, 8))
	tests := []struct {
		name string
		in   []byte
	}{
		{"nothing after first", first},
		{"half a continuation header", append(append([]byte(nil), first...), second[:2]...)},
		{"continuation header only", append(append([]byte(nil), first...), second[:headerLen]...)},
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

// failWriter accepts limit bytes, then fails.
type failWriter struct {
	limit int
	got   bytes.Buffer
	err   error
}

func (w *failWriter) Write(b []byte) (int, error) {
	if w.got.Len()+len(b) <= w.limit {
		return w.got.Write(b)
	}
	n := w.limit - w.got.Len()
	w.got.Write(b[:n])
	return n, w.err
}

func TestPipeForwardWriteErrors(t *testing.T) {
	broken := errors.New("broken pipe")
	small := testPacket(1, testPayload(10, 1))
	large := testPacket(2, testPayload(300, 2))
	tests := []struct {
		name        string
		in          []byte
		readBuf     int
		writeBuf    int
		limit       int
		packets     int // forwarded successfully before the failing call
		wantPartial bool
	}{
		// The packet does not fit dst's buffer, so writing it fails.
		{"small path, write", large, 4096, 16, 0, 0, true},
		{"large path, first chunk", large, 64, 16, 0, 0, true},
		{"large path, later chunk", large, 64, 16, 100, 0, true},
		// Packet 1 sits in dst's buffer; forwarding packet 2 must flush
		// before waiting on src, and that flush fails: nothing of packet 2
		// had been written.
		{"flush before waiting", small, 4096, 4096, 0, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &failWriter{limit: tt.limit, err: broken}
			p := newTestPipe(&failReader{data: tt.in, err: io.EOF}, tt.readBuf, w, tt.writeBuf)
			var h packetHead
			for i := 0; i < tt.packets; i++ {
				if err := p.forward(&h); err != nil {
					t.Fatalf("packet %d: %v", i, err)
				}
			}
			err := p.forward(&h)
			var le *linkError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v, want *linkError", err)
			}
			if le.side != sideClient || !le.write || le.partial != tt.wantPartial || !errors.Is(err, broken) {
				t.Errorf("linkError{side %v write %v partial %v err %v}, want client write partial=%v broken pipe",
					le.side, le.write, le.partial, le.err, tt.wantPartial)
			}
			if !strings.HasPrefix(err.Error(), "write to client: ") {
				t.Errorf("Error() = %q", err.Error())
			}
			if !bytes.HasPrefix(tt.in, w.got.Bytes()) {
				t.Error("what reached the writer is not a prefix of the input")
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use that counts writes.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	writes int
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.writes++
	return b.buf.Write(p)
}

func (b *syncBuffer) snapshot() ([]byte, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.buf.Bytes()...), b.writes
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPipeFlushesBeforeBlocking(t *testing.T) {
	for _, readBuf := range []int{64, 4096} {
		pr, pw := io.Pipe()
		out := &syncBuffer{}
		p := newTestPipe(pr, readBuf, out, 64<<10)
		p1 := testPacket(1, testPayload(40, 1))
		p2 := testPacket(2, testPayload(300, 2)) // large path when readBuf is 64
		p3 := testPacket(3, []byte{0xFE, 0, 0, 2, 0})
		p4 := testPacket(4, testPayload(20, 4))

		writeDone := make(chan error, 1)
		go func() { _, err := pw.Write(p1); writeDone <- err }()
		var h packetHead
		if err := p.forward(&h); err != nil {
			t.Fatal(err)
		}
		if err := <-writeDone; err != nil {
			t.Fatal(err)
		}
		checkHead(t, &h, p1[headerLen:], 1)
		// forward does not flush by itself: packet 1 may wait in dst for
		// packets that arrive together with it.
		if got, _ := out.snapshot(); len(got) != 0 {
			t.Fatalf("readBuf %d: dst flushed after one packet with src not blocking (%d bytes)", readBuf, len(got))
		}

		// Packet 2 has not arrived: forward must flush packet 1 before it
		// blocks reading src.
		done := make(chan error, 1)
		go func() { done <- p.forward(&h) }()
		waitFor(t, "packet 1 to be flushed while packet 2 is pending", func() bool {
			got, _ := out.snapshot()
			return bytes.Equal(got, p1)
		})
		select {
		case err := <-done:
			t.Fatalf("forward returned before packet 2 was written: %v", err)
		default:
		}
		// Packets 2 and 3 arrive together: both are forwarded, then leave in
		// one write when forwarding packet 4 must wait.
		go func() { _, err := pw.Write(append(append([]byte(nil), p2...), p3...)); writeDone <- err }()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		checkHead(t, &h, p2[headerLen:], 2)
		if err := p.forward(&h); err != nil {
			t.Fatal(err)
		}
		checkHead(t, &h, p3[headerLen:], 3)
		if err := <-writeDone; err != nil {
			t.Fatal(err)
		}
		_, writesBefore := out.snapshot()
		go func() { done <- p.forward(&h) }()
		want := append(append(append([]byte(nil), p1...), p2...), p3...)
		waitFor(t, "packets 2 and 3 to be flushed", func() bool {
			got, _ := out.snapshot()
			return bytes.Equal(got, want)
		})
		if _, writes := out.snapshot(); readBuf == 4096 && writes != writesBefore+1 {
			t.Errorf("packets 2 and 3 left in %d writes, want 1", writes-writesBefore)
		}
		go func() { _, err := pw.Write(p4); writeDone <- err }()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		checkHead(t, &h, p4[headerLen:], 4)
		if err := <-writeDone; err != nil {
			t.Fatal(err)
		}
		// The source closing mid-stream ends the next forward.
		_ = pw.Close()
		err := p.forward(&h)
		var le *linkError
		if !errors.As(err, &le) || le.partial || !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("after close: %v", err)
		}
		got, _ := out.snapshot()
		if !bytes.Equal(got, append(want, p4...)) {
			t.Fatalf("readBuf %d: output differs from input", readBuf)
		}
	}
}

// --- readPacket / writePacket ------------------------------------------------

func TestReadPacket(t *testing.T) {
	big := testPayload(2*maxPayload+3, 5)
	tests := []struct {
		name    string
		in      []byte
		limit   int
		want    []byte
		wantSeq uint8
		wantErr error
	}{
		{"empty payload", testPacket(0, nil), 100, []byte{}, 0, nil},
		{"small", testPacket(7, []byte("hello")), 100, []byte("hello"), 7, nil},
		{"exactly limit", testPacket(1, testPayload(100, 1)), 100, testPayload(100, 1), 1, nil},
		{"over limit", testPacket(1, testPayload(101, 1)), 100, nil, 0, errMalformed},
		{"continuation joined", append(testPacket(3, big[:maxPayload]), testPacket(4, big[maxPayload:maxPayload+3])...),
			1 << 25, big[:maxPayload+3], 4, nil},
		{"exact max, empty continuation", append(testPacket(250, big[:maxPayload]), testPacket(251, nil)...),
			maxPayload, big[:maxPayload], 251, nil},
		{"two continuations", append(append(testPacket(255, big[:maxPayload]), testPacket(0, big[maxPayload:2*maxPayload])...),
			testPacket(1, big[2*maxPayload:])...), 1 << 26, big, 1, nil},
		{"continuation over limit", append(testPacket(0, big[:maxPayload]), testPacket(1, big[maxPayload:maxPayload+3])...),
			maxPayload + 2, nil, 0, errMalformed},
		{"no input", nil, 100, nil, 0, io.EOF},
		{"short header", []byte{5, 0}, 100, nil, 0, io.ErrUnexpectedEOF},
		{"short payload", testPacket(0, []byte("hello"))[:7], 100, nil, 0, io.ErrUnexpectedEOF},
		{"header without payload", testPacket(0, []byte("hello"))[:4], 100, nil, 0, io.ErrUnexpectedEOF},
		// The stream ends where a continuation must follow. (readPacket
		// reports this as plain io.EOF today; either EOF is acceptable.)
		{"missing continuation", testPacket(0, big[:maxPayload]), 1 << 25, nil, 0, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, seq, err := readPacket(bufio.NewReaderSize(bytes.NewReader(tt.in), 64), nil, tt.limit)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) && !(tt.wantErr == io.ErrUnexpectedEOF && err == io.EOF && len(tt.in) > headerLen) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if got != nil {
					t.Errorf("payload %d bytes on error", len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) || seq != tt.wantSeq {
				t.Errorf("got %d bytes seq %d, want %d bytes seq %d", len(got), seq, len(tt.want), tt.wantSeq)
			}
		})
	}
}

func TestReadPacketReusesBuffer(t *testing.T) {
	buf := make([]byte, 3, 64)
	copy(buf, "xyz")
	got, _, err := readPacket(bufio.NewReader(bytes.NewReader(testPacket(0, []byte("abc")))), buf, 100)
	if err != nil || string(got) != "abc" {
		t.Fatalf("got %q, %v", got, err)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("readPacket did not reuse buf")
	}
}

func TestWritePacket(t *testing.T) {
	big := testPayload(2*maxPayload+1, 3)
	tests := []struct {
		name     string
		payload  []byte
		seq      uint8
		wantLens []int
	}{
		{"empty", nil, 0, []int{0}},
		{"small", []byte("select 1"), 0, []int{8}},
		{"one below max", big[:maxPayload-1], 5, []int{maxPayload - 1}},
		{"exactly max", big[:maxPayload], 5, []int{maxPayload, 0}},
		{"max plus one", big[:maxPayload+1], 254, []int{maxPayload, 1}},
		{"twice max", big[:2*maxPayload], 255, []int{maxPayload, maxPayload, 0}},
		{"twice max plus one", big, 9, []int{maxPayload, maxPayload, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := bufio.NewWriterSize(&out, 4096)
			next, err := writePacket(w, tt.seq, tt.payload)
			if err != nil {
				t.Fatal(err)
			}
			if want := tt.seq + uint8(len(tt.wantLens)); next != want {
				t.Errorf("next seq %d, want %d", next, want)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			b := out.Bytes()
			var joined []byte
			for i, n := range tt.wantLens {
				if len(b) < headerLen {
					t.Fatalf("packet %d: output ends", i)
				}
				gotN := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
				if gotN != n || b[3] != tt.seq+uint8(i) {
					t.Fatalf("packet %d: length %d seq %d, want %d %d", i, gotN, b[3], n, tt.seq+uint8(i))
				}
				joined = append(joined, b[headerLen:headerLen+n]...)
				b = b[headerLen+n:]
			}
			if len(b) != 0 {
				t.Errorf("%d trailing bytes", len(b))
			}
			if !bytes.Equal(joined, tt.payload) {
				t.Error("payload differs")
			}
			// And readPacket puts it back together.
			got, lastSeq, err := readPacket(bufio.NewReader(bytes.NewReader(out.Bytes())), nil, 1<<26)
			if err != nil || !bytes.Equal(got, tt.payload) || lastSeq != next-1 {
				t.Errorf("readPacket: %d bytes seq %d err %v", len(got), lastSeq, err)
			}
		})
	}
}

func TestWritePacketError(t *testing.T) {
	broken := errors.New("broken")
	for _, limit := range []int{0, 2, 10} {
		w := bufio.NewWriterSize(&failWriter{limit: limit, err: broken}, 16)
		seq, err := writePacket(w, 3, testPayload(100, 1))
		if !errors.Is(err, broken) || seq != 3 {
			t.Errorf("limit %d: seq %d err %v, want 3 broken", limit, seq, err)
		}
	}
}

func TestSideAndLinkError(t *testing.T) {
	if sideClient.String() != "client" || sideUpstream.String() != "upstream" {
		t.Errorf("side names %q %q", sideClient, sideUpstream)
	}
	inner := errors.New("x")
	e := &linkError{side: sideUpstream, write: true, err: inner}
	if e.Error() != "write to upstream: x" || !errors.Is(e, inner) {
		t.Errorf("Error() %q, Is %v", e.Error(), errors.Is(e, inner))
	}
	if noEOF(io.EOF) != io.ErrUnexpectedEOF || noEOF(inner) != inner || noEOF(nil) != nil {
		t.Error("noEOF")
	}
}
