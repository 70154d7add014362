package proxy

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Capabilities a MariaDB 10.11 server announces: CLIENT_MYSQL (bit 0) is
// clear, as MariaDB uses it to tell itself apart; CLIENT_DEPRECATE_EOF and
// bit 31 (CLIENT_REMEMBER_OPTIONS / MariaDB "progress obsolete") are set.
const mariaDBCaps uint32 = 0x81BFF7FE

var (
	testSalt1 = []byte("12345678")
	testSalt2 = []byte("abcdefghijkl")
)

// greetingSpec is a protocol-10 handshake to build by hand.
type greetingSpec struct {
	version    string
	connID     uint32
	salt1      []byte // 8 bytes
	caps       uint32
	collation  uint8
	status     uint16
	authLen    byte
	extCaps    uint32 // MariaDB: last 4 of the 10 reserved bytes
	salt2      []byte // written followed by a NUL
	plugin     string
	pluginNul  bool
	noSalt2Nul bool
}

func mariaDBSpec() greetingSpec {
	return greetingSpec{
		version: "5.5.5-10.11.6-MariaDB", connID: 0x01020304, salt1: testSalt1,
		caps: mariaDBCaps, collation: 45, status: wire.StatusAutocommit, authLen: 21, extCaps: 0x0000001D,
		salt2: testSalt2, plugin: AuthNativePassword, pluginNul: true,
	}
}

func (s greetingSpec) bytes() []byte {
	b := []byte{10}
	b = append(b, s.version...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, s.connID)
	b = append(b, s.salt1...)
	b = append(b, 0) // filler
	b = binary.LittleEndian.AppendUint16(b, uint16(s.caps))
	b = append(b, s.collation)
	b = binary.LittleEndian.AppendUint16(b, s.status)
	b = binary.LittleEndian.AppendUint16(b, uint16(s.caps>>16))
	b = append(b, s.authLen)
	b = append(b, 0, 0, 0, 0, 0, 0)
	b = binary.LittleEndian.AppendUint32(b, s.extCaps)
	b = append(b, s.salt2...)
	if !s.noSalt2Nul {
		b = append(b, 0)
	}
	b = append(b, s.plugin...)
	if s.pluginNul {
		b = append(b, 0)
	}
	return b
}

func TestParseGreetingMariaDB(t *testing.T) {
	p := mariaDBSpec().bytes()
	// Sanity-check the hand-built bytes against the documented layout.
	if len(p) != 1+len("5.5.5-10.11.6-MariaDB")+1+4+8+1+2+1+2+2+1+10+13+len(AuthNativePassword)+1 {
		t.Fatalf("greeting is %d bytes", len(p))
	}
	g, err := wire.ParseGreeting(p)
	if err != nil {
		t.Fatal(err)
	}
	want := &wire.Greeting{
		Version: "5.5.5-10.11.6-MariaDB", ConnID: 0x01020304, Salt: []byte("12345678abcdefghijkl"),
		Caps: mariaDBCaps, Collation: 45, Status: wire.StatusAutocommit, AuthPlugin: AuthNativePassword,
	}
	checkGreeting(t, g, want)
	if g.ExtCaps != 0x1D {
		t.Errorf("MariaDB's extended capabilities %#x, want 0x1d", g.ExtCaps)
	}
	// The proxy's greeting offers those the relay follows (all but
	// COM_MULTI), and none to a MySQL client (CLIENT_MYSQL set).
	back, err := wire.ParseGreeting(appendGreeting(nil, g, clientCaps(g.Caps, false), 7)[wire.HeaderLen:])
	if err != nil || back.ExtCaps != 0x1D {
		t.Errorf("the proxy's greeting offers %#x (%v), want 0x1d", back.ExtCaps, err)
	}
	g.ExtCaps |= wire.ExtCapComMulti
	if back, _ := wire.ParseGreeting(appendGreeting(nil, g, clientCaps(g.Caps, false), 7)[wire.HeaderLen:]); back.ExtCaps != 0x1D {
		t.Errorf("the proxy's greeting offers %#x for an upstream offering COM_MULTI, want 0x1d", back.ExtCaps)
	}
	g.ExtCaps = 0x1D
	if back, _ := wire.ParseGreeting(appendGreeting(nil, g, clientCaps(g.Caps, false)|wire.CapLongPassword, 7)[wire.HeaderLen:]); back.ExtCaps != 0 {
		t.Errorf("extended capabilities offered with CLIENT_MYSQL: %#x", back.ExtCaps)
	}
}

