package proxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"testing"
	"testing/iotest"

	"github.com/go-mysql-org/go-mysql/mysql"
)

func FuzzParseGreeting(f *testing.F) {
	f.Add(mariaDBSpec().bytes())
	mysql8 := mariaDBSpec()
	mysql8.version, mysql8.caps, mysql8.plugin = "8.0.36", 0xDFFFFFFF, AuthCachingSha2Password
	f.Add(mysql8.bytes())
	notSecure := mariaDBSpec()
	notSecure.caps &^= capSecureConnection | capPluginAuth
	f.Add(notSecure.bytes())
	f.Add(errPayload(newError(1040, "08004", "Too many connections")))
	f.Add([]byte{10, '4', 0, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0x2C, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		in := append([]byte(nil), p...)
		g, err := parseGreeting(p)
		if !bytes.Equal(in, p) {
			t.Fatal("parseGreeting modified its input")
		}
		if err != nil {
			if g != nil {
				t.Fatal("greeting and error")
			}
			var me *mysql.MyError
			if !errors.Is(err, errMalformed) && !errors.As(err, &me) {
				t.Fatalf("error %v is neither errMalformed nor a server error", err)
			}
			if len(p) > 0 && p[0] == errHeader && me == nil {
				t.Fatal("ERR packet did not give a server error")
			}
		} else {
			if len(p) == 0 || p[0] != 10 {
				t.Fatalf("accepted protocol %v", p[:min(1, len(p))])
			}
			if len(g.salt) < 8 || g.authPlugin == "" {
				t.Fatalf("greeting %+v", *g)
			}
			if bytes.IndexByte([]byte(g.version), 0) >= 0 {
				t.Fatal("NUL in version")
			}
		}

		// greetingConn.patch on the same bytes framed as a packet.
		pkt := testPacket(0, p[:min(len(p), maxPayload-1)])
		caps := uint32(0x5A5AA5A5)
		gc := &greetingConn{caps: caps}
		gc.patch(pkt)
		if len(pkt) != headerLen+len(p) {
			t.Fatal("patch changed the length")
		}
		if err != nil || len(g.salt) == 0 {
			return
		}
		g2, err2 := parseGreeting(pkt[headerLen:])
		if err2 != nil {
			// Changing the flags may change how the rest parses (secure
			// connection, plugin auth); only the flags are checked.
			return
		}
		// If patch applied (room for the upper flags), the flags read back.
		verEnd := 1 + len(g.version) + 1
		if len(p) >= verEnd+20 {
			if uint16(g2.caps) != uint16(caps) {
				t.Fatalf("lower caps %#x after patch, want %#x", uint16(g2.caps), uint16(caps))
			}
			if len(p) >= verEnd+15+16 && g2.caps != caps {
				t.Fatalf("caps %#x after patch, want %#x", g2.caps, caps)
			}
		} else if !bytes.Equal(pkt[headerLen:], p) {
			t.Fatal("patch changed a greeting too short to patch")
		}
	})
}

