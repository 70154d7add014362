package proxy

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Logins as accounts the proxy does not know are relayed to the upstream
// (relayauth.go); the fake upstream authenticates them as MariaDB does.

// rawLogin logs in on a new connection to the proxy as a client with
// mysql_native_password and returns the client (nil and the server's
// error when refused) and the scramble it was greeted with.
func rawLogin(t *testing.T, h *harness, user, password, db string) (*fakeClient, []byte, error) {
	t.Helper()
	nc, err := net.Dial("tcp", h.srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	p, _, err := wire.ReadPacket(r, nil, 1<<16)
	if err != nil {
		t.Fatalf("greeting: %v", err)
	}
	g, err := wire.ParseGreeting(p)
	if err != nil {
		t.Fatal(err)
	}
	var auth []byte
	if password != "" {
		auth = nativeScramble(g.Salt, password)
	}
	resp := handshakeResponse(testClientCaps|wire.CapMultiStatements|wire.CapMultiResults, user, auth, db, AuthNativePassword, wire.AppendLenEnc(nil, 0))
	if _, err := nc.Write(testkit.Packet(1, resp)); err != nil {
		t.Fatal(err)
	}
	reply, seq, err := wire.ReadPacket(r, nil, 1<<16)
	_ = nc.SetDeadline(time.Time{})
	switch {
	case err != nil:
		t.Fatalf("login answer: %v", err)
	case reply[0] == wire.ErrHeader:
		if seq != 2 {
			t.Errorf("ERR as packet %d, want 2", seq)
		}
		return nil, g.Salt, wire.ParseErr(reply)
	case reply[0] != wire.OKHeader || seq != 2:
		t.Fatalf("login answered % x as packet %d", reply, seq)
	}
	return &fakeClient{t: t, conn: nc, r: r}, g.Salt, nil
}

// wantDenied checks err is the server's 1045 for user.
func wantDenied(t *testing.T, err error, user string, usingPassword bool) {
	t.Helper()
	var me *mysql.MyError
	if !errors.As(err, &me) || me.Code != wire.ErAccessDenied || me.State != "28000" || me.Message != upstreamDenied(user, usingPassword) {
		t.Fatalf("got %v, want 1045 %q", err, upstreamDenied(user, usingPassword))
	}
}

// TestRelayedLogin: an account the upstream has and the proxy's
// configuration does not logs in through the proxy, in every mode; it is
// its own proxy user; a wrong password, an unknown name and a password
// for a password-less account get the upstream's 1045 word for word.
func TestRelayedLogin(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.addAccount("bob", "b-pw", "")
	h.up.addAccount("nopw", "", "")
	cl, _, err := rawLogin(t, h, "bob", "b-pw", "shop")
	if err != nil {
		t.Fatalf("bob: %v", err)
	}
	if p, _ := cl.query("SELECT 1"); p[0][0] != wire.OKHeader {
		t.Fatalf("query through bob's session: % x", p[0])
	}
	if got := h.up.loginsSeen(); !slices.Contains(got, "bob/shop") {
		t.Fatalf("upstream logins %q, want bob/shop", got)
	}
	if len(h.srv.Threads("bob")) != 1 || len(h.srv.Threads("app")) != 0 {
		t.Fatalf("threads: bob %v, app %v", h.srv.Threads("bob"), h.srv.Threads("app"))
	}
	if _, _, err := rawLogin(t, h, "nopw", "", ""); err != nil {
		t.Fatalf("nopw without a password: %v", err)
	}
	_, _, err = rawLogin(t, h, "bob", "wrong", "")
	wantDenied(t, err, "bob", true)
	_, _, err = rawLogin(t, h, "nobody", "x", "")
	wantDenied(t, err, "nobody", true)
	_, _, err = rawLogin(t, h, "nobody", "", "")
	wantDenied(t, err, "nobody", false)
	_, _, err = rawLogin(t, h, "nopw", "x", "")
	wantDenied(t, err, "nopw", true)
	if got := metricValue(t, h.m.AuthFailures); got != 4 {
		t.Errorf("auth failures %v, want 4", got)
	}
	if got := metricValue(t, h.m.ConnectionPanics); got != 0 {
		t.Errorf("connection panics %v", got)
	}
}

// TestEmptyUpstreamPassword: with the proxy's account password-less, a
// client that logs in as it with a password gets 1045 (it used to make
// go-mysql's password check panic: 2013), and one without logs in.
func TestEmptyUpstreamPassword(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.UpstreamPassword, c.Mode = "", "passthrough" })
	_, _, err := rawLogin(t, h, "app", "wrong", "")
	var me *mysql.MyError
	if !errors.As(err, &me) || me.Code != wire.ErAccessDenied || me.Message != "Access denied for user 'app'@'127.0.0.1' (using password: YES)" {
		t.Fatalf("wrong password for the password-less account: %v", err)
	}
	if _, _, err := rawLogin(t, h, "app", "", ""); err != nil {
		t.Fatalf("no password: %v", err)
	}
	if got := metricValue(t, h.m.ConnectionPanics); got != 0 {
		t.Errorf("connection panics %v", got)
	}
	// A configured user with an empty password, with caching_sha2 too.
	h2 := newHarness(t, func(c *Config) {
		c.Mode = "passthrough"
		c.Users = []User{{Name: "sha2", AuthPlugin: AuthCachingSha2Password}}
	})
	if _, err := client.Connect(h2.srv.Addr().String(), "sha2", "", ""); err != nil {
		t.Fatalf("caching_sha2 user without a password: %v", err)
	}
	if _, err := client.Connect(h2.srv.Addr().String(), "sha2", "x", ""); !errors.As(err, &me) || me.Code != wire.ErAccessDenied {
		t.Fatalf("caching_sha2 user without a password, given one: %v", err)
	}
}

