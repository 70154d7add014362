package proxy

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"testing"
	"testing/iotest"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

func FuzzParseGreeting(f *testing.F) {
	f.Add(mariaDBSpec().bytes())
	mysql8 := mariaDBSpec()
	mysql8.version, mysql8.caps, mysql8.plugin = "8.0.36", 0xDFFFFFFF, AuthCachingSha2Password
	f.Add(mysql8.bytes())
	notSecure := mariaDBSpec()
	notSecure.caps &^= wire.CapSecureConnection | wire.CapPluginAuth
	f.Add(notSecure.bytes())
	f.Add(wire.AppendErr(nil, wire.Error(wire.ErConCount, "Too many connections")))
	f.Add([]byte{10, '4', 0, 1, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0x2C, 0})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, p []byte) {
		in := append([]byte(nil), p...)
		g, err := wire.ParseGreeting(p)
		if !bytes.Equal(in, p) {
			t.Fatal("parseGreeting modified its input")
		}
		if err != nil {
			if g != nil {
				t.Fatal("greeting and error")
			}
			var me *mysql.MyError
			if !errors.Is(err, wire.ErrMalformed) && !errors.As(err, &me) {
				t.Fatalf("error %v is neither wire.ErrMalformed nor a server error", err)
			}
			if len(p) > 0 && p[0] == wire.ErrHeader && me == nil {
				t.Fatal("ERR packet did not give a server error")
			}
		} else {
			if len(p) == 0 || p[0] != 10 {
				t.Fatalf("accepted protocol %v", p[:min(1, len(p))])
			}
			if len(g.Salt) < 8 || g.AuthPlugin == "" {
				t.Fatalf("greeting %+v", *g)
			}
			if bytes.IndexByte([]byte(g.Version), 0) >= 0 {
				t.Fatal("NUL in version")
			}
		}

		if err != nil {
			return
		}
		// The proxy's greeting for this upstream reads back as the
		// upstream's, with the proxy's capabilities and connection id.
		caps, id := uint32(0x5A5AA5A5)|wire.CapProtocol41|wire.CapSecureConnection|wire.CapPluginAuth, uint32(proxyConnIDBase|9)
		pkt := appendGreeting(nil, g, caps, id)
		g2, err := wire.ParseGreeting(pkt[wire.HeaderLen:])
		if err != nil {
			t.Fatalf("the proxy's greeting does not parse: %v", err)
		}
		if g2.Caps != caps || g2.ConnID != id || g2.Version != g.Version || g2.Collation != g.Collation || g2.Status != g.Status ||
			g2.AuthPlugin != g.AuthPlugin {
			t.Fatalf("greeting %+v for upstream %+v", *g2, *g)
		}
		if len(g.Salt) == 20 && !bytes.Equal(g2.Salt, g.Salt) {
			t.Fatalf("scramble %q, want the upstream's %q", g2.Salt, g.Salt)
		}
	})
}

func FuzzParseChangeUser(f *testing.F) {
	attrs := appendAttrs(nil, map[string]string{"_client_name": "libmariadb", "_pid": "1"})
	f.Add(changeUserSpec{user: "app", auth: testkit.Payload(20, 1), secure: true, db: strp("shop"), collation: []byte{45, 0},
		plugin: strp(AuthNativePassword), attrs: attrs}.bytes(), allClientCaps)
	f.Add(changeUserSpec{user: "app", auth: testkit.Payload(20, 1), secure: true}.bytes(), allClientCaps)
	f.Add(changeUserSpec{user: "old", auth: []byte("x"), db: strp("d")}.bytes(), uint32(0))
	f.Add(changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{8, 0}, attrs: attrs}.bytes(), allClientCaps&^wire.CapPluginAuth)
	f.Add([]byte{wire.ComChangeUser}, uint32(0xFFFFFFFF))
	f.Fuzz(func(t *testing.T, p []byte, caps uint32) {
		r, err := parseChangeUser(p, caps)
		if err != nil {
			if r != nil || !errors.Is(err, wire.ErrMalformed) {
				t.Fatalf("%v, %v", r, err)
			}
			return
		}
		if len(p) == 0 || p[0] != wire.ComChangeUser {
			t.Fatal("accepted a packet that is not COM_CHANGE_USER")
		}
		if bytes.IndexByte([]byte(r.user), 0) >= 0 || bytes.IndexByte([]byte(r.db), 0) >= 0 || bytes.IndexByte([]byte(r.plugin), 0) >= 0 {
			t.Fatalf("NUL inside a string field: %+v", *r)
		}
		if caps&wire.CapSecureConnection != 0 && len(r.auth) > 255 {
			t.Fatal("auth longer than its length byte allows")
		}
		if r.attrs != nil && caps&wire.CapConnectAttrs == 0 {
			t.Fatal("attributes without CLIENT_CONNECT_ATTRS")
		}
		if r.plugin != "" && caps&wire.CapPluginAuth == 0 {
			t.Fatal("plugin without CLIENT_PLUGIN_AUTH")
		}
	})
}

func FuzzParseAttrs(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{4, 1, 'k', 1, 'v'})
	f.Add(appendAttrs(nil, map[string]string{"_client_name": "libmariadb", "_os": "Linux", "program_name": "mysql"}))
	f.Add(appendAttrs(nil, map[string]string{"long": string(testkit.Payload(300, 3))}))
	f.Add([]byte{0xFC, 0x04, 0x00, 1, 'k', 1, 'v'})
	f.Add([]byte{0xFB})
	f.Fuzz(func(t *testing.T, p []byte) {
		m, err := parseAttrs(p)
		if err != nil {
			if m != nil || !errors.Is(err, wire.ErrMalformed) {
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

// FuzzPipeForward feeds an arbitrary byte stream through pipe.forward until
// it fails: no panic, the output is always a prefix of the input, errors are
// reads on the source side, and partial is set exactly when the output ends
// inside a packet.
func FuzzPipeForward(f *testing.F) {
	var stream []byte
	for i, n := range []int{0, 1, 5, 40, 100, 300} {
		stream = append(stream, testkit.Packet(uint8(i), testkit.Payload(n, byte(i)))...)
	}
	f.Add(stream, uint8(0))
	f.Add(stream, uint8(1))
	f.Add(stream, uint8(6))
	f.Add(stream[:len(stream)-7], uint8(2))
	f.Add(testkit.Packet(0, []byte{0xFE, 0, 0, 2, 0}), uint8(3))
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
			if pos+wire.HeaderLen > len(in) {
				t.Fatal("forwarded a packet past the end of the input")
			}
			n := int(in[pos]) | int(in[pos+1])<<8 | int(in[pos+2])<<16
			if h.length != n || h.seq != in[pos+3] {
				t.Fatalf("head length %d seq %d, want %d %d", h.length, h.seq, n, in[pos+3])
			}
			pos += wire.HeaderLen + n
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