func checkGreeting(t *testing.T, g, want *wire.Greeting) {
	t.Helper()
	if g.Version != want.Version || g.ConnID != want.ConnID || !bytes.Equal(g.Salt, want.Salt) ||
		g.Caps != want.Caps || g.Collation != want.Collation || g.Status != want.Status || g.AuthPlugin != want.AuthPlugin {
		t.Errorf("parseGreeting =\n  %+v\nwant\n  %+v", *g, *want)
	}
}

func TestParseGreetingVariants(t *testing.T) {
	mysql8 := mariaDBSpec()
	mysql8.version, mysql8.caps, mysql8.collation, mysql8.extCaps = "8.0.36", 0xDFFFFFFF, 255, 0
	mysql8.plugin = AuthCachingSha2Password

	noPluginNul := mariaDBSpec()
	noPluginNul.pluginNul = false // MySQL 5.5.7-5.5.9 omitted it

	noPluginAuth := mariaDBSpec()
	noPluginAuth.caps &^= wire.CapPluginAuth
	noPluginAuth.plugin, noPluginAuth.pluginNul = "", false

	// Without CLIENT_SECURE_CONNECTION the second scramble part is not read.
	notSecure := mariaDBSpec()
	notSecure.caps &^= wire.CapSecureConnection | wire.CapPluginAuth
	notSecure.salt2, notSecure.noSalt2Nul, notSecure.plugin, notSecure.pluginNul = nil, true, "", false

	// An auth data length longer than 21 asks for a longer second part.
	longSalt := mariaDBSpec()
	longSalt.authLen = 8 + 16
	longSalt.salt2 = []byte("abcdefghijklmno") // 15 + NUL = 16

	// auth data length 0 still means at least 13 bytes.
	zeroAuthLen := mariaDBSpec()
	zeroAuthLen.authLen = 0

	// Pre-4.1 server: nothing after the lower capability flags.
	old := append(append([]byte{10}, "4.0.30\x00"...), 1, 0, 0, 0)
	old = append(old, testSalt1...)
	old = append(old, 0, 0x2C, 0x00)

	tests := []struct {
		name string
		in   []byte
		want *wire.Greeting
	}{
		{"MySQL 8", mysql8.bytes(), &wire.Greeting{Version: "8.0.36", ConnID: 0x01020304, Salt: []byte("12345678abcdefghijkl"),
			Caps: 0xDFFFFFFF, Collation: 255, Status: 2, AuthPlugin: AuthCachingSha2Password}},
		{"plugin without NUL", noPluginNul.bytes(), &wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", ConnID: 0x01020304,
			Salt: []byte("12345678abcdefghijkl"), Caps: mariaDBCaps, Collation: 45, Status: 2, AuthPlugin: AuthNativePassword}},
		{"no plugin auth", noPluginAuth.bytes(), &wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", ConnID: 0x01020304,
			Salt: []byte("12345678abcdefghijkl"), Caps: mariaDBCaps &^ wire.CapPluginAuth, Collation: 45, Status: 2, AuthPlugin: AuthNativePassword}},
		{"not secure connection", notSecure.bytes(), &wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", ConnID: 0x01020304,
			Salt: []byte("12345678"), Caps: mariaDBCaps &^ (wire.CapSecureConnection | wire.CapPluginAuth), Collation: 45, Status: 2, AuthPlugin: AuthNativePassword}},
		{"long salt", longSalt.bytes(), &wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", ConnID: 0x01020304,
			Salt: []byte("12345678abcdefghijklmno"), Caps: mariaDBCaps, Collation: 45, Status: 2, AuthPlugin: AuthNativePassword}},
		{"zero auth data length", zeroAuthLen.bytes(), &wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", ConnID: 0x01020304,
			Salt: []byte("12345678abcdefghijkl"), Caps: mariaDBCaps, Collation: 45, Status: 2, AuthPlugin: AuthNativePassword}},
		{"pre-4.1", old, &wire.Greeting{Version: "4.0.30", ConnID: 1, Salt: testSalt1, Caps: 0x2C, AuthPlugin: AuthNativePassword}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := wire.ParseGreeting(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			checkGreeting(t, g, tt.want)
		})
	}
}