// TestRelayedAuthSwitch: accounts whose plugin is not the greeting's are
// switched by the upstream, through the proxy: ed25519, and
// caching_sha2_password with its full authentication (RSA key exchange
// relayed as it is; with client TLS the proxy takes the password in clear
// and encrypts it with the upstream's key).
func TestRelayedAuthSwitch(t *testing.T) {
	h := tlsHarness(t)
	h.up.addAccount("ed", "e-pw", authEd25519)
	h.up.addAccount("s2", "s-pw", AuthCachingSha2Password)
	for _, tc := range []struct {
		user, password string
		tls, ok        bool
	}{
		{"ed", "e-pw", false, true},
		{"ed", "wrong", false, false},
		{"s2", "s-pw", false, true},
		{"s2", "s-pw", true, true},
		{"s2", "wrong", true, false},
		{"s2", "wrong", false, false},
	} {
		cc, err := client.Connect(h.srv.Addr().String(), tc.user, tc.password, "", func(c *client.Conn) error {
			if tc.tls {
				c.SetTLSConfig(&tls.Config{InsecureSkipVerify: true}) //nolint:gosec // test
			}
			return nil
		})
		if !tc.ok {
			wantDenied(t, err, tc.user, true)
			continue
		}
		if err != nil {
			t.Fatalf("%s (tls %v): %v", tc.user, tc.tls, err)
		}
		if err := cc.Ping(); err != nil {
			t.Fatalf("%s: ping: %v", tc.user, err)
		}
		cc.Close()
	}
}

// changeUser sends COM_CHANGE_USER to user with a native scramble of
// password for salt and returns the answer.
func (f *fakeClient) changeUser(user, password string, salt []byte, db string) []byte {
	f.t.Helper()
	var auth []byte
	if password != "" {
		auth = nativeScramble(salt, password)
	}
	plugin := AuthNativePassword
	f.send(changeUserSpec{user: user, auth: auth, secure: true, db: &db, collation: []byte{45, 0}, plugin: &plugin}.bytes())
	p, _ := f.packet()
	return p
}

