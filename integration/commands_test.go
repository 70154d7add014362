package integration

import (
	"bytes"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// raw is a protocol-level client: go-mysql's client logs in, then the test
// writes command packets and reads response packets itself.
type raw struct {
	t *testing.T
	c *client.Conn
}

func dialRaw(t *testing.T, addr, user, password, db string) *raw {
	t.Helper()
	c, err := client.Connect(addr, user, password, db, func(c *client.Conn) error {
		c.UnsetCapability(gmysql.CLIENT_DEPRECATE_EOF)
		return nil
	})
	if err != nil {
		t.Fatalf("connect %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{t: t, c: c}
}

// send writes a command packet (sequence 0).
func (r *raw) send(payload ...byte) {
	r.t.Helper()
	r.c.ResetSequence()
	if err := r.c.WritePacket(append(make([]byte, 4), payload...)); err != nil {
		r.t.Fatalf("write command: %v", err)
	}
}

// write sends a packet continuing the current sequence.
func (r *raw) write(payload []byte) {
	r.t.Helper()
	if err := r.c.WritePacket(append(make([]byte, 4), payload...)); err != nil {
		r.t.Fatalf("write: %v", err)
	}
}

func (r *raw) read() []byte {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	p, err := r.c.ReadPacket()
	if err != nil {
		r.t.Fatalf("read: %v", err)
	}
	return p
}

// expectErr reads one packet and requires an ERR with code.
func (r *raw) expectErr(code uint16) string {
	r.t.Helper()
	p := r.read()
	if p[0] != 0xFF || binary.LittleEndian.Uint16(p[1:]) != code {
		r.t.Fatalf("want ERR %d, got % x (%q)", code, p[:min(len(p), 16)], p)
	}
	return string(p[9:])
}

func (r *raw) expectOK() {
	r.t.Helper()
	if p := r.read(); p[0] != 0x00 {
		r.t.Fatalf("want OK, got % x (%q)", p[:min(len(p), 16)], p)
	}
}

// eofStatus reads an EOF packet and returns its status flags.
func (r *raw) eofStatus() uint16 {
	r.t.Helper()
	p := r.read()
	if p[0] != 0xFE || len(p) >= 9 {
		r.t.Fatalf("want EOF, got % x", p[:min(len(p), 16)])
	}
	return binary.LittleEndian.Uint16(p[3:])
}

func (r *raw) query(q string) *gmysql.Result {
	r.t.Helper()
	res, err := r.c.Execute(q)
	if err != nil {
		r.t.Fatalf("%s: %v", q, err)
	}
	return res
}

func (r *raw) scalar(q string) string {
	r.t.Helper()
	res := r.query(q)
	v, err := res.GetString(0, 0)
	if err != nil {
		t := r.t
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

func TestInitDB(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "app")
	if err := r.c.UseDB("other"); err != nil {
		t.Fatal(err)
	}
	if got := r.scalar("SELECT DATABASE()"); got != "other" {
		t.Fatalf("database after COM_INIT_DB: %q", got)
	}
	if code := errCode(r.c.UseDB("no_such_db")); code != 1049 {
		t.Fatalf("COM_INIT_DB unknown db: code %d", code)
	}
	if got := r.scalar("SELECT DATABASE()"); got != "other" {
		t.Fatalf("database after failed COM_INIT_DB: %q", got)
	}
}

func TestFieldList(t *testing.T) {
	db, p := env(t)
	names := func(addr string) []string {
		r := dialRaw(t, addr, db.User, db.Password, "app")
		fields, err := r.c.FieldList("users", "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, f := range fields {
			out = append(out, string(f.Name)+":"+string(f.OrgTable))
		}
		if _, err = r.c.FieldList("no_such_table", ""); errCode(err) != 1146 {
			t.Fatalf("COM_FIELD_LIST unknown table: %v", err)
		}
		return out
	}
	direct, proxied := names(db.Addr), names(p.addr)
	if strings.Join(direct, ",") != strings.Join(proxied, ",") || len(proxied) != 7 {
		t.Fatalf("field lists differ: direct %v proxied %v", direct, proxied)
	}
}

// TestPingReachesUpstream proves COM_PING is answered by the upstream: once
// the upstream connection is killed, a ping through the proxy fails.
func TestPingReachesUpstream(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	if err := r.c.Ping(); err != nil {
		t.Fatal(err)
	}
	id := r.scalar("SELECT CONNECTION_ID()")
	admin := openDB(t, directDSN(db, ""))
	if _, err := admin.Exec("KILL " + id); err != nil {
		t.Fatal(err)
	}
	err := r.c.Ping()
	if err == nil {
		t.Fatal("ping succeeded although the upstream connection was killed")
	}
	// As on a direct connection: the server's "Connection was killed", or
	// the connection closed (no error packet the proxy made up).
	var me *gmysql.MyError
	if errors.As(err, &me) && me.Code != 1927 {
		t.Fatalf("unexpected ping error: %v", err)
	}
}

// prepare runs COM_STMT_PREPARE and reads its definitions, returning the
// statement id and column count.
func (r *raw) prepare(q string) (uint32, int) {
	r.t.Helper()
	id, cols, _ := r.prepareCounts(q)
	return id, cols
}

// prepareCounts runs COM_STMT_PREPARE and reads its definitions, returning
// the statement id, its column count and its parameter count.
func (r *raw) prepareCounts(q string) (id uint32, cols, params int) {
	r.t.Helper()
	r.send(append([]byte{0x16}, q...)...)
	p := r.read()
	if p[0] != 0 {
		r.t.Fatalf("prepare %q: % x %q", q, p[:min(16, len(p))], p)
	}
	id = binary.LittleEndian.Uint32(p[1:])
	cols = int(binary.LittleEndian.Uint16(p[5:]))
	params = int(binary.LittleEndian.Uint16(p[7:]))
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for i := 0; i < n; i++ {
			r.read()
		}
		r.eofStatus()
	}
	return id, cols, params
}

func stmtPacket(cmd byte, id uint32, rest ...byte) []byte {
	b := []byte{cmd, byte(id), byte(id >> 8), byte(id >> 16), byte(id >> 24)}
	return append(b, rest...)
}

// TestStatementCommands covers COM_STMT_PREPARE, SEND_LONG_DATA, EXECUTE,
// RESET, cursor EXECUTE with COM_STMT_FETCH, and CLOSE.
func TestStatementCommands(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "app")

	id, cols := r.prepare("SELECT CONCAT(?, '|'), name FROM users WHERE id > ? ORDER BY id")
	if cols != 2 {
		t.Fatalf("columns: %d", cols)
	}
	// Long data for parameter 0, in two pieces; no response expected.
	r.send(stmtPacket(0x18, id, append([]byte{0, 0}, "long-"...)...)...)
	r.send(stmtPacket(0x18, id, append([]byte{0, 0}, "data"...)...)...)
	// EXECUTE: flags 0, iterations 1, null bitmap (1 byte), new-params-bound,
	// types (string, longlong), value of param 1 only (param 0 is long data).
	exec := func(flags byte) {
		r.send(stmtPacket(0x17, id, flags, 1, 0, 0, 0, 0, 1, 0xFE, 0, 0x08, 0, 1, 0, 0, 0, 0, 0, 0, 0)...)
	}
	exec(0)
	if p := r.read(); p[0] != 2 {
		t.Fatalf("column count packet: % x", p)
	}
	r.read()
	r.read()
	r.eofStatus()
	row := r.read()
	if !bytes.Contains(row, []byte("long-data|")) || !bytes.Contains(row, []byte("bob")) {
		t.Fatalf("row with long data: %q", row)
	}
	r.read() // carol
	if st := r.eofStatus(); st&0x0008 != 0 {
		t.Fatalf("unexpected more-results flag: %x", st)
	}

	// COM_STMT_RESET clears long data; then a cursor execute with fetch.
	r.send(stmtPacket(0x1A, id)...)
	r.expectOK()
	r.send(stmtPacket(0x18, id, append([]byte{0, 0}, "c"...)...)...)
	r.send(stmtPacket(0x17, id, 1 /* CURSOR_TYPE_READ_ONLY */, 1, 0, 0, 0, 0, 1, 0xFE, 0, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0)...)
	r.read() // column count
	r.read()
	r.read()
	if st := r.eofStatus(); st&0x0040 == 0 {
		t.Fatalf("cursor not opened: status %x", st)
	}
	var fetched int
	for fetched < 10 {
		r.send(stmtPacket(0x1C, id, 2, 0, 0, 0)...) // fetch 2 rows
		for {
			p := r.read()
			if p[0] == 0xFE && len(p) < 9 {
				st := binary.LittleEndian.Uint16(p[3:])
				if st&0x0080 != 0 {
					fetched += 100
				}
				break
			}
			if !bytes.Contains(p, []byte("c|")) {
				t.Fatalf("fetched row: %q", p)
			}
			fetched++
		}
	}
	if fetched != 103 {
		t.Fatalf("fetched %d rows (+100 at last-row-sent), want 3 rows", fetched-100)
	}

	// COM_STMT_CLOSE has no response; the statement is gone afterwards.
	r.send(stmtPacket(0x19, id)...)
	r.send(stmtPacket(0x1A, id)...)
	r.expectErr(1243)
	if err := r.c.Ping(); err != nil {
		t.Fatal(err)
	}
}

func TestStatistics(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	r.send(0x09)
	if s := string(r.read()); !strings.HasPrefix(s, "Uptime: ") || !strings.Contains(s, "Queries per second avg") {
		t.Fatalf("COM_STATISTICS: %q", s)
	}
}

// TestSetOption toggles multi-statements with COM_SET_OPTION.
func TestSetOption(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	if _, err := r.c.Execute("SELECT 1; SELECT 2"); err == nil {
		t.Fatal("multi-statement accepted before COM_SET_OPTION")
	}
	r.send(0x1B, 0, 0) // MYSQL_OPTION_MULTI_STATEMENTS_ON
	r.eofStatus()
	var n int
	if _, err := r.c.ExecuteMultiple("SELECT 1; SELECT 2", func(*gmysql.Result, error) { n++ }); err != nil || n != 2 {
		t.Fatalf("multi-statement after COM_SET_OPTION: n=%d err=%v", n, err)
	}
	r.send(0x1B, 1, 0) // MYSQL_OPTION_MULTI_STATEMENTS_OFF
	r.eofStatus()
	r.send(0x1B, 9, 0) // unknown option
	r.expectErr(1047)
}

func TestResetConnection(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "app")
	idBefore := r.scalar("SELECT CONNECTION_ID()")
	r.query("SET @a = 1")
	r.query("CREATE TEMPORARY TABLE t_reset (x INT)")
	r.send(0x1F)
	r.expectOK()
	res := r.query("SELECT @a IS NULL")
	if v, _ := res.GetInt(0, 0); v != 1 {
		t.Fatal("user variable survived COM_RESET_CONNECTION")
	}
	if _, err := r.c.Execute("SELECT * FROM t_reset"); err == nil {
		t.Fatal("temporary table survived COM_RESET_CONNECTION")
	}
	if idAfter := r.scalar("SELECT CONNECTION_ID()"); idAfter != idBefore {
		t.Fatalf("reset changed the upstream connection: %s -> %s", idBefore, idAfter)
	}
}

// changeUser sends COM_CHANGE_USER and answers the proxy's auth switch.
func (r *raw) changeUser(user, password, db string) []byte {
	r.t.Helper()
	pkt := append([]byte{0x11}, user...)
	pkt = append(pkt, 0, 20)
	pkt = append(pkt, make([]byte, 20)...) // scramble against an unknown salt: the proxy asks again
	pkt = append(pkt, db...)
	pkt = append(pkt, 0, 45, 0)
	pkt = append(pkt, "mysql_native_password"...)
	pkt = append(pkt, 0)
	r.send(pkt...)
	sw := r.read()
	if sw[0] != 0xFE {
		return sw
	}
	rest := sw[1:]
	i := bytes.IndexByte(rest, 0)
	if string(rest[:i]) != "mysql_native_password" {
		r.t.Fatalf("auth switch to %q", rest[:i])
	}
	salt := bytes.TrimRight(rest[i+1:], "\x00")
	r.write(gmysql.CalcNativePassword(salt, []byte(password)))
	return r.read()
}

func TestChangeUser(t *testing.T) {
	db, _ := env(t)
	admin := openDB(t, directDSN(db, ""))
	for _, q := range []string{
		"CREATE USER IF NOT EXISTS 'reader'@'127.0.0.1' IDENTIFIED BY 'reader-pw'",
		"GRANT SELECT ON other.* TO 'reader'@'127.0.0.1'",
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Users = []proxy.User{{Name: "app_ro", Password: "ro-secret", UpstreamUser: "reader", UpstreamPassword: "reader-pw"}}
	})
	r := dialRaw(t, p.addr, db.User, db.Password, "app")
	r.query("SET @x = 1")
	if p := r.changeUser("app_ro", "ro-secret", "other"); p[0] != 0 {
		t.Fatalf("change user: % x %q", p[:min(16, len(p))], p)
	}
	if got := r.scalar("SELECT CONCAT(CURRENT_USER(), ' ', DATABASE(), ' ', @x IS NULL)"); got != "reader@127.0.0.1 other 1" {
		t.Fatalf("after change user: %q", got)
	}
	// Back to the default account, then a wrong password: 1045 and closed.
	if p := r.changeUser(db.User, db.Password, ""); p[0] != 0 {
		t.Fatalf("change back: %q", p)
	}
	if got := r.scalar("SELECT SUBSTRING_INDEX(CURRENT_USER(), '@', 1)"); got != db.User {
		t.Fatalf("after change back: %q", got)
	}
	p2 := r.changeUser("app_ro", "wrong", "")
	if p2[0] != 0xFF || binary.LittleEndian.Uint16(p2[1:]) != 1045 {
		t.Fatalf("wrong password: %q", p2)
	}
	if _, err := r.c.ReadPacket(); err == nil {
		t.Fatal("connection still open after failed COM_CHANGE_USER")
	}
}

