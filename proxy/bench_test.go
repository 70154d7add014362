package proxy

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// stream builds n packets of payload size each.
func stream(n, size int) []byte {
	var b bytes.Buffer
	payload := bytes.Repeat([]byte{'r'}, size)
	for i := 0; i < n; i++ {
		b.Write([]byte{byte(size), byte(size >> 8), byte(size >> 16), byte(i)})
		b.Write(payload)
	}
	return b.Bytes()
}

// benchmarkForward measures relaying a result-set-like stream of packets.
func benchmarkForward(b *testing.B, n, size int) {
	data := stream(n, size)
	src := bytes.NewReader(data)
	br := bufio.NewReaderSize(src, upstreamReadBuf)
	bw := bufio.NewWriterSize(io.Discard, clientWriteBuf)
	p := pipe{src: br, dst: bw, srcSide: sideUpstream, dstSide: sideClient}
	var h packetHead
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(data)
		br.Reset(src)
		for i := 0; i < n; i++ {
			if err := p.forward(&h); err != nil {
				b.Fatal(err)
			}
		}
		_ = p.flush()
	}
}

func BenchmarkForwardRows100B(b *testing.B)   { benchmarkForward(b, 1000, 100) }
func BenchmarkForwardRows1KiB(b *testing.B)   { benchmarkForward(b, 1000, 1024) }
func BenchmarkForwardPacket1MiB(b *testing.B) { benchmarkForward(b, 4, 1<<20) }