// TestRelayedChangeUser: COM_CHANGE_USER to an account the proxy does not
// know is relayed to the upstream's COM_CHANGE_USER; the connection is that
// account's (its proxy user) from then on; to a configured account it works
// as before; a refusal is the upstream's 1045 and ends the connection.
func TestRelayedChangeUser(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Mode = "passthrough"
		c.Users = []User{{Name: "carol", Password: "c-pw"}}
	})
	h.up.addAccount("bob", "b-pw", "")
	cl, salt, err := rawLogin(t, h, "app", "secret", "")
	if err != nil {
		t.Fatal(err)
	}
	if p := cl.changeUser("bob", "b-pw", salt, "shop"); p[0] != wire.OKHeader {
		t.Fatalf("change to bob: % x", p)
	}
	if len(h.srv.Threads("bob")) != 1 || len(h.srv.Threads("app")) != 0 {
		t.Fatalf("threads: bob %v, app %v", h.srv.Threads("bob"), h.srv.Threads("app"))
	}
	if p, _ := cl.query("SELECT 1"); p[0][0] != wire.OKHeader {
		t.Fatalf("query as bob: % x", p[0])
	}
	// To a configured user: the proxy's own switch and check.
	cl.send(changeUserSpec{user: "carol", secure: true, db: strp(""), collation: []byte{45, 0}, plugin: strp(AuthNativePassword)}.bytes())
	sw, _ := cl.packet()
	if sw[0] != wire.EOFHeader || !strings.HasPrefix(string(sw[1:]), AuthNativePassword+"\x00") {
		t.Fatalf("change to carol: % x, want the proxy's auth switch", sw)
	}
	swSalt := sw[1+len(AuthNativePassword)+1 : len(sw)-1]
	if _, err := cl.conn.Write(testkit.Packet(2, nativeScramble(swSalt, "c-pw"))); err != nil {
		t.Fatal(err)
	}
	if p, _ := cl.packet(); p[0] != wire.OKHeader {
		t.Fatalf("change to carol: % x", p)
	}
	if len(h.srv.Threads("carol")) != 1 || len(h.srv.Threads("bob")) != 0 {
		t.Fatalf("threads: carol %v, bob %v", h.srv.Threads("carol"), h.srv.Threads("bob"))
	}
	if got := h.up.loginsSeen(); !slices.Contains(got, "bob/shop") || got[len(got)-1] != "app" {
		t.Fatalf("upstream logins %q: want bob/shop, then app for carol", got)
	}
	// A wrong password: the upstream's refusal, and the connection ends.
	p := cl.changeUser("bob", "wrong", salt, "")
	wantDenied(t, wire.ParseErr(p), "bob", true)
	if !cl.closed() {
		t.Fatal("connection open after a refused COM_CHANGE_USER")
	}
}

// TestRelayedLoginTags: appuser+sandbox logs in upstream as appuser; in
// passthrough mode the tag is refused as for configured users.
func TestRelayedLoginTags(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.addAccount("bob", "b-pw", "")
	_, _, err := rawLogin(t, h, "bob+box", "b-pw", "")
	var me *mysql.MyError
	if !errors.As(err, &me) || me.Code != wire.ErAccessDenied || !strings.Contains(me.Message, "user bob is in passthrough mode and cannot use sandbox \"box\"") {
		t.Fatalf("bob+box in passthrough mode: %v", err)
	}
	if got := h.up.loginsSeen(); !slices.Contains(got, "bob") {
		t.Fatalf("upstream logins %q: want bob, the tag stripped", got)
	}
}

