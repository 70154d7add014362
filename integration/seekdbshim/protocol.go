package seekdbshim

import (
	"bytes"
	"io"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// maxPacket bounds the logical packets the shim relays: the largest
// max_allowed_packet a server accepts (1 GiB).
const maxPacket = 1 << 30

// packet is one logical protocol packet as the shim relays it: its payload
// (continuations joined) and the sequence number of its first physical
// packet.
type packet struct {
	seq     byte
	payload []byte
}

// readPacket reads one logical packet.
func readPacket(r io.Reader) (packet, error) {
	payload, last, err := wire.ReadPacket(r, nil, maxPacket)
	if err != nil {
		return packet{}, err
	}
	// A payload of n bytes takes n/MaxPayload+1 physical packets, numbered
	// consecutively.
	return packet{seq: last - byte(len(payload)/wire.MaxPayload), payload: payload}, nil
}

// writePacket writes p to w, framed as the peer sent it, in a single Write.
func writePacket(w io.Writer, p packet) error {
	var b bytes.Buffer
	b.Grow(len(p.payload) + wire.HeaderLen*(len(p.payload)/wire.MaxPayload+1))
	_, _ = wire.WritePacket(&b, p.seq, p.payload) // a bytes.Buffer does not fail
	_, err := w.Write(b.Bytes())
	return err
}

// result is the outcome of a statement the shim runs itself on a client's
// upstream session.
type result struct {
	status  uint16 // server status of the final OK or EOF packet
	columns []string
	rows    [][]*string // nil element = SQL NULL
}