func FuzzParseChangeUser(f *testing.F) {
	attrs := appendAttrs(nil, map[string]string{"_client_name": "libmariadb", "_pid": "1"})
	f.Add(changeUserSpec{user: "app", auth: testPayload(20, 1), secure: true, db: strp("shop"), collation: []byte{45, 0},
		plugin: strp(AuthNativePassword), attrs: attrs}.bytes(), allClientCaps)
	f.Add(changeUserSpec{user: "app", auth: testPayload(20, 1), secure: true}.bytes(), allClientCaps)
	f.Add(changeUserSpec{user: "old", auth: []byte("x"), db: strp("d")}.bytes(), uint32(0))
	f.Add(changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{8, 0}, attrs: attrs}.bytes(), allClientCaps&^capPluginAuth)
	f.Add([]byte{comChangeUser}, uint32(0xFFFFFFFF))
	f.Fuzz(func(t *testing.T, p []byte, caps uint32) {
		r, err := parseChangeUser(p, caps)
		if err != nil {
			if r != nil || !errors.Is(err, errMalformed) {
				t.Fatalf("%v, %v", r, err)
			}
			return
		}
		if len(p) == 0 || p[0] != comChangeUser {
			t.Fatal("accepted a packet that is not COM_CHANGE_USER")
		}
		if bytes.IndexByte([]byte(r.user), 0) >= 0 || bytes.IndexByte([]byte(r.db), 0) >= 0 || bytes.IndexByte([]byte(r.plugin), 0) >= 0 {
			t.Fatalf("NUL inside a string field: %+v", *r)
		}
		if caps&capSecureConnection != 0 && len(r.auth) > 255 {
			t.Fatal("auth longer than its length byte allows")
		}
		if r.attrs != nil && caps&capConnectAttrs == 0 {
			t.Fatal("attributes without CLIENT_CONNECT_ATTRS")
		}
		if r.plugin != "" && caps&capPluginAuth == 0 {
			t.Fatal("plugin without CLIENT_PLUGIN_AUTH")
		}
	})
}

func FuzzParseAttrs(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{4, 1, 'k', 1, 'v'})
	f.Add(appendAttrs(nil, map[string]string{"_client_name": "libmariadb", "_os": "Linux", "program_name": "mysql"}))
	f.Add(appendAttrs(nil, map[string]string{"long": string(testPayload(300, 3))}))
	f.Add([]byte{0xFC, 0x04, 0x00, 1, 'k', 1, 'v'})
	f.Add([]byte{0xFB})
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := parseAttrs(p)
		if err != nil {
			if m != nil || !errors.Is(err, errMalformed) {
				t.Fatalf("%v, %v", m, err)
			}
			return
		}
		if m == nil {
			t.Fatal("nil map without error")
		}
		enc := appendAttrs(nil, m)
		back, err := parseAttrs(enc)
		if err != nil || !maps.Equal(back, m) {
			t.Fatalf("re-encoded attributes do not parse back: %v", err)
		}
		if !bytes.Equal(appendAttrs(nil, back), enc) {
			t.Fatal("appendAttrs is not deterministic")
		}
	})
}

