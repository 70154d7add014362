package proxy

import (
	"bufio"
	"context"
	"crypto/rsa"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/metrics"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The in-memory harness: a scripted fake upstream server and a fake client
// drive the real Server — listener, handshake, command loop, relay and
// statement pipeline — with no database. The upstream's answers are
// packets the test writes; the client sends raw command packets and reads
// the packets that come back, so tests see exactly what a driver would.

// fakeUpstream is a scripted MySQL server on loopback: it greets every
// connection (MariaDB 10.11), authenticates it as MariaDB does against the
// accounts it knows (fakeauth_test.go: app/secret, and those added), and
// answers each command
// with script, or, for what script leaves, with the answers a MariaDB
// session gives the proxy's own queries (session variables, DATABASE(),
// transaction statements) or sql's (side connections' SQL), else OK.
type fakeUpstream struct {
	t  testing.TB
	ln net.Listener
	// script answers a command; false leaves it to the defaults.
	script func(c *fakeUpConn, cmd byte, payload []byte) bool
	// sql, when set, answers the text of COM_QUERY the script leaves: a
	// statement whose first word is SELECT or SHOW gets its rows, others
	// an OK of its affected count.
	sql forker.Conn

	mu     sync.Mutex
	nextID uint32
	log    []string // commands received, in order: "Q <text>", "P <text>", "E <id>", "0x.."
	conns  []*fakeUpConn
	// accounts are the logins it accepts (fakeauth_test.go), logins those
	// that logged in; rsaKey and cachedSha2 serve caching_sha2_password.
	accounts   map[string]fakeAccount
	logins     []string
	rsaKey     *rsa.PrivateKey
	cachedSha2 map[string]bool
}

// fakeUpConn is one connection to the fake upstream.
type fakeUpConn struct {
	up     *fakeUpstream
	conn   net.Conn
	r      *bufio.Reader
	w      *bufio.Writer
	id     uint32
	seq    uint8
	status uint16
	db     string
	stmts  uint32
	// salt is the scramble it greeted with, caps the client's
	// capabilities and user the account logged in.
	salt []byte
	caps uint32
	user string
}

func newFakeUpstream(t testing.TB) *fakeUpstream {
	t.Helper()
	u := &fakeUpstream{t: t, ln: testkit.Listen(t), nextID: 100}
	u.addAccount("app", "secret", "")
	go u.accept()
	return u
}

func (u *fakeUpstream) addr() string { return u.ln.Addr().String() }

func (u *fakeUpstream) accept() {
	for {
		nc, err := u.ln.Accept()
		if err != nil {
			return
		}
		u.mu.Lock()
		u.nextID++
		c := &fakeUpConn{up: u, conn: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc), id: u.nextID,
			status: wire.StatusAutocommit}
		u.conns = append(u.conns, c)
		u.mu.Unlock()
		go c.serve()
	}
}

// forget drops what the upstream remembers of past connections (their
// buffers, the command log, the logins), so a fuzz target that logs in
// millions of times runs in constant memory.
func (u *fakeUpstream) forget() {
	u.mu.Lock()
	u.conns, u.log, u.logins = nil, nil, nil
	u.mu.Unlock()
}

// commands returns the log of commands received so far.
func (u *fakeUpstream) commands() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.log...)
}

// queries returns the texts of the COM_QUERY commands received so far that
// start with prefix (case-insensitive).
func (u *fakeUpstream) queries(prefix string) []string {
	var out []string
	for _, c := range u.commands() {
		if q, ok := strings.CutPrefix(c, "Q "); ok && strings.HasPrefix(strings.ToUpper(q), strings.ToUpper(prefix)) {
			out = append(out, q)
		}
	}
	return out
}

func (u *fakeUpstream) record(s string) {
	u.mu.Lock()
	u.log = append(u.log, s)
	u.mu.Unlock()
}

