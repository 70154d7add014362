package wire

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// TestCompressedRoundTrip: plain packets written through compWriter come
// back whole through compReader, short ones uncompressed, long ones
// compressed, payloads of 16 MiB and more split over several compressed
// packets, all numbered from where the connection's sequence stands.
func TestCompressedRoundTrip(t *testing.T) {
	seq := &compSeq{next: 3}
	var wire0 bytes.Buffer
	w := &compWriter{dst: &wire0, seq: seq}
	plain := [][]byte{
		testkit.Packet(1, []byte("short")),
		testkit.Packet(2, bytes.Repeat([]byte("row data "), 1000)),
		testkit.Payload(MaxPayload+100, 7), // the bytes of a packet of 16 MiB and more
	}
	var want []byte
	for _, p := range plain {
		if _, err := w.Write(p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p...)
	}
	// The packets as sent: headers, sequence numbers, which are compressed.
	raw := wire0.Bytes()
	var seqs []uint8
	var compressed []bool
	for len(raw) > 0 {
		n := PayloadLen(raw)
		seqs = append(seqs, raw[3])
		compressed = append(compressed, PayloadLen(raw[4:7]) != 0)
		raw = raw[compHeaderLen+n:]
	}
	if len(seqs) != 4 || seqs[0] != 3 || seqs[3] != 6 || seq.next != 7 {
		t.Errorf("compressed sequence numbers %v, next %d", seqs, seq.next)
	}
	if compressed[0] || !compressed[1] {
		t.Errorf("compressed %v: want the short packet as it is, the long one compressed", compressed)
	}
	rseq := &compSeq{}
	r := bufio.NewReaderSize(&compReader{src: &wire0, seq: rseq}, 4096)
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes (%v), want %d", len(got), err, len(want))
	}
	if rseq.next != 7 {
		t.Errorf("reader's next sequence %d, want 7", rseq.next)
	}
}

// TestCompressedReaderMalformed: a compressed packet whose zlib stream is
// broken or short is an error, not a hang or a panic.
func TestCompressedReaderMalformed(t *testing.T) {
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	_, _ = zw.Write(bytes.Repeat([]byte("x"), 100))
	_ = zw.Close()
	good := z.Bytes()
	frame := func(body []byte, plain int) []byte {
		n := len(body)
		return append([]byte{byte(n), byte(n >> 8), byte(n >> 16), 0, byte(plain), byte(plain >> 8), byte(plain >> 16)}, body...)
	}
	for name, in := range map[string][]byte{
		"not zlib":     frame([]byte("definitely not zlib data"), 100),
		"cut short":    frame(good, 100)[:compHeaderLen+len(good)/2],
		"header only":  {5, 0, 0, 0},
		"corrupt body": frame(append(append([]byte(nil), good[:4]...), bytes.Repeat([]byte{0xFF}, len(good)-4)...), 100),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := io.ReadAll(&compReader{src: bytes.NewReader(in), seq: &compSeq{}})
			if err == nil || errors.Is(err, io.EOF) {
				t.Errorf("err = %v", err)
			}
		})
	}
}