// TestRelayedLoginSandboxGrants: in a sandboxing mode an account the
// proxy does not know logs in only if its grants cover the proxy's
// databases (its session reads and writes the sandbox's forks itself):
// one lacking them gets 1044 naming what is missing, on login and on
// COM_CHANGE_USER; one having them gets its own sandbox, under its own
// name, the tag naming it.
func TestRelayedLoginSandboxGrants(t *testing.T) {
	h := newSandboxHarness(t, nil)
	h.up.addAccount("bob", "b-pw", "")
	h.up.addAccount("dave", "d-pw", "")
	grants := map[string][]string{
		"bob":  {"GRANT USAGE ON *.* TO `bob`@`%`", "GRANT SELECT ON `app`.* TO `bob`@`%`", "GRANT SELECT, INSERT ON `\\_sqlfork%`.* TO `bob`@`%`"},
		"dave": {"GRANT USAGE ON *.* TO `dave`@`%`", "GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO `dave`@`%`"},
		"app":  {"GRANT ALL PRIVILEGES ON *.* TO `app`@`%`"},
	}
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd != wire.ComQuery || string(arg) != "SHOW GRANTS" {
			return false
		}
		var rows [][]*string
		for _, g := range grants[c.user] {
			rows = append(rows, []*string{sp(g)})
		}
		c.resultSet([]string{"Grants for " + c.user + "@%"}, rows)
		return true
	}
	_, _, err := rawLogin(t, h.harness, "bob", "b-pw", "")
	var me *mysql.MyError
	if !errors.As(err, &me) || me.Code != wire.ErDBAccessDenied ||
		!strings.Contains(me.Message, "user 'bob' lacks UPDATE, DELETE, CREATE, DROP, ALTER, INDEX, CREATE VIEW, SHOW VIEW ON `\\_sqlfork%`.*") ||
		!strings.Contains(me.Message, "GRANT ALL PRIVILEGES ON `\\_sqlfork%`.*") {
		t.Fatalf("bob without the grants: %v", err)
	}
	cl, salt, err := rawLogin(t, h.harness, "dave+box", "d-pw", "")
	if err != nil {
		t.Fatalf("dave+box: %v", err)
	}
	if p, _ := cl.query("SELECT 1"); p[0][0] == wire.ErrHeader {
		t.Fatalf("query as dave: % x", p[0])
	}
	if len(h.srv.Threads("dave")) != 1 {
		t.Fatalf("dave's threads %v", h.srv.Threads("dave"))
	}
	list, err := h.srv.Sandboxes().Operator().List(t.Context())
	if err != nil || len(list) != 1 || list[0].Name != "box" || list[0].Owner != "dave" {
		t.Fatalf("sandboxes %+v, %v; want box, dave's", list, err)
	}
	if p := cl.changeUser("bob", "b-pw", salt, ""); wire.ParseErr(p).Code != wire.ErDBAccessDenied {
		t.Fatalf("change to bob without the grants: % x", p)
	}
	if !cl.closed() {
		t.Fatal("connection open after a refused COM_CHANGE_USER")
	}
}