func (c *fakeUpConn) serve() {
	defer c.conn.Close()
	spec := mariaDBSpec()
	spec.connID = c.id
	c.salt = scrambleBytes(20)
	spec.salt1, spec.salt2 = c.salt[:8], c.salt[8:]
	if _, err := c.conn.Write(testkit.Packet(0, spec.bytes())); err != nil {
		return
	}
	if !c.login() {
		return
	}
	for {
		p, _, err := wire.ReadPacket(c.r, nil, 1<<30)
		if err != nil || len(p) == 0 {
			return
		}
		c.seq = 1
		cmd := p[0]
		switch cmd {
		case wire.ComQuery:
			c.up.record("Q " + string(p[1:]))
		case wire.ComStmtPrepare:
			c.up.record("P " + string(p[1:]))
		case wire.ComStmtExecute:
			c.up.record(fmt.Sprintf("E %d", binary.LittleEndian.Uint32(p[1:])))
		default:
			c.up.record(fmt.Sprintf("0x%02X %s", cmd, p[1:]))
		}
		if cmd == wire.ComQuit {
			return
		}
		if cmd == wire.ComChangeUser && (c.up.script == nil || !c.up.script(c, cmd, p[1:])) {
			ok := c.changeUser(p[1:])
			if c.w.Flush() != nil || !ok {
				return
			}
			continue
		}
		if c.up.script == nil || !c.up.script(c, cmd, p[1:]) {
			c.answer(cmd, p[1:])
		}
		if err := c.w.Flush(); err != nil {
			return
		}
	}
}

// answer is what the fake upstream answers a command the script leaves.
func (c *fakeUpConn) answer(cmd byte, arg []byte) {
	switch cmd {
	case wire.ComStmtClose, wire.ComStmtSendLongData:
		return
	case wire.ComStmtPrepare:
		c.stmts++
		c.prepareOK(c.stmts, 0, 0)
		return
	case wire.ComInitDB:
		c.db = string(arg)
		c.ok(0, 0)
		return
	case wire.ComQuery:
	default:
		c.ok(0, 0)
		return
	}
	q := string(arg)
	upper := strings.ToUpper(strings.TrimSpace(q))
	switch {
	case strings.HasPrefix(upper, "SELECT @@SESSION.SQL_MODE"):
		c.resultSet([]string{"@@SESSION.sql_mode", "@@SESSION.character_set_client", "@@SESSION.tx_isolation", "@@SESSION.tx_read_only"},
			[][]*string{{sp("STRICT_TRANS_TABLES"), sp("utf8mb4"), sp("REPEATABLE-READ"), sp("0")}})
	case upper == "SELECT DATABASE()":
		c.resultSet([]string{"DATABASE()"}, [][]*string{{nullIfEmpty(c.db)}})
	case strings.HasPrefix(upper, "SELECT @@"): // settings read before the proxy sets its own (forker.WithModes)
		row := make([]*string, strings.Count(upper, "@@"))
		names := make([]string, len(row))
		for i := range row {
			row[i], names[i] = sp(""), fmt.Sprintf("c%d", i)
		}
		c.resultSet(names, [][]*string{row})
	case upper == "SELECT CURRENT_USER()":
		c.resultSet([]string{"CURRENT_USER()"}, [][]*string{{sp(c.user + "@%")}})
	case upper == "SHOW GRANTS": // the account's grants, which forks and promotes check
		c.resultSet([]string{"Grants for " + c.user + "@%"}, [][]*string{{sp("GRANT ALL PRIVILEGES ON *.* TO `" + c.user + "`@`%`")}})
	case upper == "START TRANSACTION" || upper == "BEGIN":
		c.status |= wire.StatusInTrans
		c.ok(0, 0)
	case upper == "COMMIT" || upper == "ROLLBACK":
		c.status &^= wire.StatusInTrans
		c.ok(0, 0)
	case c.up.sql != nil && (strings.HasPrefix(upper, "SELECT") || strings.HasPrefix(upper, "SHOW")):
		rows, err := c.up.sql.Query(context.Background(), q)
		if c.serverErr(err) {
			return
		}
		cols := 1
		if len(rows) > 0 {
			cols = len(rows[0])
		}
		names := make([]string, cols)
		for i := range names {
			names[i] = fmt.Sprintf("c%d", i)
		}
		c.resultSet(names, rows)
	case c.up.sql != nil:
		n, err := c.up.sql.Exec(context.Background(), q)
		if !c.serverErr(err) {
			c.ok(n, 0)
		}
	default:
		c.ok(0, 0)
	}
}