func TestParseGreetingDoesNotAlias(t *testing.T) {
	p := mariaDBSpec().bytes()
	g, err := wire.ParseGreeting(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p {
		p[i] = 0xAA
	}
	if string(g.Salt) != "12345678abcdefghijkl" || g.Version != "5.5.5-10.11.6-MariaDB" {
		t.Errorf("greeting changed with its input buffer: %+v", *g)
	}
}

func TestParseGreetingErrPacket(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want mysql.MyError
	}{
		{"too many connections", append([]byte{0xFF, 0x10, 0x04, '#', '0', '8', '0', '0', '4'}, "Too many connections"...),
			mysql.MyError{Code: 1040, State: "08004", Message: "Too many connections"}},
		// Servers send host-blocked errors before the handshake, without a
		// SQL state.
		{"host blocked, no state", append([]byte{0xFF, 0x69, 0x04}, "Host '10.0.0.1' is blocked"...),
			mysql.MyError{Code: 1129, State: "HY000", Message: "Host '10.0.0.1' is blocked"}},
		{"code only", []byte{0xFF, 0x15, 0x04}, mysql.MyError{Code: 1045, State: "HY000"}},
		{"header only", []byte{0xFF}, mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "HY000", Message: "malformed error packet from upstream"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := wire.ParseGreeting(tt.in)
			if g != nil {
				t.Fatalf("greeting %+v from an ERR packet", *g)
			}
			var me *mysql.MyError
			if !errors.As(err, &me) {
				t.Fatalf("err = %v (%T), want *mysql.MyError", err, err)
			}
			if *me != tt.want {
				t.Errorf("got %+v, want %+v", *me, tt.want)
			}
		})
	}
}

func TestParseGreetingMalformed(t *testing.T) {
	valid := mariaDBSpec().bytes()
	verEnd := 1 + len("5.5.5-10.11.6-MariaDB") + 1
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"protocol 9", append([]byte{9}, valid[1:]...)},
		{"protocol 0", []byte{0}},
		{"no version NUL", []byte("\x0a5.5.5-10.11.6-MariaDB")},
		{"version only", valid[:verEnd]},
		{"short after version", valid[:verEnd+14]},
		{"scramble cut", valid[:verEnd+15+16+5]},
		{"scramble part 2 without room for 13", valid[:verEnd+15+16+12]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := wire.ParseGreeting(tt.in)
			if err == nil {
				t.Fatalf("no error; got %+v", *g)
			}
			if !errors.Is(err, wire.ErrMalformed) {
				t.Errorf("err = %v, want wire.ErrMalformed", err)
			}
		})
	}
	// Every truncation: never a panic; errors where required parts are cut.
	for i := 0; i <= len(valid); i++ {
		g, err := wire.ParseGreeting(valid[:i])
		switch {
		case i < verEnd+15 && err == nil:
			t.Errorf("prefix %d: no error for a greeting cut before the capability flags", i)
		case i >= verEnd+15+16 && i < verEnd+15+16+13 && err == nil:
			t.Errorf("prefix %d: no error for a greeting cut inside the scramble", i)
		case i == len(valid) && err != nil:
			t.Errorf("full greeting: %v", err)
		case err == nil && g.AuthPlugin == "":
			t.Errorf("prefix %d: empty auth plugin", i)
		}
	}
	// A huge auth data length must not make the parser read past the end.
	big := mariaDBSpec()
	big.authLen = 255
	if _, err := wire.ParseGreeting(big.bytes()); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("auth data length 255 on a short greeting: %v", err)
	}
}

func TestClientCaps(t *testing.T) {
	// Compression is the proxy's own (issue 13): offered whatever the
	// upstream offers.
	always := uint32(wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapCompress)
	never := uint32(wire.CapSSL | 1<<26 /* zstd */ | 1<<27 /* query attrs */ | 1<<29 /* MFA */ | 1<<31)
	for _, up := range []uint32{0, mariaDBCaps, 0xFFFFFFFF, wire.CapCompress | wire.CapDeprecateEOF | wire.CapSSL, wire.CapProtocol41, relayedCaps} {
		for _, tls := range []bool{false, true} {
			c := clientCaps(up, tls)
			if c&always != always {
				t.Errorf("clientCaps(%#x, %v) = %#x lacks protocol41/secure/plugin-auth", up, tls, c)
			}
			// CLIENT_DEPRECATE_EOF is offered as the server offers it (issue 13).
			if (c&wire.CapDeprecateEOF != 0) != (up&wire.CapDeprecateEOF != 0) {
				t.Errorf("clientCaps(%#x, %v) = %#x: DEPRECATE_EOF %v", up, tls, c, c&wire.CapDeprecateEOF != 0)
			}
			if (c&wire.CapSSL != 0) != tls {
				t.Errorf("clientCaps(%#x, %v) = %#x: SSL %v", up, tls, c, c&wire.CapSSL != 0)
			}
			if extra := c &^ (up & relayedCaps) &^ always &^ wire.CapSSL; extra != 0 {
				t.Errorf("clientCaps(%#x, %v) = %#x offers %#x the upstream lacks", up, tls, c, extra)
			}
			if c&never&^wire.CapSSL != 0 {
				t.Errorf("clientCaps(%#x, %v) = %#x offers %#x", up, tls, c, c&never)
			}
			if up&relayedCaps&^c != 0 {
				t.Errorf("clientCaps(%#x, %v) = %#x drops relayable %#x", up, tls, c, up&relayedCaps&^c)
			}
		}
	}
	if got := clientCaps(mariaDBCaps, false); got != mariaDBCaps&relayedCaps|always {
		t.Errorf("clientCaps(MariaDB) = %#x", got)
	}
}