// TestUnsupportedCommands: refused with 1047; the connection stays usable.
func TestUnsupportedCommands(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	for _, cmd := range []byte{0x1D /* COM_DAEMON */, 0x08 /* COM_SHUTDOWN */, 0x12 /* COM_BINLOG_DUMP */, 0x64} {
		r.send(cmd, 1, 2, 3)
		if msg := r.expectErr(1047); !strings.Contains(msg, "sqlfork-proxy") {
			t.Fatalf("refusal message: %q", msg)
		}
		if err := r.c.Ping(); err != nil {
			t.Fatalf("connection unusable after refused command 0x%02x: %v", cmd, err)
		}
	}
	if v := r.scalar("SELECT 'still here'"); v != "still here" {
		t.Fatal(v)
	}
}

// TestQuitClosesUpstream: COM_QUIT ends the session and its upstream connection.
func TestQuitClosesUpstream(t *testing.T) {
	db, p := env(t)
	r := dialRaw(t, p.addr, db.User, db.Password, "")
	id := r.scalar("SELECT CONNECTION_ID()")
	r.send(0x01)
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := r.c.ReadPacket(); err == nil {
		t.Fatal("proxy answered COM_QUIT")
	}
	waitUpstreamGone(t, db, id)
}

// waitUpstreamGone waits until upstream connection id has disappeared.
func waitUpstreamGone(t *testing.T, db interface{ DSN(string) string }, id string) {
	t.Helper()
	admin, err := sql.Open("mysql", db.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = " + id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("upstream connection %s still open", id)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLoadDataLocal: LOAD DATA LOCAL INFILE streams the client's file
// through the proxy; a file the client refuses to send gives a clear error
// and the connection stays usable.
func TestLoadDataLocal(t *testing.T) {
	_, p := env(t)
	var data strings.Builder
	for i := 0; i < 20000; i++ {
		data.WriteString("row-")
		data.WriteString(strings.Repeat("x", i%50))
		data.WriteString("\n")
	}
	mysql.RegisterReaderHandler("lines", func() io.Reader { return strings.NewReader(data.String()) })
	defer mysql.DeregisterReaderHandler("lines")
	sdb := openDB(t, p.dsn("app"))
	sdb.SetMaxOpenConns(1)
	mustExecDB(t, sdb, "CREATE TEMPORARY TABLE loaded (v VARCHAR(100))")
	res, err := sdb.Exec("LOAD DATA LOCAL INFILE 'Reader::lines' INTO TABLE loaded")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 20000 {
		t.Fatalf("loaded %d rows", n)
	}
	var n int
	if err := sdb.QueryRow("SELECT COUNT(*) FROM loaded WHERE v LIKE 'row-%'").Scan(&n); err != nil || n != 20000 {
		t.Fatalf("count %d err %v", n, err)
	}
	// Not registered: the driver answers with an empty file and an error.
	if _, err := sdb.Exec("LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE loaded"); err == nil {
		t.Fatal("unregistered local file accepted")
	}
	if err := sdb.QueryRow("SELECT COUNT(*) FROM loaded").Scan(&n); err != nil || n != 20000 {
		t.Fatalf("after refused load: count %d err %v", n, err)
	}
}

// errCode is the server error code in err, or 0.
func errCode(err error) uint16 {
	var me *gmysql.MyError
	if errors.As(err, &me) {
		return me.Code
	}
	return 0
}

func mustExecDB(t *testing.T, db *sql.DB, q string) {
	t.Helper()
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// TestGreetingIDIsTheThread (issue 13): the connection id a client sees in
// the proxy's greeting is its upstream thread's, as a direct client sees
// it: CONNECTION_ID() and the process list say the same (drivers' own test
// suites check it). KILL through the proxy is translated for the same
// proxy user only (TestKillOnlyOwnConnections).
func TestGreetingIDIsTheThread(t *testing.T) {
	db, p := env(t)
	for _, addr := range []string{db.Addr, p.addr} {
		a := dialRaw(t, addr, db.User, db.Password, "")
		if id, v := a.c.GetConnectionID(), a.scalar("SELECT CONNECTION_ID()"); fmt.Sprint(id) != v {
			t.Errorf("%s: greeting connection id %d, CONNECTION_ID() %s", addr, id, v)
		}
	}
}