// serverErr answers err as an ERR packet when it is one, reporting so.
func (c *fakeUpConn) serverErr(err error) bool {
	if err == nil {
		return false
	}
	me, ok := err.(*mysql.MyError)
	if !ok {
		me = &mysql.MyError{Code: wire.ErUnknown, State: "HY000", Message: err.Error()}
	}
	c.err(me.Code, me.State, me.Message)
	return true
}

func sp(s string) *string { return &s }

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// write sends one packet of the answer.
func (c *fakeUpConn) write(p []byte) {
	c.seq, _ = wire.WritePacket(c.w, c.seq, p)
}

func (c *fakeUpConn) ok(affected, insertID uint64) {
	p := []byte{wire.OKHeader}
	p = wire.AppendLenEnc(p, affected)
	p = wire.AppendLenEnc(p, insertID)
	c.write(append(p, byte(c.status), byte(c.status>>8), 0, 0))
}

func (c *fakeUpConn) err(code uint16, state, msg string) {
	c.write(wire.AppendErr(nil, &mysql.MyError{Code: code, State: state, Message: msg}))
}

func (c *fakeUpConn) eof(extra uint16) { c.write(wire.AppendEOF(nil, c.status|extra, 0)) }

// resultSet sends a text result set of text columns.
func (c *fakeUpConn) resultSet(cols []string, rows [][]*string) {
	c.write(wire.AppendLenEnc(nil, uint64(len(cols))))
	for _, n := range cols {
		c.write(columnDefIn("", n))
	}
	c.eof(0)
	for _, r := range rows {
		c.write(wire.AppendTextRow(nil, r))
	}
	c.eof(0)
}

// columnDefIn is a text column definition of schema.t.name.
func columnDefIn(schema, name string) []byte {
	n := wire.ColumnNames{Catalog: "def", Schema: schema, Table: "t", OrgTable: "t", Name: name, OrgName: name}
	_, rest, _ := wire.ParseColumnDef(wire.TextColumnDef(name))
	return wire.AppendColumnDef(nil, n, rest)
}

func (c *fakeUpConn) prepareOK(id uint32, params, cols int) {
	p := []byte{wire.OKHeader}
	p = binary.LittleEndian.AppendUint32(p, id)
	p = binary.LittleEndian.AppendUint16(p, uint16(cols))
	p = binary.LittleEndian.AppendUint16(p, uint16(params))
	c.write(append(p, 0, 0, 0))
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for i := range n {
			c.write(columnDefIn("", fmt.Sprintf("?%d", i)))
		}
		c.eof(0)
	}
}

// fakeClient is a client that speaks raw packets to the proxy: it has
// logged in (with go-mysql's client handshake, as drivers do) and then
// sends command packets and reads answers.
type fakeClient struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

// cmd sends one command packet (sequence 0) without reading an answer.
func (f *fakeClient) send(payload []byte) {
	f.t.Helper()
	if _, err := f.conn.Write(testkit.Packet(0, payload)); err != nil {
		f.t.Fatalf("send: %v", err)
	}
}

// packet reads one packet, failing the test after a few seconds.
func (f *fakeClient) packet() (payload []byte, seq uint8) {
	f.t.Helper()
	_ = f.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	p, seq, err := wire.ReadPacket(f.r, nil, 1<<30)
	if err != nil {
		f.t.Fatalf("read: %v", err)
	}
	return p, seq
}

// answer reads a whole answer of shape and returns its packets and their
// sequence numbers.
func (f *fakeClient) answer(shape wire.Shape, cursor bool) ([][]byte, []uint8) {
	f.t.Helper()
	resp := wire.NewResponse(shape, cursor)
	var pkts [][]byte
	var seqs []uint8
	for !resp.Done() {
		p, seq := f.packet()
		if _, err := resp.Next(p, len(p)); err != nil {
			f.t.Fatalf("answer packet %d (% x): %v", len(pkts), p, err)
		}
		pkts, seqs = append(pkts, p), append(seqs, seq)
	}
	return pkts, seqs
}

// query sends COM_QUERY and reads the answer.
func (f *fakeClient) query(sql string) ([][]byte, []uint8) {
	f.t.Helper()
	f.send(append([]byte{wire.ComQuery}, sql...))
	return f.answer(wire.ShapeResults, false)
}

