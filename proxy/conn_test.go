package proxy

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

const allClientCaps = uint32(wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapConnectAttrs | wire.CapPluginAuthLenenc)

// changeUserSpec builds a COM_CHANGE_USER payload.
type changeUserSpec struct {
	user      string
	auth      []byte
	secure    bool // length-prefixed auth (CLIENT_SECURE_CONNECTION)
	db        *string
	collation []byte // 0 or 2 bytes (or 1 for a malformed packet)
	plugin    *string
	attrs     []byte // raw, as sent
}

func strp(s string) *string { return &s }

func (s changeUserSpec) bytes() []byte {
	b := []byte{wire.ComChangeUser}
	b = append(b, s.user...)
	b = append(b, 0)
	if s.secure {
		b = append(b, byte(len(s.auth)))
		b = append(b, s.auth...)
	} else {
		b = append(b, s.auth...)
		b = append(b, 0)
	}
	if s.db == nil {
		return b
	}
	b = append(b, *s.db...)
	b = append(b, 0)
	b = append(b, s.collation...)
	if s.plugin != nil {
		b = append(b, *s.plugin...)
		b = append(b, 0)
	}
	return append(b, s.attrs...)
}

func TestParseChangeUser(t *testing.T) {
	scramble := mysql.CalcNativePassword([]byte("01234567890123456789"), []byte("secret"))
	attrs := appendAttrs(nil, map[string]string{"_client_name": "libmariadb", "_os": "Linux", "program_name": "mysql"})
	tests := []struct {
		name string
		spec changeUserSpec
		caps uint32
		want changeUserReq
	}{
		{"full", changeUserSpec{user: "app", auth: scramble, secure: true, db: strp("shop"), collation: []byte{45, 0},
			plugin: strp(AuthNativePassword), attrs: attrs}, allClientCaps,
			changeUserReq{user: "app", auth: scramble, db: "shop", hasCollation: true, collation: 45, plugin: AuthNativePassword,
				attrs: map[string]string{"_client_name": "libmariadb", "_os": "Linux", "program_name": "mysql"}}},
		{"user and auth only", changeUserSpec{user: "app", auth: scramble, secure: true}, allClientCaps,
			changeUserReq{user: "app", auth: scramble}},
		{"empty user, empty auth", changeUserSpec{secure: true}, allClientCaps, changeUserReq{auth: []byte{}}},
		{"empty db", changeUserSpec{user: "u", secure: true, db: strp("")}, allClientCaps, changeUserReq{user: "u", auth: []byte{}}},
		{"db without collation", changeUserSpec{user: "u", auth: []byte{1, 2}, secure: true, db: strp("d")}, allClientCaps,
			changeUserReq{user: "u", auth: []byte{1, 2}, db: "d"}},
		// One stray byte where the 2-byte collation belongs is ignored.
		{"db with one byte", changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{0}}, allClientCaps,
			changeUserReq{user: "u", auth: []byte{}, db: "d", plugin: ""}},
		{"collation, no plugin", changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{224, 0}}, allClientCaps,
			changeUserReq{user: "u", auth: []byte{}, db: "d", hasCollation: true, collation: 224}},
		{"plugin, no attrs", changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{8, 0}, plugin: strp(AuthCachingSha2Password)},
			allClientCaps, changeUserReq{user: "u", auth: []byte{}, db: "d", hasCollation: true, collation: 8, plugin: AuthCachingSha2Password}},
		{"empty attrs", changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{8, 0}, plugin: strp(""), attrs: []byte{0}},
			allClientCaps, changeUserReq{user: "u", auth: []byte{}, db: "d", hasCollation: true, collation: 8, attrs: map[string]string{}}},
		// Without CLIENT_CONNECT_ATTRS trailing bytes are not attributes.
		{"attrs without the capability", changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{8, 0}, plugin: strp("p"), attrs: attrs},
			allClientCaps &^ wire.CapConnectAttrs, changeUserReq{user: "u", auth: []byte{}, db: "d", hasCollation: true, collation: 8, plugin: "p"}},
		// Without CLIENT_PLUGIN_AUTH there is no plugin name; the attributes
		// follow the collation.
		{"no plugin auth", changeUserSpec{user: "u", secure: true, db: strp("d"), collation: []byte{8, 0}, attrs: attrs},
			allClientCaps &^ wire.CapPluginAuth, changeUserReq{user: "u", auth: []byte{}, db: "d", hasCollation: true, collation: 8,
				attrs: map[string]string{"_client_name": "libmariadb", "_os": "Linux", "program_name": "mysql"}}},
		// Pre-4.1 style: auth is NUL-terminated.
		{"not secure connection", changeUserSpec{user: "old", auth: []byte("scrambled"), db: strp("d")}, 0,
			changeUserReq{user: "old", auth: []byte("scrambled"), db: "d"}},
		{"not secure, no db", changeUserSpec{user: "old", auth: []byte("x")}, 0, changeUserReq{user: "old", auth: []byte("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChangeUser(tt.spec.bytes(), tt.caps)
			if err != nil {
				t.Fatal(err)
			}
			checkChangeUser(t, got, &tt.want)
		})
	}
}

