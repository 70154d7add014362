package testkit

// Packet frames payload as one physical MySQL packet with sequence seq.
// The payload must be shorter than 1<<24 bytes.
func Packet(seq uint8, payload []byte) []byte {
	n := len(payload)
	b := make([]byte, 0, 4+n)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(b, payload...)
}

// Payload is n deterministic, non-repeating-looking bytes (xorshift from
// seed).
func Payload(n int, seed byte) []byte {
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