// closed reports whether the proxy closed the connection (a read ends).
func (f *fakeClient) closed() bool {
	_ = f.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := f.r.ReadByte()
	return err == io.EOF || err != nil && !isTimeout(err)
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// harness is a running Server in front of a fake upstream.
type harness struct {
	t testing.TB
	// extCaps are the MariaDB extended capabilities its clients ask for.
	extCaps uint32
	up      *fakeUpstream
	srv     *Server
	m       *metrics.Proxy
}

// newHarness starts a Server (configuration edited by edit) in front of a
// new fake upstream.
func newHarness(t testing.TB, edit func(*Config)) *harness { return startHarness(t, edit, nil) }

// startHarness is newHarness with prepare run on the Server before it
// serves.
func startHarness(t testing.TB, edit func(*Config), prepare func(*Server)) *harness {
	t.Helper()
	up := newFakeUpstream(t)
	cfg := DefaultConfig()
	cfg.Listen, cfg.Upstream = "127.0.0.1:0", up.addr()
	cfg.UpstreamUser, cfg.UpstreamPassword = "app", "secret"
	cfg.HandshakeTimeout, cfg.ConnectTimeout = 5*time.Second, 5*time.Second
	if edit != nil {
		edit(&cfg)
	}
	// The upstream knows the accounts the configuration maps to.
	up.addAccount(cfg.UpstreamUser, cfg.UpstreamPassword, "")
	for _, u := range cfg.Users {
		if u.UpstreamUser != "" {
			up.addAccount(u.UpstreamUser, u.UpstreamPassword, "")
		}
	}
	m := metrics.New(prometheus.NewRegistry())
	s, err := New(cfg, zap.NewNop(), m)
	if err != nil {
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return &harness{t: t, up: up, srv: s, m: m}
}

// client logs in as user (the upstream account when "") and returns a raw
// client.
func (h *harness) client(user string) *fakeClient {
	h.t.Helper()
	if user == "" {
		user = h.srv.cfg.UpstreamUser
	}
	password := h.srv.cfg.UpstreamPassword
	for _, u := range h.srv.cfg.Users {
		if u.Name == user || strings.HasPrefix(user, u.Name+h.srv.cfg.UserSeparator) {
			password = u.Password
		}
	}
	nc, err := net.Dial("tcp", h.srv.Addr().String())
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { _ = nc.Close() })
	if err := loginRawExt(nc, user, password, "", wire.CapMultiStatements|wire.CapMultiResults|wire.CapLocalFiles, h.extCaps); err != nil {
		h.t.Fatalf("login as %s: %v", user, err)
	}
	return &fakeClient{t: h.t, conn: nc, r: bufio.NewReader(nc)}
}

// loginRawExt logs in on nc as a client with mysql_native_password, the
// capabilities testClientCaps | extra and, as a MariaDB client, the
// extended capabilities ext.
func loginRawExt(nc net.Conn, user, password, db string, extra, ext uint32) error {
	_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
	defer func() { _ = nc.SetDeadline(time.Time{}) }()
	r := bufio.NewReader(nc)
	p, _, err := wire.ReadPacket(r, nil, 1<<16)
	if err != nil {
		return fmt.Errorf("greeting: %w", err)
	}
	g, err := wire.ParseGreeting(p)
	if err != nil {
		return err
	}
	var auth []byte
	if password != "" {
		auth = nativeScramble(g.Salt, password)
	}
	resp := handshakeResponse(testClientCaps|extra, user, auth, db, AuthNativePassword, wire.AppendLenEnc(nil, 0))
	binary.LittleEndian.PutUint32(resp[28:], ext)
	if _, err := nc.Write(testkit.Packet(1, resp)); err != nil {
		return err
	}
	reply, _, err := wire.ReadPacket(r, nil, 1<<16)
	switch {
	case err != nil:
		return err
	case len(reply) > 0 && reply[0] == wire.ErrHeader:
		return wire.ParseErr(reply)
	case len(reply) == 0 || reply[0] != wire.OKHeader:
		return fmt.Errorf("login answered % x", reply)
	}
	if r.Buffered() > 0 {
		return fmt.Errorf("%d bytes after the login's OK", r.Buffered())
	}
	return nil
}

// errorFor is a server error of code.
func errorFor(code uint16) *mysql.MyError {
	return &mysql.MyError{Code: code, State: "42S02", Message: "Table 'app.t' doesn't exist"}
}
