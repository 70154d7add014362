package wire

import (
	"bytes"
	"errors"
	"testing"
)

// TestGreetingRoundTrip: a greeting the proxy writes reads back as the
// upstream's, with the caps, extended caps and connection id it was
// written with; an ERR in its place is a RefusedGreeting keeping the
// packet; short or foreign payloads are ErrMalformed.
func TestGreetingRoundTrip(t *testing.T) {
	up := &Greeting{Version: "5.5.5-10.11.19-MariaDB", ConnID: 9, Salt: []byte("abcdefghijklmnopqrst"), Caps: CapProtocol41 | CapSecureConnection | CapPluginAuth,
		Collation: 45, Status: StatusAutocommit, AuthPlugin: "client_ed25519"}
	caps := CapProtocol41 | CapSecureConnection | CapPluginAuth | CapConnectWithDB
	for _, ext := range []uint32{0, ExtCapProgress | ExtCapBulkOperations} {
		pkt := AppendGreeting(nil, up, caps, ext, 77)
		g, err := ParseGreeting(pkt[HeaderLen:])
		if err != nil {
			t.Fatal(err)
		}
		if g.Version != up.Version || g.ConnID != 77 || !bytes.Equal(g.Salt, up.Salt) || g.Caps != caps || g.ExtCaps != ext ||
			g.Collation != 45 || g.Status != StatusAutocommit || g.AuthPlugin != "client_ed25519" {
			t.Errorf("ext %x: read back %+v", ext, g)
		}
	}
	noPlugin := *up
	noPlugin.AuthPlugin = ""
	if g, err := ParseGreeting(AppendGreeting(nil, &noPlugin, caps&^CapPluginAuth, 0, 1)[HeaderLen:]); err != nil || g.AuthPlugin != "mysql_native_password" {
		t.Errorf("no plugin named: %+v, %v", g, err)
	}
	errPkt := AppendErr(nil, Error(ErConCount, "Too many connections"))
	var rg *RefusedGreeting
	if _, err := ParseGreeting(errPkt); !errors.As(err, &rg) || rg.Code != ErConCount || !bytes.Equal(rg.Payload, errPkt) {
		t.Errorf("ERR greeting: %v", err)
	}
	for _, p := range [][]byte{nil, {9}, {10, 'x'}, {10, 'v', 0, 1, 2}} {
		if _, err := ParseGreeting(p); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: %v, want ErrMalformed", p, err)
		}
	}
}

// TestHandshakeResponseFields: a HandshakeResponse41 reads back its user,
// auth data (length-encoded or one byte), database, plugin and attributes;
// an SSLRequest is one; a cut one is refused.
func TestHandshakeResponseFields(t *testing.T) {
	head := func(caps uint32) []byte {
		p := []byte{byte(caps), byte(caps >> 8), byte(caps >> 16), byte(caps >> 24), 0, 0, 0, 1, 33}
		return append(p, make([]byte, 23)...)
	}
	caps := CapProtocol41 | CapSecureConnection | CapPluginAuth | CapPluginAuthLenenc | CapConnectWithDB | CapConnectAttrs
	p := append(head(caps), "bob\x00"...)
	p = AppendLenEnc(p, 3)
	p = append(p, "pwd"...)
	p = append(p, "app\x00mysql_native_password\x00"...)
	attrs := AppendLenEnc(nil, 1)
	attrs = append(attrs, 'k')
	attrs = AppendLenEnc(attrs, 1)
	attrs = append(attrs, 'v')
	p = append(AppendLenEnc(p, uint64(len(attrs))), attrs...)
	r, err := ParseHandshakeResponse(p)
	if err != nil || r.User != "bob" || string(r.Auth) != "pwd" || r.DB != "app" || r.Plugin != "mysql_native_password" ||
		r.Attrs["k"] != "v" || r.Collation != 33 || r.SSLRequest {
		t.Fatalf("%+v, %v", r, err)
	}
	if err := CheckHandshakeResponse(p); err != nil {
		t.Errorf("Check: %v", err)
	}
	oneByte := caps &^ (CapPluginAuthLenenc | CapConnectAttrs)
	q := append(head(oneByte), "al\x00"...)
	q = append(q, 2, 'x', 'y')
	q = append(q, "db\x00plug\x00"...)
	if r, err := ParseHandshakeResponse(q); err != nil || string(r.Auth) != "xy" || r.Plugin != "plug" {
		t.Errorf("one-byte auth length: %+v, %v", r, err)
	}
	if r, err := ParseHandshakeResponse(head(caps | CapSSL)[:SSLRequestLen]); err != nil || !r.SSLRequest {
		t.Errorf("SSLRequest: %+v, %v", r, err)
	}
	for _, cut := range [][]byte{p[:5], p[:len(p)-3], q[:len(q)-4]} {
		if err := CheckHandshakeResponse(cut); err == nil {
			t.Errorf("%d bytes of a response accepted", len(cut))
		}
	}
}
