package proxy

import (
	"bufio"
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// handshakeResponse builds a HandshakeResponse41 payload.
func handshakeResponse(caps uint32, user string, auth []byte, db, plugin string, attrs []byte) []byte {
	p := handshakeHead(caps, 45)
	p = append(p, user...)
	p = append(p, 0)
	if caps&wire.CapPluginAuthLenenc != 0 {
		p = wire.AppendLenEnc(p, uint64(len(auth)))
	} else {
		p = append(p, byte(len(auth)))
	}
	p = append(p, auth...)
	if caps&wire.CapConnectWithDB != 0 {
		p = append(p, db...)
		p = append(p, 0)
	}
	if caps&wire.CapPluginAuth != 0 {
		p = append(p, plugin...)
		p = append(p, 0)
	}
	return append(p, attrs...)
}

const testClientCaps = wire.CapProtocol41 | wire.CapSecureConnection | wire.CapPluginAuth | wire.CapPluginAuthLenenc | wire.CapConnectWithDB | wire.CapConnectAttrs

func validHandshakeResponse() []byte {
	attrs := wire.AppendLenEnc(nil, 0)
	kv := []byte{}
	for _, s := range []string{"_client_name", "libmariadb", "_pid", "42"} {
		kv = wire.AppendLenEnc(kv, uint64(len(s)))
		kv = append(kv, s...)
	}
	attrs = wire.AppendLenEnc(attrs[:0], uint64(len(kv)))
	attrs = append(attrs, kv...)
	return handshakeResponse(testClientCaps, "root", bytes.Repeat([]byte{7}, 20), "app", AuthNativePassword, attrs)
}

// loginOnce connects to the proxy at addr, sends payload as the client's
// handshake response and returns the first packet it answers with.
func loginOnce(t testing.TB, addr string, payload []byte) (reply []byte, seq uint8) {
	cli, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	_ = cli.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(cli)
	if _, _, err := wire.ReadPacket(r, nil, 1<<16); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	pkt := append([]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), 1}, payload...)
	if _, err := cli.Write(pkt); err != nil {
		t.Fatalf("writing the handshake response: %v", err)
	}
	reply, seq, _ = wire.ReadPacket(r, nil, 1<<16)
	return reply, seq
}

func TestCheckHandshakeResponse(t *testing.T) {
	valid := validHandshakeResponse()
	huge := handshakeResponse(testClientCaps, strings.Repeat("u", 100<<10), nil, "", AuthNativePassword, nil)
	fixed := len(handshakeHead(0, 0)) + 100<<10 + 1
	huge = append(huge[:fixed], 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F)
	cases := []struct {
		name string
		p    []byte
		want string // "" when well formed
	}{
		{"valid", valid, ""},
		{"ssl request", handshakeHead(testClientCaps|wire.CapSSL, 45), ""},
		{"short", valid[:20], "fewer than"},
		{"user not terminated", append(handshakeHead(testClientCaps, 45), "root"...), "user name"},
		{"100 KB user, 0xFE auth length", huge, "auth data"},
		{"auth length past the end", handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection, "u", nil, "", "", nil)[:wire.SSLRequestLen+2], "auth data"},
		{"lenenc auth NULL", append(append(handshakeHead(testClientCaps, 45), 'u', 0), 0xFB), "NULL"},
		{"truncated attribute length", append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 0xFC), "attributes"},
		{"attribute string past the end", append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 3, 9, 'a', 'b'), "attribute"},
		{"trailing truncated length after the attributes", append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 1, 0, 0xFD, 1), "attribute"},
		{"plugin not terminated", handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection|wire.CapPluginAuth, "u", nil, "", "x", nil)[:wire.SSLRequestLen+4], "plugin"},
	}
	h := newHarness(t, nil)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := wire.CheckHandshakeResponse(c.p)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused a well-formed response: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error mentioning %q", err, c.want)
			}
			// Through the proxy: "Bad handshake" as packet 2, no panic.
			reply, seq := loginOnce(t, h.srv.Addr().String(), c.p)
			if e := wire.ParseErr(reply); e.Code != wire.ErHandshake || e.State != "08S01" || seq != 2 {
				t.Fatalf("reply seq %d %q, want ERR 1043 (08S01) as packet 2", seq, reply)
			}
		})
	}
}

// FuzzHandshakeResponse drives the pre-login path (the proxy's parser, then
// its authentication: the proxy's own for configured accounts, relayed to
// the fake upstream for others) with arbitrary handshake responses: it
// never panics, a response the check refuses gets "Bad handshake" as
// packet 2, and any other gets an ERR, an OK or an auth switch.
func FuzzHandshakeResponse(f *testing.F) {
	f.Add(validHandshakeResponse())
	f.Add(handshakeHead(testClientCaps|wire.CapSSL, 45))
	huge := handshakeResponse(testClientCaps, strings.Repeat("u", 1000), nil, "", AuthNativePassword, nil)
	f.Add(append(huge[:len(handshakeHead(0, 0))+1001], 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F))
	f.Add(append(handshakeResponse(testClientCaps, "u", nil, "d", AuthNativePassword, nil), 0xFC))
	f.Add(handshakeResponse(wire.CapProtocol41|wire.CapSecureConnection, "root", bytes.Repeat([]byte{1}, 20), "", "", nil))
	f.Add(handshakeResponse(testClientCaps, "app", bytes.Repeat([]byte{1}, 20), "", AuthCachingSha2Password, nil))
	f.Add(handshakeResponse(testClientCaps, "app+box", nil, "_sqlfork_meta", AuthNativePassword, nil))
	h := newHarness(f, func(c *Config) {
		c.Users = []User{{Name: "sha2", Password: "s", AuthPlugin: AuthCachingSha2Password}}
	})
	addr := h.srv.Addr().String()
	f.Fuzz(func(t *testing.T, p []byte) {
		defer h.up.forget()
		reply, seq := loginOnce(t, addr, p)
		if wire.CheckHandshakeResponse(p) != nil {
			if e := wire.ParseErr(reply); e.Code != wire.ErHandshake || seq != 2 {
				t.Fatalf("refused response answered with seq %d %q, want ERR 1043 as packet 2", seq, reply)
			}
		} else if len(p) > wire.SSLRequestLen && (len(reply) == 0 || reply[0] != wire.ErrHeader && reply[0] != wire.OKHeader && reply[0] != wire.EOFHeader) {
			t.Fatalf("response answered with %q", reply)
		}
		if n := metricValue(t, h.m.ConnectionPanics); n != 0 {
			t.Fatalf("%v connection panics", n)
		}
	})
}