// TestRelayedPassthroughKill: in passthrough mode a session logged in as
// an account the proxy does not configure is policed by the server: KILL
// of another session's greeting id goes upstream translated to its thread,
// any other id goes as it is, and the server answers (1095 without the
// privilege); a configured user still reaches only its own sessions. In
// the sandboxing modes relayed users are kept to their own too.
func TestRelayedPassthroughKill(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.addAccount("bob", "b-pw", "")
	victim := h.client("")
	bob, _, err := rawLogin(t, h, "bob", "b-pw", "")
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := victim.query("SELECT 1"); p[0][0] != wire.OKHeader {
		t.Fatal("victim's query")
	}
	h.up.script = func(c *fakeUpConn, cmd byte, arg []byte) bool {
		if cmd == wire.ComQuery && strings.HasPrefix(string(arg), "KILL") && c.user == "bob" {
			c.err(wire.ErKillDenied, "HY000", "You are not owner of thread 101")
			return true
		}
		return false
	}
	var gid uint32
	h.srv.connsMu.Lock()
	for c := range h.srv.conns {
		c.mu.Lock()
		if c.user == "app" {
			gid = c.greetingID
		}
		c.mu.Unlock()
	}
	h.srv.connsMu.Unlock()
	for _, q := range []string{fmt.Sprintf("KILL %d", gid), "KILL QUERY 4242"} {
		got, _ := bob.query(q)
		if e := wire.ParseErr(got[0]); e.Code != wire.ErKillDenied {
			t.Fatalf("%s by bob: %v, want the server's 1095", q, e)
		}
	}
	kills := h.up.queries("KILL")
	if len(kills) != 2 || !strings.HasPrefix(kills[0], "KILL CONNECTION 1") || kills[1] != "KILL QUERY 4242" {
		t.Fatalf("upstream got %q", kills)
	}
	if !h.srv.serverPolices("bob") || h.srv.serverPolices("app") {
		t.Fatal("serverPolices: bob is the server's to police, app the proxy's")
	}
	h2 := newHarness(t, func(c *Config) { c.Mode = "explicit" })
	if h2.srv.serverPolices("bob") {
		t.Fatal("a relayed user in a sandboxing mode is policed by the server")
	}
}

// TestRelayedOldAuthSwitch: MariaDB's one-byte switch request to
// mysql_old_password (an account with a pre-4.1 hash) is relayed, and the
// client's answer with it.
func TestRelayedOldAuthSwitch(t *testing.T) {
	h := newHarness(t, passthrough)
	h.up.addAccount("old", "o-pw", authOldPassword)
	nc, err := net.Dial("tcp", h.srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(nc)
	p, _, err := wire.ReadPacket(r, nil, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	g, err := wire.ParseGreeting(p)
	if err != nil {
		t.Fatal(err)
	}
	resp := handshakeResponse(testClientCaps, "old", nativeScramble(g.Salt, "o-pw"), "", AuthNativePassword, nil)
	if _, err := nc.Write(testkit.Packet(1, resp)); err != nil {
		t.Fatal(err)
	}
	if sw, seq, err := wire.ReadPacket(r, nil, 1<<16); err != nil || seq != 2 || len(sw) != 1 || sw[0] != wire.EOFHeader {
		t.Fatalf("switch % x seq %d, %v; want the one-byte request as packet 2", sw, seq, err)
	}
	if _, err := nc.Write(testkit.Packet(3, oldScrambleStub(g.Salt, "o-pw"))); err != nil {
		t.Fatal(err)
	}
	if ok, seq, err := wire.ReadPacket(r, nil, 1<<16); err != nil || seq != 4 || ok[0] != wire.OKHeader {
		t.Fatalf("answer % x seq %d, %v; want OK as packet 4", ok, seq, err)
	}
}

// TestServerPolicesConfiguredOwnAccount: a configured passthrough user
// mapped to an upstream account no other login maps to is the server's to
// police; users sharing an upstream account, the proxy's own account, and
// users of the sandboxing modes are the proxy's.
func TestServerPolicesConfiguredOwnAccount(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Mode = "passthrough"
		c.Users = []User{
			{Name: "su", Password: "pw", UpstreamUser: "su_up", UpstreamPassword: "pw"},
			{Name: "a", Password: "pw", UpstreamUser: "shared", UpstreamPassword: "pw"},
			{Name: "b", Password: "pw", UpstreamUser: "shared", UpstreamPassword: "pw"},
			{Name: "c", Password: "pw"}, // the proxy's own account
			{Name: "sb", Password: "pw", UpstreamUser: "sb_up", UpstreamPassword: "pw", Mode: "transparent"},
		}
	})
	for user, want := range map[string]bool{"su": true, "a": false, "b": false, "c": false, "app": false, "sb": false} {
		if got := h.srv.serverPolices(user); got != want {
			t.Errorf("serverPolices(%q) = %v, want %v", user, got, want)
		}
	}
}
