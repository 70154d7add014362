package seekdbshim

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// env is what the subtests of TestShim share: one throwaway MariaDB and
// shims in front of it.
type env struct {
	srv  *testdb.Server
	shim *Shim // default options
	ctx  context.Context
}

// open returns a go-sql-driver/mysql handle logged in to addr.
func open(t *testing.T, addr, user, password, db, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s?timeout=5s&readTimeout=60s&writeTimeout=60s&parseTime=true", user, password, addr, db)
	if params != "" {
		dsn += "&" + params
	}
	d, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func (e *env) db(t *testing.T, db string) *sql.DB {
	return open(t, e.shim.Addr(), e.srv.User, e.srv.Password, db, "")
}

// exec runs the queries on q in turn, failing the test at the first error.
func exec(t *testing.T, ctx context.Context, q interface {
	ExecContext(context.Context, string, ...any) (sql.Result, error)
}, queries ...string) {
	t.Helper()
	for _, query := range queries {
		if _, err := q.ExecContext(ctx, query); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
}

func queryString(t *testing.T, ctx context.Context, db interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, query string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRowContext(ctx, query, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s.String
}

// dump returns all rows of query, each rendered as a string.
func dump(t *testing.T, ctx context.Context, db *sql.DB, query string) []string {
	t.Helper()
	rows, err := db.QueryContext(ctx, query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for i, v := range vals {
			if i > 0 {
				b.WriteString("|")
			}
			if v.Valid {
				b.WriteString(v.String)
			} else {
				b.WriteString("NULL")
			}
		}
		out = append(out, b.String())
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// errNumber returns the MySQL error number of err, 0 if it has none.
func errNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

func wantErr(t *testing.T, err error, code uint16, what string) {
	t.Helper()
	if errNumber(err) != code {
		t.Fatalf("%s: got error %v, want MySQL error %d", what, err, code)
	}
}

func TestShim(t *testing.T) {
	testdb.Require(t) // skips without MariaDB, fails instead when CI=true
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()

	srv := testdb.StartForTest(ctx, t, testdb.Options{Logf: t.Logf})
	shim, err := Start(ctx, srv.Addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { shim.Close() })
	e := &env{srv: srv, shim: shim, ctx: ctx}

	t.Run("Version", e.testVersion)
	t.Run("Greeting", e.testGreeting)
	t.Run("Login", e.testLogin)
	t.Run("Passthrough", e.testPassthrough)
	t.Run("PreparedStatements", e.testPrepared)
	t.Run("Fork", e.testFork)
	t.Run("ForkErrors", e.testForkErrors)
	t.Run("ImplicitCommit", e.testImplicitCommit)
	t.Run("Busy", e.testBusy)
	t.Run("ClassicEOF", e.testClassicEOF)
	t.Run("Close", e.testClose)
}

func (e *env) testVersion(t *testing.T) {
	ctx := e.ctx
	db := e.db(t, "")
	for _, q := range []string{
		"SELECT VERSION()", "select version()", "SELECT  Version ( ) ;", "SELECT @@version",
		"SELECT @@VERSION", "SELECT @@global.version", "SELECT @@session.version",
		"/* comment */ SELECT VERSION() AS v",
	} {
		if got := queryString(t, ctx, db, q); got != DefaultVersion {
			t.Errorf("%s = %q, want %q", q, got, DefaultVersion)
		}
	}
	// The column keeps the name MariaDB gives it.
	rows, err := db.QueryContext(ctx, "SELECT VERSION(), @@version, 1")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	rows.Close()
	if want := []string{"VERSION()", "@@version", "1"}; !slices.Equal(cols, want) {
		t.Errorf("columns %q, want %q", cols, want)
	}
	// Inside expressions and through a prepared statement.
	if got := queryString(t, ctx, db, "SELECT CONCAT('[', VERSION(), ']')"); got != "["+DefaultVersion+"]" {
		t.Errorf("CONCAT = %q", got)
	}
	if got := queryString(t, ctx, db, "SELECT CONCAT(?, VERSION())", "v="); got != "v="+DefaultVersion {
		t.Errorf("prepared = %q", got)
	}
	// Other variables still come from MariaDB.
	if got := queryString(t, ctx, db, "SELECT @@version_comment"); got == "" || got == DefaultVersion {
		t.Errorf("@@version_comment = %q", got)
	}

	custom, err := Start(ctx, e.srv.Addr, Options{Version: "8.0.0-custom"})
	if err != nil {
		t.Fatal(err)
	}
	defer custom.Close()
	cdb := open(t, custom.Addr(), e.srv.User, e.srv.Password, "", "")
	if got := queryString(t, ctx, cdb, "SELECT VERSION()"); got != "8.0.0-custom" {
		t.Errorf("custom VERSION() = %q", got)
	}
}

func (e *env) testGreeting(t *testing.T) {
	c, err := net.DialTimeout("tcp", e.shim.Addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	p, err := readPacket(bufio.NewReader(c))
	if err != nil {
		t.Fatal(err)
	}
	if p.seq != 0 || len(p.payload) < 2 || p.payload[0] != 10 {
		t.Fatalf("not a HandshakeV10 greeting: %q", p.payload)
	}
	nul := strings.IndexByte(string(p.payload[1:]), 0)
	if got := string(p.payload[1 : 1+nul]); got != DefaultVersion {
		t.Errorf("greeting version %q, want %q", got, DefaultVersion)
	}
	rest := p.payload[1+nul+1:]
	caps := uint32(binary.LittleEndian.Uint16(rest[13:])) | uint32(binary.LittleEndian.Uint16(rest[18:]))<<16
	if caps&wire.CapSSL != 0 || caps&wire.CapCompress != 0 {
		t.Errorf("greeting offers TLS or compression: caps %#x", caps)
	}
	if caps&wire.CapLongPassword == 0 || string(rest[27:31]) != "\x00\x00\x00\x00" {
		t.Errorf("greeting presents MariaDB capabilities: caps %#x, extended %x", caps, rest[27:31])
	}
	part2 := max(13, int(rest[20])-8) // second part of the scramble
	if plugin := string(rest[31+part2:]); plugin != "mysql_native_password\x00" {
		t.Errorf("greeting auth plugin %q", plugin)
	}
}

func (e *env) testLogin(t *testing.T) {
	ctx := e.ctx
	addr := e.shim.Addr()
	// root with an empty password (mariadb-install-db creates root@127.0.0.1).
	root := open(t, addr, "root", "", "", "")
	if got := queryString(t, ctx, root, "SELECT CURRENT_USER()"); got != "root@127.0.0.1" {
		t.Errorf("CURRENT_USER() = %q", got)
	}
	// A mysql_native_password user with a password, and a default database.
	exec(t, ctx, root, "CREATE DATABASE IF NOT EXISTS login_db",
		"CREATE USER 'app'@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('s3cret pw')",
		"GRANT ALL ON login_db.* TO 'app'@'127.0.0.1'")
	app := open(t, addr, "app", "s3cret pw", "login_db", "")
	if got := queryString(t, ctx, app, "SELECT CONCAT(CURRENT_USER(), ' ', DATABASE())"); got != "app@127.0.0.1 login_db" {
		t.Errorf("app session = %q", got)
	}
	wantErr(t, open(t, addr, "app", "wrong", "", "").PingContext(ctx), 1045, "wrong password")
	wantErr(t, open(t, addr, "nobody", "", "", "").PingContext(ctx), 1045, "unknown user")
	wantErr(t, open(t, addr, "app", "s3cret pw", "no_such_db", "").PingContext(ctx), 1044, "forbidden database")
	wantErr(t, open(t, addr, "root", "", "no_such_db", "").PingContext(ctx), 1049, "unknown database")
}

func (e *env) testPassthrough(t *testing.T) {
	ctx := e.ctx
	db := e.db(t, "")
	exec(t, ctx, db, "CREATE DATABASE pt", "CREATE TABLE pt.t (id INT PRIMARY KEY, v VARCHAR(20))",
		"INSERT INTO pt.t VALUES (1, 'a'), (2, NULL)")
	if got := dump(t, ctx, db, "SELECT id, v FROM pt.t ORDER BY id"); !slices.Equal(got, []string{"1|a", "2|NULL"}) {
		t.Errorf("rows %q", got)
	}
	wantErr(t, func() error { _, err := db.ExecContext(ctx, "SELEC 1"); return err }(), 1064, "syntax error")
	wantErr(t, func() error { _, err := db.ExecContext(ctx, "INSERT INTO pt.t VALUES (1, 'dup')"); return err }(), 1062, "duplicate key")

	// A large statement and result (several packets).
	big := strings.Repeat("x", 3<<20)
	exec(t, ctx, db, "CREATE TABLE pt.big (id INT PRIMARY KEY, b LONGTEXT)", "INSERT INTO pt.big VALUES (1, '"+big+"')")
	if got := queryString(t, ctx, db, "SELECT b FROM pt.big"); got != big {
		t.Errorf("big value: got %d bytes", len(got))
	}

	// Many connections at once.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 20 {
				var n int
				if err := db.QueryRowContext(ctx, "SELECT ? + ?", i, j).Scan(&n); err != nil || n != i+j {
					errs <- fmt.Errorf("SELECT %d + %d = %d, %v", i, j, n, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func (e *env) testPrepared(t *testing.T) {
	ctx := e.ctx
	db := e.db(t, "")
	exec(t, ctx, db, "CREATE DATABASE ps", `CREATE TABLE ps.t (
		id BIGINT PRIMARY KEY, name VARCHAR(40) NOT NULL, amount DECIMAL(10,2),
		at DATETIME(6), note TEXT, ratio DOUBLE, flag TINYINT(1), raw VARBINARY(8))`)
	ins, err := db.PrepareContext(ctx, "INSERT INTO ps.t VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	for i, args := range [][]any{
		{int64(1), "one", "12.50", at, "n1", 0.5, true, []byte{0, 1, 2}},
		{int64(2), "two", nil, nil, nil, nil, false, nil},
		{int64(3), "trois ☃", "-3.25", at.Add(time.Hour), strings.Repeat("z", 1000), 1e100, true, []byte("ab")},
	} {
		if _, err := ins.ExecContext(ctx, args...); err != nil {
			t.Fatalf("insert %d: %v", i, err)
		}
	}
	ins.Close()

	sel, err := db.PrepareContext(ctx, "SELECT id, name, amount, at, note, ratio, flag, raw FROM ps.t WHERE id >= ? ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer sel.Close()
	for round := range 2 { // reuse the statement
		rows, err := sel.QueryContext(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		types, _ := rows.ColumnTypes()
		var names []string
		for _, ct := range types {
			names = append(names, ct.DatabaseTypeName())
		}
		if want := []string{"BIGINT", "VARCHAR", "DECIMAL", "DATETIME", "TEXT", "DOUBLE", "TINYINT", "VARBINARY"}; !slices.Equal(names, want) {
			t.Errorf("round %d: column types %q, want %q", round, names, want)
		}
		var got []string
		for rows.Next() {
			var (
				id     int64
				name   string
				amount sql.NullString
				ts     sql.NullTime
				note   sql.NullString
				ratio  sql.NullFloat64
				flag   bool
				raw    []byte
			)
			if err := rows.Scan(&id, &name, &amount, &ts, &note, &ratio, &flag, &raw); err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %s %v %v %d %v %v %x", id, name, amount, ts.Time.UTC().Format(time.RFC3339Nano),
				len(note.String), ratio, flag, raw))
		}
		rows.Close()
		want := []string{
			"1 one {12.50 true} 2024-02-29T13:14:15.123456Z 2 {0.5 true} true 000102",
			"2 two { false} 0001-01-01T00:00:00Z 0 {0 false} false ",
			"3 trois ☃ {-3.25 true} 2024-02-29T14:14:15.123456Z 1000 {1e+100 true} true 6162",
		}
		if !slices.Equal(got, want) {
			t.Errorf("round %d: rows\n%q\nwant\n%q", round, got, want)
		}
	}
	// Errors from prepared statements are relayed.
	_, err = db.ExecContext(ctx, "INSERT INTO ps.t (id, name) VALUES (?, ?)", 1, "dup")
	wantErr(t, err, 1062, "prepared duplicate")
	_, err = db.PrepareContext(ctx, "SELECT * FROM ps.missing WHERE id = ?")
	wantErr(t, err, 1146, "prepare on a missing table")
}

func (e *env) testFork(t *testing.T) {
	ctx := e.ctx
	db := e.db(t, "")
	exec(t, ctx, db,
		"CREATE DATABASE src_db", "CREATE DATABASE dst_db",
		"CREATE TABLE src_db.parent (id INT PRIMARY KEY)",
		`CREATE TABLE src_db.items (
			id INT AUTO_INCREMENT PRIMARY KEY,
			name VARCHAR(50) NOT NULL,
			price DECIMAL(10,2),
			parent_id INT,
			created DATETIME(6),
			doubled INT AS (id * 2) VIRTUAL,
			secret INT INVISIBLE DEFAULT 7,
			UNIQUE KEY uk_name (name),
			KEY k_price_created (price, created),
			CONSTRAINT fk_parent FOREIGN KEY (parent_id) REFERENCES src_db.parent (id)
		) ENGINE=InnoDB`,
		"CREATE TRIGGER src_db.items_upper BEFORE INSERT ON src_db.items FOR EACH ROW SET NEW.name = UPPER(NEW.name)",
		"INSERT INTO src_db.parent VALUES (1)",
		"INSERT INTO src_db.items (name, price, parent_id, created, secret) VALUES "+
			"('a', 1.50, 1, '2024-01-02 03:04:05.678901', 1), ('b', NULL, NULL, NULL, 2), "+
			"('c', 3.00, 1, '2024-05-06 07:08:09', 3), ('d', 4.00, NULL, NULL, 4), ('zero-id', 0, NULL, NULL, 0)",
		"UPDATE src_db.items SET id = 0 WHERE name = 'ZERO-ID'",
		"DELETE FROM src_db.items WHERE name = 'D'", // AUTO_INCREMENT stays 6
	)
	const cols = "SELECT id, name, price, parent_id, created, doubled, secret FROM %s ORDER BY id"
	srcRows := dump(t, ctx, db, fmt.Sprintf(cols, "src_db.items"))
	if len(srcRows) != 4 {
		t.Fatalf("source rows %q", srcRows)
	}

	before := e.shim.Forks()
	exec(t, ctx, db, "FORK TABLE src_db.items TO dst_db.items_fork")
	if got := e.shim.Forks(); got != before+1 {
		t.Errorf("Forks() = %d, want %d", got, before+1)
	}
	if got := dump(t, ctx, db, fmt.Sprintf(cols, "dst_db.items_fork")); !slices.Equal(got, srcRows) {
		t.Errorf("forked rows\n%q\nwant\n%q", got, srcRows)
	}
	const idx = "SELECT index_name, seq_in_index, column_name, non_unique FROM information_schema.statistics " +
		"WHERE table_schema = '%s' AND table_name = '%s' ORDER BY index_name, seq_in_index"
	srcIdx := dump(t, ctx, db, fmt.Sprintf(idx, "src_db", "items"))
	dstIdx := dump(t, ctx, db, fmt.Sprintf(idx, "dst_db", "items_fork"))
	// The foreign key's own index is an ordinary index, so it is kept.
	if len(srcIdx) != 5 || !slices.Equal(dstIdx, srcIdx) {
		t.Errorf("indexes of the fork\n%q\nwant\n%q", dstIdx, srcIdx)
	}
	fks := "SELECT COUNT(*) FROM information_schema.referential_constraints WHERE constraint_schema = ?"
	if got := queryString(t, ctx, db, fks, "src_db"); got != "1" {
		t.Errorf("source foreign keys: %s", got)
	}
	if got := queryString(t, ctx, db, fks, "dst_db"); got != "0" {
		t.Errorf("the fork has %s foreign keys, want 0", got)
	}
	if got := queryString(t, ctx, db, "SELECT COUNT(*) FROM information_schema.triggers WHERE event_object_schema = 'dst_db'"); got != "0" {
		t.Errorf("the fork has %s triggers, want 0", got)
	}
	// No trigger, no foreign key, the source's AUTO_INCREMENT counter.
	res, err := db.ExecContext(ctx, "INSERT INTO dst_db.items_fork (name, parent_id) VALUES ('lower', 99)")
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 6 {
		t.Errorf("next AUTO_INCREMENT id of the fork = %d, want 6", id)
	}
	if got := queryString(t, ctx, db, "SELECT name FROM dst_db.items_fork WHERE id = 6"); got != "lower" {
		t.Errorf("trigger ran on the fork: name %q", got)
	}
	// The tables are independent.
	exec(t, ctx, db, "UPDATE src_db.items SET price = 100")
	if got := queryString(t, ctx, db, "SELECT price FROM dst_db.items_fork WHERE id = 1"); got != "1.50" {
		t.Errorf("fork changed with its source: price %s", got)
	}

	// Spelling variants, and unqualified names resolved in the default database.
	exec(t, ctx, db, "/* c */ fork table `src_db`.`items` to `dst_db`.`items2` ;")
	sdb := e.db(t, "src_db")
	exec(t, ctx, sdb, "Fork Table items To items_copy")
	for _, tbl := range []string{"dst_db.items2", "src_db.items_copy"} {
		if got := queryString(t, ctx, db, "SELECT COUNT(*) FROM "+tbl); got != "4" {
			t.Errorf("%s has %s rows, want 4", tbl, got)
		}
	}
	if got := e.shim.Forks(); got != before+3 {
		t.Errorf("Forks() = %d, want %d", got, before+3)
	}
}

func (e *env) testForkErrors(t *testing.T) {
	ctx := e.ctx
	db := e.db(t, "")
	exec(t, ctx, db, "CREATE DATABASE fe", "CREATE TABLE fe.src (id INT PRIMARY KEY)", "CREATE TABLE fe.taken (x INT)")
	before := e.shim.Forks()

	_, err := db.ExecContext(ctx, "FORK TABLE fe.src TO fe.taken")
	wantErr(t, err, 1050, "destination exists")
	if !strings.Contains(err.Error(), "Table 'taken' already exists") {
		t.Errorf("message: %v", err)
	}
	_, err = db.ExecContext(ctx, "FORK TABLE fe.missing TO fe.new")
	wantErr(t, err, 1146, "missing source")
	if !strings.Contains(err.Error(), "Table 'fe.missing' doesn't exist") {
		t.Errorf("message: %v", err)
	}
	_, err = db.ExecContext(ctx, "FORK TABLE fe.missing TO fe.taken")
	wantErr(t, err, 1146, "missing source and existing destination (the source is checked first)")
	_, err = db.ExecContext(ctx, "FORK TABLE fe.src TO no_such_db.t")
	wantErr(t, err, 1049, "unknown destination database")
	_, err = db.ExecContext(ctx, "FORK TABLE src TO dst") // no default database
	wantErr(t, err, 1046, "no database selected")

	if got := queryString(t, ctx, db, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'fe'"); got != "2" {
		t.Errorf("failed forks left %s tables in fe, want 2", got)
	}
	if got := e.shim.Forks(); got != before {
		t.Errorf("failed forks were counted: Forks() = %d, want %d", got, before)
	}
}

func (e *env) testImplicitCommit(t *testing.T) {
	ctx := e.ctx
	db := e.db(t, "")
	exec(t, ctx, db, "CREATE DATABASE ic", "CREATE TABLE ic.t (id INT PRIMARY KEY)")

	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec(t, ctx, conn, "BEGIN")
	exec(t, ctx, conn, "INSERT INTO ic.t VALUES (1)")
	exec(t, ctx, conn, "FORK TABLE ic.t TO ic.t_fork1")
	if got := queryString(t, ctx, conn, "SELECT @@in_transaction"); got != "0" {
		t.Errorf("@@in_transaction = %s after FORK TABLE", got)
	}
	exec(t, ctx, conn, "ROLLBACK") // nothing left to roll back

	// With autocommit off, the fork's copy is committed too.
	exec(t, ctx, conn, "SET autocommit = 0")
	exec(t, ctx, conn, "INSERT INTO ic.t VALUES (2)")
	exec(t, ctx, conn, "FORK TABLE ic.t TO ic.t_fork2")
	exec(t, ctx, conn, "INSERT INTO ic.t VALUES (3)")
	exec(t, ctx, conn, "ROLLBACK") // undoes only id 3
	// A failing FORK TABLE commits as well.
	exec(t, ctx, conn, "INSERT INTO ic.t VALUES (4)")
	_, err = conn.ExecContext(ctx, "FORK TABLE ic.t TO ic.t_fork1")
	wantErr(t, err, 1050, "fork onto an existing table")
	exec(t, ctx, conn, "ROLLBACK")
	exec(t, ctx, conn, "SET autocommit = 1")

	for tbl, want := range map[string][]string{
		"ic.t":       {"1", "2", "4"},
		"ic.t_fork1": {"1"},
		"ic.t_fork2": {"1", "2"},
	} {
		if got := dump(t, ctx, db, "SELECT id FROM "+tbl+" ORDER BY id"); !slices.Equal(got, want) {
			t.Errorf("%s = %q, want %q", tbl, got, want)
		}
	}
}

func (e *env) testBusy(t *testing.T) {
	ctx := e.ctx
	const busyFor = time.Hour
	// The shim's clock stands still until the test moves it past BusyFor.
	var clock struct {
		sync.Mutex
		now time.Time
	}
	clock.now = time.Now()
	now := func() time.Time { clock.Lock(); defer clock.Unlock(); return clock.now }
	shim, err := Start(ctx, e.srv.Addr, Options{BusyFor: busyFor, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	defer shim.Close()
	db := open(t, shim.Addr(), e.srv.User, e.srv.Password, "", "")
	exec(t, ctx, db,
		"CREATE DATABASE busy",
		"CREATE TABLE busy.src (id INT PRIMARY KEY, v INT, KEY kv (v))",
		"INSERT INTO busy.src VALUES (1, 10), (2, 20)",
		"CREATE TABLE busy.other (id INT PRIMARY KEY)",
	)
	// DDL before any fork is fine.
	exec(t, ctx, db, "ALTER TABLE busy.src ADD COLUMN early INT")

	exec(t, ctx, db, "FORK TABLE busy.src TO busy.dst")

	for _, q := range []string{
		"ALTER TABLE busy.src ADD COLUMN x INT",
		"alter table `busy`.`dst` add column x int",
		"DROP TABLE busy.dst",
		"DROP TABLE IF EXISTS busy.other, busy.src",
		"TRUNCATE TABLE busy.dst",
		"TRUNCATE busy.src",
		"CREATE INDEX kx ON busy.dst (v)",
		"DROP INDEX kv ON busy.src",
		"RENAME TABLE busy.dst TO busy.dst_renamed",
		"CREATE OR REPLACE TABLE busy.dst (id INT)",
		"DROP DATABASE busy",
	} {
		_, err := db.ExecContext(ctx, q)
		wantErr(t, err, BusyErrorCode, q)
		if !strings.Contains(err.Error(), BusyErrorMessage) {
			t.Errorf("%s: message %v", q, err)
		}
	}
	// Unqualified names are resolved in the default database.
	bdb := open(t, shim.Addr(), e.srv.User, e.srv.Password, "busy", "")
	_, err = bdb.ExecContext(ctx, "ALTER TABLE src ENGINE = InnoDB")
	wantErr(t, err, BusyErrorCode, "unqualified ALTER TABLE")
	// The busy error commits the open transaction, like any DDL.
	conn, err := bdb.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec(t, ctx, conn, "BEGIN")
	exec(t, ctx, conn, "INSERT INTO other VALUES (100)")
	_, err = conn.ExecContext(ctx, "DROP TABLE dst")
	wantErr(t, err, BusyErrorCode, "DROP TABLE in a transaction")
	exec(t, ctx, conn, "ROLLBACK")
	conn.Close()
	if got := queryString(t, ctx, db, "SELECT COUNT(*) FROM busy.other WHERE id = 100"); got != "1" {
		t.Errorf("the busy DDL did not commit the transaction")
	}
	// DML on both tables and DDL on other tables work.
	exec(t, ctx, db,
		"INSERT INTO busy.dst (id, v) VALUES (3, 30)",
		"UPDATE busy.src SET v = v + 1",
		"DELETE FROM busy.dst WHERE id = 1",
		"ALTER TABLE busy.other ADD COLUMN y INT",
		"CREATE TABLE busy.fresh (id INT)",
		"DROP TABLE busy.fresh",
	)
	if got := dump(t, ctx, db, "SELECT id, v FROM busy.dst ORDER BY id"); !slices.Equal(got, []string{"2|20", "3|30"}) {
		t.Errorf("busy.dst = %q", got)
	}
	// Just before BusyFor has passed, DDL is still busy; once it has, DDL
	// works again.
	clock.Lock()
	clock.now = clock.now.Add(busyFor - time.Second)
	clock.Unlock()
	_, err = db.ExecContext(ctx, "DROP TABLE busy.dst")
	wantErr(t, err, BusyErrorCode, "DROP TABLE a second before BusyFor has passed")
	clock.Lock()
	clock.now = clock.now.Add(time.Second)
	clock.Unlock()
	exec(t, ctx, db, "ALTER TABLE busy.src ADD COLUMN x INT", "CREATE INDEX kx ON busy.dst (v)", "DROP TABLE busy.dst")
	if got := shim.Forks(); got != 1 {
		t.Errorf("Forks() = %d, want 1", got)
	}

	// Without BusyFor (the default shim) nothing is ever busy.
	exec(t, ctx, db, "FORK TABLE busy.src TO busy.dst")
	dflt := e.db(t, "")
	exec(t, ctx, dflt, "FORK TABLE busy.src TO busy.dst2", "DROP TABLE busy.dst2")
}

func (e *env) testClose(t *testing.T) {
	ctx := e.ctx
	shim, err := Start(ctx, e.srv.Addr, Options{})
	if err != nil {
		t.Fatal(err)
	}
	db := open(t, shim.Addr(), e.srv.User, e.srv.Password, "", "")
	db.SetMaxIdleConns(1)
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := shim.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := shim.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := conn.PingContext(ctx); err == nil {
		t.Error("a connection survived Close")
	}
	if c, err := net.DialTimeout("tcp", shim.Addr(), time.Second); err == nil {
		c.Close()
		t.Error("the shim still accepts connections after Close")
	}

	if _, err := Start(ctx, "127.0.0.1:1", Options{}); err == nil {
		t.Error("Start succeeded without an upstream")
	}
}

// rawClient is a minimal MySQL client speaking the protocol directly, to
// exercise what go-sql-driver/mysql does not (it always negotiates
// CLIENT_DEPRECATE_EOF).
type rawClient struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

// dialRaw logs in as root (empty password) without CLIENT_DEPRECATE_EOF.
func dialRaw(t *testing.T, addr, db string) *rawClient {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(time.Minute))
	rc := &rawClient{t: t, c: c, r: bufio.NewReader(c)}
	if _, err := readPacket(rc.r); err != nil { // greeting
		t.Fatal(err)
	}
	const caps = wire.CapLongPassword | wire.CapLongFlag | wire.CapConnectWithDB | wire.CapProtocol41 |
		wire.CapTransactions | wire.CapSecureConnection | wire.CapPluginAuth
	hs := binary.LittleEndian.AppendUint32(nil, caps)
	hs = binary.LittleEndian.AppendUint32(hs, 1<<24)
	hs = append(hs, 45) // utf8mb4_general_ci
	hs = append(hs, make([]byte, 23)...)
	hs = append(hs, "root\x00"...)
	hs = append(hs, 0) // empty auth response
	hs = append(hs, db+"\x00"...)
	hs = append(hs, "mysql_native_password\x00"...)
	rc.write(1, hs)
	if p := rc.read(); p.payload[0] != wire.OKHeader {
		t.Fatalf("login failed: %v", wire.ParseErr(p.payload))
	}
	return rc
}

func (rc *rawClient) write(seq byte, payload []byte) {
	rc.t.Helper()
	if err := writePacket(rc.c, packet{seq, payload}); err != nil {
		rc.t.Fatal(err)
	}
}

func (rc *rawClient) read() packet {
	rc.t.Helper()
	p, err := readPacket(rc.r)
	if err != nil || len(p.payload) == 0 {
		rc.t.Fatalf("reading a packet: %v", err)
	}
	return p
}

// query sends a COM_QUERY and returns its OK result or its text rows.
func (rc *rawClient) query(q string) (*result, error) {
	rc.t.Helper()
	rc.write(0, append([]byte{wire.ComQuery}, q...))
	resp := wire.NewResponse(wire.ShapeResults, false)
	r := &result{}
	cols := 0
	for !resp.Done() {
		p := rc.read()
		kind, err := resp.Next(p.payload, len(p.payload))
		if err != nil {
			rc.t.Fatal(err)
		}
		switch kind {
		case wire.KindErr:
			return nil, wire.ParseErr(p.payload)
		case wire.KindColumnCount:
			n, _, _ := wire.LenEnc(p.payload)
			cols = int(n)
		case wire.KindRow:
			row, err := wire.ParseTextRow(p.payload, cols)
			if err != nil {
				rc.t.Fatal(err)
			}
			r.rows = append(r.rows, row)
		}
	}
	r.status = resp.Status
	return r, nil
}

func (e *env) testClassicEOF(t *testing.T) {
	db := e.db(t, "")
	exec(t, e.ctx, db, "CREATE DATABASE ce")
	exec(t, e.ctx, db, "CREATE TABLE ce.src (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10))")
	exec(t, e.ctx, db, "INSERT INTO ce.src (v) VALUES ('a'), (NULL)")

	rc := dialRaw(t, e.shim.Addr(), "ce")
	r, err := rc.query("SELECT VERSION(), DATABASE()")
	if err != nil || len(r.rows) != 1 || *r.rows[0][0] != DefaultVersion || *r.rows[0][1] != "ce" {
		t.Fatalf("SELECT VERSION(), DATABASE() = %+v, %v", r, err)
	}
	// Unqualified names make the shim run SELECT DATABASE() itself; SHOW
	// CREATE TABLE and SHOW COLUMNS are result sets too.
	r, err = rc.query("FORK TABLE src TO dst")
	if err != nil {
		t.Fatalf("FORK TABLE: %v", err)
	}
	if r.status&wire.StatusAutocommit == 0 {
		t.Errorf("FORK TABLE OK status %#x", r.status)
	}
	if _, err := rc.query("FORK TABLE missing TO dst2"); errNumberOf(err) != 1146 {
		t.Errorf("missing source: %v", err)
	}
	r, err = rc.query("SELECT id, v FROM dst ORDER BY id")
	if err != nil || len(r.rows) != 2 || *r.rows[0][1] != "a" || r.rows[1][1] != nil {
		t.Fatalf("forked rows %+v, %v", r, err)
	}
	rc.write(0, []byte{wire.ComQuit})
}

func errNumberOf(err error) uint16 {
	var se *gomysql.MyError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}