func FuzzLenEnc(f *testing.F) {
	for _, v := range []uint64{0, 250, 251, 65535, 65536, 1<<24 - 1, 1 << 24, 1<<64 - 1} {
		f.Add(v, appendLenEnc(nil, v))
	}
	f.Add(uint64(0), []byte{0xFB})
	f.Add(uint64(0), []byte{0xFF})
	f.Add(uint64(0), []byte{0xFE, 1, 2})
	f.Fuzz(func(t *testing.T, v uint64, p []byte) {
		enc := appendLenEnc(nil, v)
		got, size, ok := lenEnc(enc)
		if !ok || got != v || size != len(enc) {
			t.Fatalf("lenEnc(appendLenEnc(%d) = % x) = %d, %d, %v", v, enc, got, size, ok)
		}
		got, size, ok = lenEnc(append(enc, p...))
		if !ok || got != v || size != len(enc) {
			t.Fatalf("with trailer: %d, %d, %v", got, size, ok)
		}
		d, size, ok := lenEnc(p)
		if size < 0 || size > len(p) {
			t.Fatalf("lenEnc(% x) size %d", p, size)
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
		re := appendLenEnc(nil, d)
		if back, _, ok := lenEnc(re); !ok || back != d {
			t.Fatalf("re-encoding %d", d)
		}
		if len(re) > size {
			t.Fatalf("canonical encoding of %d (%d bytes) longer than the input's (%d)", d, len(re), size)
		}
	})
}

func FuzzOkStatus(f *testing.F) {
	f.Add(okPayload(statusAutocommit, 0))
	f.Add(okPayload(statusInTrans|statusMoreResults, 3))
	f.Add(append([]byte{0x00, 0x03, 0xFC, 0x2C, 0x01, 0x0A, 0x00, 0x01, 0x00}, "Records: 3"...))
	f.Add([]byte{0xFE, 0x00, 0x00, 0x02, 0x00})
	f.Add([]byte{0x00, 0xFE, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0})
	f.Add([]byte{0x00, 0xFB})
	f.Fuzz(func(t *testing.T, p []byte) {
		st, ok := okStatus(p)
		if ok {
			_, n1, ok1 := lenEnc(p[1:])
			_, n2, ok2 := lenEnc(p[1+n1:])
			if !ok1 || !ok2 || len(p) < 1+n1+n2+2 {
				t.Fatal("ok for a packet without counters and status")
			}
			if want := binary.LittleEndian.Uint16(p[1+n1+n2:]); st != want {
				t.Fatalf("status %#x, want %#x", st, want)
			}
		} else if st != 0 {
			t.Fatal("status without ok")
		}
		est, eok := eofStatus(p)
		if eok != (len(p) >= 5) {
			t.Fatalf("eofStatus ok=%v for %d bytes", eok, len(p))
		}
		if eok && est != binary.LittleEndian.Uint16(p[3:]) {
			t.Fatal("eofStatus")
		}
	})
}

// FuzzPipeForward feeds an arbitrary byte stream through pipe.forward until
// it fails: no panic, the output is always a prefix of the input, errors are
// reads on the source side, and partial is set exactly when the output ends
// inside a packet.
func FuzzPipeForward(f *testing.F) {
	var stream []byte
	for i, n := range []int{0, 1, 5, 40, 100, 300} {
		stream = append(stream, testPacket(uint8(i), testPayload(n, byte(i)))...)
	}
	f.Add(stream, uint8(0))
	f.Add(stream, uint8(1))
	f.Add(stream, uint8(6))
	f.Add(stream[:len(stream)-7], uint8(2))
	f.Add(testPacket(0, []byte{0xFE, 0, 0, 2, 0}), uint8(3))
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0x00, 1, 2, 3}, uint8(4))
	f.Add([]byte{}, uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, mode uint8) {
		readBufs := []int{36, 40, 64, 100, 4096}
		var r io.Reader = bytes.NewReader(in)
		switch (mode / 8) % 3 {
		case 1:
			r = iotest.OneByteReader(r)
		case 2:
			r = iotest.HalfReader(r)
		}
		var out bytes.Buffer
		p := newTestPipe(r, readBufs[int(mode)%len(readBufs)], &out, 16<<(mode%4))
		pos := 0
		for {
			var h packetHead
			err := p.forward(&h)
			if err != nil {
				var le *linkError
				if !errors.As(err, &le) || le.side != sideUpstream || le.write {
					t.Fatalf("error %v is not a read error on the source", err)
				}
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("unexpected error %v", err)
				}
				_ = p.dst.Flush()
				if !bytes.HasPrefix(in, out.Bytes()) {
					t.Fatal("output is not a prefix of the input")
				}
				atBoundary := out.Len() == pos
				if le.partial == atBoundary {
					t.Fatalf("partial=%v with %d bytes out, %d in complete packets", le.partial, out.Len(), pos)
				}
				return
			}
			if pos+headerLen > len(in) {
				t.Fatal("forwarded a packet past the end of the input")
			}
			n := int(in[pos]) | int(in[pos+1])<<8 | int(in[pos+2])<<16
			if h.length != n || h.seq != in[pos+3] {
				t.Fatalf("head length %d seq %d, want %d %d", h.length, h.seq, n, in[pos+3])
			}
			pos += headerLen + n
			if pos > len(in) {
				t.Fatal("forwarded a packet past the end of the input")
			}
			if !bytes.Equal(h.payload(), in[pos-n:pos-n+min(n, prefixLen)]) {
				t.Fatal("head prefix differs from the payload")
			}
			_ = p.dst.Flush()
			if !bytes.Equal(out.Bytes(), in[:pos]) {
				t.Fatal("output differs from the input")
			}
		}
	})
}