// TestAppendGreeting: the proxy's greeting is the upstream's (version,
// collation, status, scramble, auth plugin) with the proxy's capabilities
// and connection id; a go-mysql-style client reads it.
func TestAppendGreeting(t *testing.T) {
	up, err := wire.ParseGreeting(mariaDBSpec().bytes())
	if err != nil {
		t.Fatal(err)
	}
	mysql8 := mariaDBSpec()
	mysql8.version, mysql8.plugin = "8.0.36", AuthCachingSha2Password
	up8, err := wire.ParseGreeting(mysql8.bytes())
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []*wire.Greeting{up, up8} {
		for _, caps := range []uint32{clientCaps(mariaDBCaps, false), clientCaps(mariaDBCaps, true), wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth} {
			pkt := appendGreeting(nil, g, caps, proxyConnIDBase|7)
			if pkt[3] != 0 || wire.PayloadLen(pkt) != len(pkt)-wire.HeaderLen {
				t.Fatalf("greeting header % x for %d bytes", pkt[:4], len(pkt))
			}
			got, err := wire.ParseGreeting(pkt[wire.HeaderLen:])
			if err != nil {
				t.Fatal(err)
			}
			if got.Caps != caps || got.ConnID != proxyConnIDBase|7 || got.Status != g.Status {
				t.Errorf("caps %#x, id %#x, status %#x; want %#x, %#x, %#x", got.Caps, got.ConnID, got.Status, caps, proxyConnIDBase|7, g.Status)
			}
			if got.Version != g.Version || got.Collation != g.Collation || got.AuthPlugin != g.AuthPlugin || !bytes.Equal(got.Salt, g.Salt) {
				t.Errorf("greeting %+v, want the upstream's %+v", *got, *g)
			}
		}
	}
	// A short scramble is padded to the 20 bytes clients expect.
	short := &wire.Greeting{Version: "5.5.5-10.11.6-MariaDB", Salt: []byte("12345678"), Collation: 45, AuthPlugin: AuthNativePassword}
	got, err := wire.ParseGreeting(appendGreeting(nil, short, clientCaps(mariaDBCaps, false), 1)[wire.HeaderLen:])
	if err != nil || len(got.Salt) != 8 || got.AuthPlugin != AuthNativePassword {
		t.Fatalf("short scramble: %+v, %v", got, err)
	}
}

func TestHostAddr(t *testing.T) {
	tests := []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 51234}, "127.0.0.1"},
		{&net.TCPAddr{IP: net.ParseIP("::1"), Port: 3306}, "::1"},
		{&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 3306, Zone: "eth0"}, "fe80::1%eth0"},
		{&net.UnixAddr{Name: "/run/mysqld.sock", Net: "unix"}, "/run/mysqld.sock"},
		{stringAddr("db.example.com:3306"), "db.example.com"},
		{stringAddr("pipe"), "pipe"},
		{stringAddr(""), ""},
	}
	for _, tt := range tests {
		if got := (hostAddr{tt.addr}).String(); got != tt.want {
			t.Errorf("hostAddr(%q) = %q, want %q", tt.addr.String(), got, tt.want)
		}
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	gc := &loginSocket{Conn: fixedAddrConn{Conn: a, remote: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 40000}}}
	if got := gc.RemoteAddr().String(); got != "10.1.2.3" {
		t.Errorf("loginSocket.RemoteAddr() = %q", got)
	}
	if got := gc.RemoteAddr().Network(); got != "tcp" {
		t.Errorf("loginSocket.RemoteAddr().Network() = %q", got)
	}
}

type stringAddr string

func (a stringAddr) Network() string { return "test" }
func (a stringAddr) String() string  { return string(a) }

type fixedAddrConn struct {
	net.Conn
	remote net.Addr
}

func (c fixedAddrConn) RemoteAddr() net.Addr { return c.remote }