func checkChangeUser(t *testing.T, got, want *changeUserReq) {
	t.Helper()
	if got.user != want.user || !bytes.Equal(got.auth, want.auth) || got.db != want.db || got.hasCollation != want.hasCollation ||
		got.collation != want.collation || got.plugin != want.plugin || !maps.Equal(got.attrs, want.attrs) ||
		(got.attrs == nil) != (want.attrs == nil) {
		t.Errorf("parseChangeUser =\n  %+v\nwant\n  %+v", *got, *want)
	}
}

func TestParseChangeUserMalformed(t *testing.T) {
	full := changeUserSpec{user: "app", auth: testkit.Payload(20, 1), secure: true, db: strp("shop"), collation: []byte{45, 0},
		plugin: strp(AuthNativePassword), attrs: appendAttrs(nil, map[string]string{"a": "b"})}.bytes()
	tests := []struct {
		name string
		in   []byte
		caps uint32
	}{
		{"nil", nil, allClientCaps},
		{"empty", []byte{}, allClientCaps},
		{"wrong command", append([]byte{wire.ComQuery}, full[1:]...), allClientCaps},
		{"command only", []byte{wire.ComChangeUser}, allClientCaps},
		{"user without NUL", []byte("\x11app"), allClientCaps},
		{"no auth length", []byte("\x11app\x00"), allClientCaps},
		{"auth longer than packet", []byte("\x11app\x00\x14abc"), allClientCaps},
		{"auth without NUL (not secure)", []byte("\x11app\x00abc"), 0},
		{"db without NUL", []byte("\x11app\x00\x00shop"), allClientCaps},
		{"plugin without NUL", []byte("\x11app\x00\x00shop\x00\x2d\x00mysql_native"), allClientCaps},
		{"attrs total too long", []byte("\x11app\x00\x00shop\x00\x2d\x00p\x00\x10\x01a\x01b"), allClientCaps},
		{"attrs NULL marker", []byte("\x11app\x00\x00shop\x00\x2d\x00p\x00\xfb"), allClientCaps},
		{"attr key too long", []byte("\x11app\x00\x00shop\x00\x2d\x00p\x00\x04\x05a\x01b"), allClientCaps},
		{"attr without value", []byte("\x11app\x00\x00shop\x00\x2d\x00p\x00\x02\x01a"), allClientCaps},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseChangeUser(tt.in, tt.caps)
			if err == nil {
				t.Fatalf("no error; got %+v", *got)
			}
			if got != nil || !errors.Is(err, wire.ErrMalformed) {
				t.Errorf("got %v, %v; want nil, wire.ErrMalformed", got, err)
			}
		})
	}
	// No truncation or capability combination panics.
	for _, caps := range []uint32{0, wire.CapSecureConnection, wire.CapPluginAuth, wire.CapConnectAttrs, allClientCaps, 0xFFFFFFFF} {
		for i := 0; i <= len(full); i++ {
			_, _ = parseChangeUser(full[:i], caps)
		}
	}
}

