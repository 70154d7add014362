package seekdbshim

import (
	"bytes"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestPacketRelay checks that a packet read and written again keeps its
// framing: the same bytes, continuations and sequence numbers included.
func TestPacketRelay(t *testing.T) {
	for _, tt := range []struct {
		name string
		seq  byte
		n    int
	}{
		{"empty", 3, 0},
		{"small", 0, 10},
		{"one below the limit", 1, wire.MaxPayload - 1},
		{"exactly the limit", 7, wire.MaxPayload},
		{"sequence wraps", 255, 2*wire.MaxPayload + 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			payload := bytes.Repeat([]byte{0xA5}, tt.n)
			var framed bytes.Buffer
			if _, err := wire.WritePacket(&framed, tt.seq, payload); err != nil {
				t.Fatal(err)
			}
			framed.WriteString("\x01\x00\x00\x09\x0e") // the next packet
			in := framed.Bytes()
			r := bytes.NewReader(in)
			p, err := readPacket(r)
			if err != nil {
				t.Fatal(err)
			}
			if p.seq != tt.seq || !bytes.Equal(p.payload, payload) {
				t.Fatalf("read seq %d, %d bytes; want seq %d, %d bytes", p.seq, len(p.payload), tt.seq, tt.n)
			}
			var out bytes.Buffer
			if err := writePacket(&out, p); err != nil {
				t.Fatal(err)
			}
			if want := in[:len(in)-5]; !bytes.Equal(out.Bytes(), want) {
				t.Errorf("written %d bytes, differing from the %d read", out.Len(), len(want))
			}
			if next, err := readPacket(r); err != nil || next.seq != 9 || string(next.payload) != "\x0e" {
				t.Errorf("next packet %+v, %v", next, err)
			}
		})
	}
}
