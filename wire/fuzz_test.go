package wire

import (
	"encoding/binary"
	"testing"
)

func FuzzLenEnc(f *testing.F) {
	for _, v := range []uint64{0, 250, 251, 65535, 65536, 1<<24 - 1, 1 << 24, 1<<64 - 1} {
		f.Add(v, AppendLenEnc(nil, v))
	}
	f.Add(uint64(0), []byte{0xFB})
	f.Add(uint64(0), []byte{0xFF})
	f.Add(uint64(0), []byte{0xFE, 1, 2})
	f.Fuzz(func(t *testing.T, v uint64, p []byte) {
		enc := AppendLenEnc(nil, v)
		got, size, ok := LenEnc(enc)
		if !ok || got != v || size != len(enc) {
			t.Fatalf("LenEnc(AppendLenEnc(%d) = % x) = %d, %d, %v", v, enc, got, size, ok)
		}
		got, size, ok = LenEnc(append(enc, p...))
		if !ok || got != v || size != len(enc) {
			t.Fatalf("with trailer: %d, %d, %v", got, size, ok)
		}
		d, size, ok := LenEnc(p)
		if size < 0 || size > len(p) {
			t.Fatalf("LenEnc(% x) size %d", p, size)
		}
		if !ok {
			if d != 0 {
				t.Fatalf("value %d without ok", d)
			}
			return
		}
		if size == 0 {
			t.Fatal("ok with size 0")
		}
		if size == 1 && d >= 251 {
			t.Fatalf("1-byte value %d", d)
		}
		re := AppendLenEnc(nil, d)
		if back, _, ok := LenEnc(re); !ok || back != d {
			t.Fatalf("re-encoding %d", d)
		}
		if len(re) > size {
			t.Fatalf("canonical encoding of %d (%d bytes) longer than the input's (%d)", d, len(re), size)
		}
	})
}

func FuzzOkStatus(f *testing.F) {
	f.Add(wireOK(StatusAutocommit, 0))
	f.Add(wireOK(StatusInTrans|StatusMoreResults, 3))
	f.Add(append([]byte{0x00, 0x03, 0xFC, 0x2C, 0x01, 0x0A, 0x00, 0x01, 0x00}, "Records: 3"...))
	f.Add([]byte{0xFE, 0x00, 0x00, 0x02, 0x00})
	f.Add([]byte{0x00, 0xFE, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0})
	f.Add([]byte{0x00, 0xFB})
	f.Fuzz(func(t *testing.T, p []byte) {
		st, ok := OKStatus(p)
		if ok {
			_, n1, ok1 := LenEnc(p[1:])
			_, n2, ok2 := LenEnc(p[1+n1:])
			if !ok1 || !ok2 || len(p) < 1+n1+n2+2 {
				t.Fatal("ok for a packet without counters and status")
			}
			if want := binary.LittleEndian.Uint16(p[1+n1+n2:]); st != want {
				t.Fatalf("status %#x, want %#x", st, want)
			}
		} else if st != 0 {
			t.Fatal("status without ok")
		}
		est, eok := EOFStatus(p)
		if eok != (len(p) >= 5) {
			t.Fatalf("EOFStatus ok=%v for %d bytes", eok, len(p))
		}
		if eok && est != binary.LittleEndian.Uint16(p[3:]) {
			t.Fatal("EOFStatus")
		}
	})
}