func TestParseAttrs(t *testing.T) {
	long := strings.Repeat("v", 300)
	tests := []struct {
		name string
		in   []byte
		want map[string]string
	}{
		{"empty", []byte{0}, map[string]string{}},
		{"one", []byte{4, 1, 'k', 1, 'v'}, map[string]string{"k": "v"}},
		{"empty key and value", []byte{2, 0, 0}, map[string]string{"": ""}},
		{"trailing bytes ignored", []byte{4, 1, 'k', 1, 'v', 0xFF, 0xFF}, map[string]string{"k": "v"}},
		{"duplicate key, last wins", []byte{8, 1, 'k', 1, '1', 1, 'k', 1, '2'}, map[string]string{"k": "2"}},
		{"lenenc lengths", appendAttrs(nil, map[string]string{"long": long, "_pid": "1234"}), map[string]string{"long": long, "_pid": "1234"}},
		{"typical", appendAttrs(nil, map[string]string{"_client_name": "libmariadb", "_client_version": "3.3.8", "_os": "debian-linux-gnu",
			"_pid": "4242", "_platform": "x86_64", "_server_host": "db", "program_name": "mysql"}),
			map[string]string{"_client_name": "libmariadb", "_client_version": "3.3.8", "_os": "debian-linux-gnu",
				"_pid": "4242", "_platform": "x86_64", "_server_host": "db", "program_name": "mysql"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAttrs(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, tt.want) || got == nil {
				t.Errorf("parseAttrs(% x) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseAttrsMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"total NULL", []byte{0xFB}},
		{"total 0xFF", []byte{0xFF}},
		{"total truncated lenenc", []byte{0xFC, 0x01}},
		{"total past end", []byte{5, 1, 'k', 1, 'v'}},
		{"total huge", []byte{0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0}},
		{"key past total", []byte{2, 3, 'k', 'e', 'y'}},
		{"key NULL marker", []byte{3, 0xFB, 1, 'v'}},
		{"value missing", []byte{2, 1, 'k'}},
		{"value past total", []byte{4, 1, 'k', 2, 'v', 'v'}},
		{"value lenenc truncated", []byte{4, 1, 'k', 0xFC, 1}},
		{"value huge", []byte{11, 1, 'k', 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseAttrs(tt.in)
			if err == nil || !errors.Is(err, wire.ErrMalformed) || got != nil {
				t.Errorf("parseAttrs(% x) = %v, %v; want nil, wire.ErrMalformed", tt.in, got, err)
			}
		})
	}
}

func TestAppendAttrs(t *testing.T) {
	got := appendAttrs([]byte{0xAA}, map[string]string{"b": "2", "a": "1"})
	want := []byte{0xAA, 8, 1, 'a', 1, '1', 1, 'b', 1, '2'}
	if !bytes.Equal(got, want) {
		t.Errorf("appendAttrs = % x, want % x (sorted keys)", got, want)
	}
	if got := appendAttrs(nil, nil); !bytes.Equal(got, []byte{0}) {
		t.Errorf("appendAttrs(nil) = % x, want 00", got)
	}
	// Deterministic across map iteration orders.
	m := map[string]string{}
	for i := 0; i < 50; i++ {
		m[string(rune('a'+i%26))+strings.Repeat("x", i)] = strings.Repeat("y", i*7)
	}
	first := appendAttrs(nil, m)
	for i := 0; i < 20; i++ {
		if !bytes.Equal(appendAttrs(nil, m), first) {
			t.Fatal("appendAttrs output depends on map order")
		}
	}
	back, err := parseAttrs(first)
	if err != nil || !maps.Equal(back, m) {
		t.Errorf("round trip: %v (%d of %d attrs)", err, len(back), len(m))
	}
	if first[0] != 0xFC {
		t.Errorf("total of a %d-byte attribute block not 0xFC-encoded: %#x", len(first), first[0])
	}
}

func TestHandshakeHead(t *testing.T) {
	caps := uint32(0x81A2B3C4)
	b := handshakeHead(caps, 45)
	if len(b) != 32 {
		t.Fatalf("len %d, want 32", len(b))
	}
	want := make([]byte, 32)
	want[0], want[1], want[2], want[3] = 0xC4, 0xB3, 0xA2, 0x81
	want[4], want[5], want[6], want[7] = 0, 0, 0, 1 // max packet 1<<24
	want[8] = 45
	if !bytes.Equal(b, want) {
		t.Errorf("handshakeHead = % x, want % x", b, want)
	}
	// Appending must not disturb the head.
	b = append(b, "user\x00"...)
	if !bytes.Equal(b[:32], want) {
		t.Error("head changed by append")
	}
}

func TestCheckNative(t *testing.T) {
	salt := []byte("abcdefghij0123456789")
	other := []byte("ABCDEFGHIJ0123456789")
	good := mysql.CalcNativePassword(salt, []byte("secret"))
	tests := []struct {
		name     string
		reply    []byte
		password string
		want     bool
	}{
		{"right password", good, "secret", true},
		{"wrong password", mysql.CalcNativePassword(salt, []byte("Secret")), "secret", false},
		{"other salt", mysql.CalcNativePassword(other, []byte("secret")), "secret", false},
		{"empty reply", nil, "secret", false},
		{"empty non-nil reply", []byte{}, "secret", false},
		{"truncated reply", good[:19], "secret", false},
		{"extended reply", append(append([]byte(nil), good...), 0), "secret", false},
		{"password as reply", []byte("secret"), "secret", false},
		{"empty password, empty reply", nil, "", true},
		{"empty password, empty non-nil reply", []byte{}, "", true},
		{"empty password, CalcNativePassword", mysql.CalcNativePassword(salt, nil), "", true},
		{"empty password, a reply", good, "", false},
		{"empty password, one zero byte", []byte{0}, "", false},
		{"long password", mysql.CalcNativePassword(salt, []byte(strings.Repeat("p", 1000))), strings.Repeat("p", 1000), true},
		{"unicode password", mysql.CalcNativePassword(salt, []byte("pässwörd🔑")), "pässwörd🔑", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := checkNative(tt.reply, salt, tt.password); got != tt.want {
				t.Errorf("checkNative = %v, want %v", got, tt.want)
			}
		})
	}
	if len(good) != 20 {
		t.Errorf("native scramble is %d bytes", len(good))
	}
}

// TestConnStateContext: work done for a connection (forks) ends when the
// connection is forced closed, not when the server starts shutting down.
func TestConnStateContext(t *testing.T) {
	parent, stop := context.WithCancel(context.Background())
	a, b := net.Pipe()
	defer b.Close()
	st := newConnState(parent, a)
	stop() // shutdown starts: running statements may finish
	if err := st.ctx.Err(); err != nil {
		t.Fatalf("the connection's context ended with the server's: %v", err)
	}
	st.forceClose() // the grace is over
	if st.ctx.Err() == nil {
		t.Fatal("forceClose left the connection's context running")
	}
}
