package integration

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// lazyEnv is a proxy that forks every table with rows lazily, and the
// database lzs with table t of n rows, made anew.
func lazyEnv(t *testing.T, n int, rate int64) (*proxyHandle, func(string) string) {
	t.Helper()
	server, _ := env(t)
	h := startTestProxy(t, server.Addr, server, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, rate
	})
	root := openDB(t, server.DSN(""))
	for _, q := range []string{
		"DROP DATABASE IF EXISTS lzs", "CREATE DATABASE lzs",
		"CREATE TABLE lzs.t (id INT AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL, s VARCHAR(20), u VARCHAR(20) UNIQUE)",
		fmt.Sprintf("INSERT INTO lzs.t SELECT seq, seq %% 100, CONCAT('s', seq), CONCAT('u', seq) FROM lzs.seq_1_to_%d", n),
		"ANALYZE TABLE lzs.t",
	} {
		mustExecC(t, root, q)
	}
	direct := func(q string) string { return queryString(t, root, q) }
	return h, direct
}

// TestLazyForkSession: a sandbox's first write to a table forked lazily
// answers as on a copy made at the fork, while production changes after
// it, and the fork ends whole, diffed and untouched in production.
func TestLazyForkSession(t *testing.T) {
	h, direct := lazyEnv(t, 30000, 0)
	ctx := context.Background()
	db := openDB(t, h.dsn("lzs"))
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"})
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if got := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"}); got != before+1 {
		t.Fatalf("lazy forks: %v, want %v", got, before+1)
	}
	// Production after the fork: the sandbox never sees it.
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "UPDATE lzs.t SET v = -1 WHERE id IN (9, 29999)")
	mustExecC(t, root, "DELETE FROM lzs.t WHERE id = 10")
	for _, tc := range []struct{ q, want string }{
		{"SELECT v FROM t WHERE id = 7", "1000"},
		{"SELECT v FROM t WHERE id = 9", "9"},
		{"SELECT v FROM t WHERE id = 29999", "99"},
		{"SELECT COUNT(*) FROM t", "30000"},
		{"SELECT SUM(v) FROM t", fmt.Sprint(300*4950 - 7 + 1000)},
	} {
		wantString(t, c, tc.q, tc.want, tc.q+": %s")
	}
	mustExecC(t, c, "INSERT INTO t (v, s, u) VALUES (5, 'new', 'unew')")
	wantString(t, c, "SELECT id FROM t WHERE u = 'unew'", "30001", "new row's id: %s")
	rows := rowsOf(t, c, "SANDBOX DIFF SUMMARY")
	if len(rows) != 1 || rows[0][2] != "1" || rows[0][3] != "1" {
		t.Errorf("DIFF SUMMARY: %v", rows)
	}
	if got := direct("SELECT v FROM lzs.t WHERE id = 7"); got != "7" {
		t.Errorf("production's row 7: v = %s", got)
	}
	if got := direct("SELECT COUNT(*) FROM lzs.t"); got != "29999" {
		t.Errorf("production's rows: %s", got)
	}
}

// TestLazyForkDifferential runs random point statements in a sandbox
// while its lazy fork fills and production changes, and the same
// statements on a copy made at the fork: every answer (rows, affected
// rows, errors) is the copy's, the fork ends equal to the copy, and DIFF
// counts what the copy changed.
func TestLazyForkDifferential(t *testing.T) {
	const n = 200000
	h, direct := lazyEnv(t, n, 40000) // its fill lasts about 5 s: most statements run during it
	ctx := context.Background()
	root, sb, ref := lazyReference(t, h)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	// The first write forks; production changes from then on.
	first := "UPDATE t SET s = 'first' WHERE id = 1"
	if got, want := runBoth(ctx, sb, first), runBoth(ctx, ref, strings.ReplaceAll(first, " t ", " ref ")); got != want {
		t.Fatalf("%s: sandbox %s, copy %s", first, got, want)
	}
	stop := make(chan struct{})
	prodDone := make(chan error, 1)
	go func() { prodDone <- productionWrites(root, n, stop) }()
	filling := 0
	ups := map[string]int64{}
	for i := 0; i < 400; i++ {
		q := lazyStatement(rng, n)
		got, want := runBoth(ctx, sb, q), runBoth(ctx, ref, strings.ReplaceAll(q, " t ", " ref "))
		if got != want {
			t.Fatalf("statement %d %q:\n sandbox: %s\n    copy: %s", i, q, got, want)
		}
		if i%50 == 0 {
			for _, r := range rowsOf(t, sb, "SANDBOX STATUS") {
				if r[10] == "lzs.t" && strings.HasPrefix(r[11], "filling") {
					filling++
					copiedUp(t, h, r[1], ups)
				}
			}
		}
	}
	close(stop)
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of 8 samples saw the fork filling; copy-ups seen %v", filling, ups)
	if filling >= 4 && (ups["staging"] == 0 || ups["snapshot"] == 0) {
		t.Errorf("copy-ups by source %v: want some read from the staging table and some from the snapshot", ups)
	}
	checkLazyAgainstRef(t, sb, direct)
}

// lazyStatement is a random point statement on t (a table of n rows with
// unique u = 'u<id>').
func lazyStatement(rng *rand.Rand, n int) string {
	k := func() int { return 1 + rng.Intn(n+20) }
	switch rng.Intn(10) {
	case 0:
		return fmt.Sprintf("UPDATE t SET v = v + 1, s = 'x%d' WHERE id = %d", rng.Intn(99), k())
	case 1:
		return fmt.Sprintf("DELETE FROM t WHERE id = %d", k())
	case 2:
		return fmt.Sprintf("INSERT INTO t (id, v, s, u) VALUES (%d, 1, 'i', 'u%d')", k(), k())
	case 3:
		return fmt.Sprintf("REPLACE INTO t (id, v, s, u) VALUES (%d, 2, 'r', 'u%d')", k(), k())
	case 4:
		return fmt.Sprintf("INSERT INTO t (id, v, u) VALUES (%d, 3, 'u%d') ON DUPLICATE KEY UPDATE v = v + 100", k(), k())
	case 5:
		return fmt.Sprintf("SELECT id, v, s, u FROM t WHERE id IN (%d, %d, %d) ORDER BY id", k(), k(), k())
	case 6:
		return fmt.Sprintf("SELECT id, v FROM t WHERE u = 'u%d'", k())
	case 7:
		return fmt.Sprintf("INSERT INTO t (v, s) VALUES (%d, 'auto')", rng.Intn(9))
	case 8:
		return fmt.Sprintf("UPDATE t SET v = 0 WHERE u = 'u%d'", k())
	}
	return fmt.Sprintf("DELETE FROM t WHERE id IN (%d, %d)", k(), k())
}

// runBoth runs q on c and describes its answer: rows, or affected rows and
// the last insert id, or the error's code.
func runBoth(ctx context.Context, c *sql.Conn, q string, args ...any) string {
	if strings.HasPrefix(q, "SELECT") {
		rows, err := c.QueryContext(ctx, q, args...)
		return describeRows(rows, err)
	}
	r, err := c.ExecContext(ctx, q, args...)
	if err != nil {
		return "error " + mysqlErr(err)
	}
	a, _ := r.RowsAffected()
	id, _ := r.LastInsertId()
	return fmt.Sprintf("affected %d, id %d", a, id)
}

// describeRows describes a query's answer: its rows, or the error's code.
func describeRows(rows *sql.Rows, err error) string {
	if err != nil {
		return "error " + mysqlErr(err)
	}
	defer rows.Close()
	var out []string
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		_ = rows.Scan(ptrs...)
		out = append(out, fmt.Sprint(vals))
	}
	return strings.Join(out, ";")
}

// productionWrites changes production's t until stop: rows the sandbox
// reads too, and new ones.
func productionWrites(db *sql.DB, n int, stop <-chan struct{}) error {
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		var err error
		switch i % 3 {
		case 0:
			_, err = db.Exec(fmt.Sprintf("UPDATE lzs.t SET v = -1, s = 'prod' WHERE id = %d", 1+(i*7919)%n))
		case 1:
			_, err = db.Exec(fmt.Sprintf("DELETE FROM lzs.t WHERE id = %d", 1+(i*104729)%n))
		default:
			_, err = db.Exec(fmt.Sprintf("INSERT INTO lzs.t (id, v, s, u) VALUES (%d, -2, 'prod', 'p%d')", 1000000+i, i))
		}
		if err != nil {
			return fmt.Errorf("production write %d: %w", i, err)
		}
	}
}

// TestLazyForkAcrossProxies: a proxy process sharing a sandbox with the
// one filling its lazy fork waits for the fill on the fill's lock, then
// reads the whole fork: the sandbox's change, the snapshot's rows.
func TestLazyForkAcrossProxies(t *testing.T) {
	a, direct := lazyEnv(t, 20000, 2000) // a fill of about 10 s
	b := startTestProxy(t, a.db.Addr, a.db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows = "transparent", 1
	})
	ca := conn(t, openDB(t, a.dsn("lzs")))
	cb := conn(t, openDB(t, b.dsn("lzs")))
	mustExecC(t, ca, "SANDBOX CREATE lzp")
	mustExecC(t, ca, "UPDATE t SET v = 1000 WHERE id = 7")
	if !lazyFilling(t, ca, "lzs.t") {
		t.Fatal("the fork is whole already: the fill is too fast for this test")
	}
	root := openDB(t, a.db.DSN(""))
	mustExecC(t, root, "UPDATE lzs.t SET v = -1 WHERE id = 9")
	mustExecC(t, cb, "SANDBOX ATTACH lzp")
	go func() {
		time.Sleep(500 * time.Millisecond) // b waits for the fill: let it end
		a.setFillRate(0)
	}()
	wantString(t, cb, "SELECT v FROM t WHERE id = 7", "1000", "the other process reads row 7 as %s")
	if lazyFilling(t, ca, "lzs.t") {
		t.Error("the other process answered before the fill ended")
	}
	wantString(t, cb, "SELECT v FROM t WHERE id = 9", "9", "the other process reads row 9 as %s")
	wantString(t, cb, "SELECT COUNT(*) FROM t", "20000", "the other process counts %s rows")
	if got := direct("SELECT v FROM lzs.t WHERE id = 7"); got != "7" {
		t.Errorf("production's row 7: %s", got)
	}
}

// lazyFilling says whether c's sandbox shows table (db.name) filling.
func lazyFilling(t *testing.T, c *sql.Conn, table string) bool {
	t.Helper()
	return strings.HasPrefix(tableStateOf(t, c, table), "filling")
}

// tableStateOf is table's table_state in SANDBOX STATUS on c ("" when it
// has none).
func tableStateOf(t *testing.T, c *sql.Conn, table string) string {
	t.Helper()
	for _, r := range rowsOf(t, c, "SANDBOX STATUS") {
		if len(r) > 11 && r[10] == table {
			return r[11]
		}
	}
	return ""
}

// copiedUp raises ups to the copy-up counts by source the admin API shows
// for the sandbox called name.
func copiedUp(t *testing.T, h *proxyHandle, name string, ups map[string]int64) {
	t.Helper()
	sb, err := h.srv.Admin().Show(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range sb.Tables {
		if tb.Fill != nil {
			for k, v := range tb.Fill.CopiedUp {
				ups[k] = max(ups[k], v)
			}
		}
	}
}

// filledRows is how many rows the fills of the sandbox called name have
// copied, as the admin API shows them.
func filledRows(t *testing.T, h *proxyHandle, name string) int64 {
	t.Helper()
	sb, err := h.srv.Admin().Show(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, tb := range sb.Tables {
		if tb.Fill != nil {
			n += tb.Fill.Copied
		}
	}
	return n
}

// TestLazyForkResumedAfterStop: a fill whose proxy process stopped starts
// again in the next process that needs the fork whole. The rows the
// sandbox changed, deleted or inserted stay its own; the rows it never
// touched are production's as of the new start; DIFF shows exactly the
// sandbox's changes.
func TestLazyForkResumedAfterStop(t *testing.T) {
	a, direct := lazyEnv(t, 20000, 500) // a fill of about 40 s: still running when the process stops
	ca := conn(t, openDB(t, a.dsn("lzs")))
	mustExecC(t, ca, "SANDBOX CREATE lzr")
	mustExecC(t, ca, "SANDBOX KEEP")
	for _, q := range []string{
		"UPDATE t SET v = 1000 WHERE id = 7", "DELETE FROM t WHERE id = 8",
		"INSERT INTO t (id, v, s, u) VALUES (30001, 5, 'n', 'u30001')",
	} {
		mustExecC(t, ca, q)
	}
	if !lazyFilling(t, ca, "lzs.t") {
		t.Fatal("the fork is whole already: the fill is too fast for this test")
	}
	root := openDB(t, a.db.DSN(""))
	mustExecC(t, root, "UPDATE lzs.t SET v = -1 WHERE id IN (7, 9)")
	_ = ca.Close()
	a.stop() // its fill stops with it, as with a process that exits
	b := startTestProxy(t, a.db.Addr, a.db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows = "transparent", 1
	})
	cb := conn(t, openDB(t, b.dsn("lzs")))
	mustExecC(t, cb, "SANDBOX ATTACH lzr")
	wantString(t, cb, "SELECT v FROM t WHERE id = 7", "1000", "row 7, the sandbox's: %s")
	wantString(t, cb, "SELECT COUNT(*) FROM t WHERE id = 8", "0", "row 8, deleted in the sandbox: %s rows")
	wantString(t, cb, "SELECT v FROM t WHERE id = 30001", "5", "row 30001, the sandbox's: %s")
	wantString(t, cb, "SELECT v FROM t WHERE id = 9", "-1", "row 9, untouched, production's as of the new fill: %s")
	wantString(t, cb, "SELECT COUNT(*) FROM t", "20000", "rows: %s")
	if lazyFilling(t, cb, "lzs.t") {
		t.Error("the fork still fills after a statement that waited for it")
	}
	rows := rowsOf(t, cb, "SANDBOX DIFF SUMMARY")
	if len(rows) != 1 || strings.Join(rows[0][2:5], "/") != "1/1/1" {
		t.Errorf("DIFF SUMMARY %v, want 1 inserted, 1 updated, 1 deleted", rows)
	}
	if got := direct("SELECT CONCAT(v, '/', (SELECT COUNT(*) FROM lzs.t WHERE id IN (8, 30001))) FROM lzs.t WHERE id = 7"); got != "-1/1" {
		t.Errorf("production's row 7 and rows 8 and 30001: %s", got)
	}
	mustExecC(t, cb, "SANDBOX DISCARD lzr")
}

// TestLazyForkColumnNames: columns named like the fill's own variables
// and parameters (n, lo, c, got, step, budget, done, t0, staged, and the
// copy-up procedure's sqlfork_k, sqlfork_hi) keep
// their values through the fill and the copy-ups from the staging table:
// a routine's variable hides a column of its name where the column is
// not qualified.
func TestLazyForkColumnNames(t *testing.T) {
	h, direct := lazyEnv(t, 10, 2000)
	root := openDB(t, h.db.DSN(""))
	for _, q := range []string{
		"CREATE TABLE lzs.vars (id INT PRIMARY KEY, n INT, lo INT, c INT, got INT, step INT, budget INT, done INT, t0 INT, staged INT, " +
			"sqlfork_k INT, sqlfork_hi INT, sqlfork_lo INT)",
		"INSERT INTO lzs.vars SELECT seq, seq + 1, seq + 2, seq + 3, seq + 4, seq + 5, seq + 6, seq + 7, seq + 8, seq + 9, " +
			"seq + 10, seq + 11, seq + 12 FROM lzs.seq_1_to_6000",
	} {
		mustExecC(t, root, q)
	}
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "UPDATE vars SET n = -1 WHERE id = 1")
	if !lazyFilling(t, c, "lzs.vars") {
		t.Log("the fork is whole already: only the fill was checked")
	}
	for id := 2000; lazyFilling(t, c, "lzs.vars") && id < 6000; id += 500 {
		mustExecC(t, c, fmt.Sprintf("UPDATE vars SET n = n WHERE id = %d", id)) // a copy-up, from the staging table once it holds the key
	}
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(n), '/', SUM(lo), '/', SUM(c), '/', SUM(got), '/', SUM(step), '/', SUM(budget), '/', " +
		"SUM(done), '/', SUM(t0), '/', SUM(staged), '/', SUM(sqlfork_k), '/', SUM(sqlfork_hi), '/', SUM(sqlfork_lo)) FROM "
	want := direct(sum + "lzs.vars WHERE id > 1")
	if got := queryString(t, c, sum+"vars WHERE id > 1"); got != want {
		t.Errorf("the fork: %s, production: %s", got, want)
	}
}

// TestLazyForkBesideForeignKeys: foreign keys between other tables of the
// server do not make a table's fork whole, and a key the sandbox then
// adds to the filling fork checks rows it has not copied yet as a copy's
// would.
func TestLazyForkBesideForeignKeys(t *testing.T) {
	h, direct := lazyEnv(t, 30000, 2000)
	root := openDB(t, h.db.DSN(""))
	for _, q := range []string{
		"DROP DATABASE IF EXISTS lzs_fk", "CREATE DATABASE lzs_fk",
		"CREATE TABLE lzs_fk.p (id INT PRIMARY KEY)",
		"CREATE TABLE lzs_fk.c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES lzs_fk.p (id))",
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { mustExecC(t, root, "DROP DATABASE IF EXISTS lzs_fk") })
	c := conn(t, openDB(t, h.dsn("lzs")))
	lazy := map[string]string{"strategy": "lazy", "kind": "full"}
	before := h.metric(t, "sqlfork_forks_total", lazy)
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if got := h.metric(t, "sqlfork_forks_total", lazy); got != before+1 {
		t.Fatalf("lazy forks: %v, want %v: a foreign key between other tables made the fork whole", got, before+1)
	}
	if !lazyFilling(t, c, "lzs.t") {
		t.Log("the fork is whole already: the key below checks a whole fork")
	}
	mustExecC(t, c, "CREATE TABLE kids (id INT PRIMARY KEY, t INT, FOREIGN KEY (t) REFERENCES t (id))")
	mustExecC(t, c, "INSERT INTO kids VALUES (1, 29000), (2, 7)")
	for q, want := range map[string]uint16{"INSERT INTO kids VALUES (3, 30001)": 1452, "DELETE FROM t WHERE id = 29000": 1451} {
		if _, err := c.ExecContext(context.Background(), q); mysqlErrCode(err) != want {
			t.Errorf("%s: %v, want error %d", q, err, want)
		}
	}
	wantString(t, c, "SELECT COUNT(*) FROM t JOIN kids ON kids.t = t.id", "2", "joined rows: %s")
	if got := direct("SELECT COUNT(*) FROM lzs.t"); got != "30000" {
		t.Errorf("production's rows: %s", got)
	}
}

// TestLazyForkThroughView: a production view over a table whose fork
// still fills reads the whole fork, as on a copy: the statement names only
// the view, and waits for the fill of the table the view reads.
func TestLazyForkThroughView(t *testing.T) {
	h, _ := lazyEnv(t, 30000, 2000)
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "CREATE OR REPLACE ALGORITHM = TEMPTABLE VIEW lzs.vsum AS SELECT v, COUNT(*) AS n FROM lzs.t GROUP BY v")
	mustExecC(t, root, "CREATE OR REPLACE VIEW lzs.vall AS SELECT id, v FROM lzs.t")
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if !lazyFilling(t, c, "lzs.t") {
		t.Log("the fork is whole already: the views read a whole fork")
	}
	wantString(t, c, "SELECT n FROM vsum WHERE v = 1", "300", "rows of v = 1 through a TEMPTABLE view: %s")
	wantString(t, c, "SELECT CONCAT(COUNT(*), '/', SUM(v = 1000)) FROM vall", "30000/1", "rows through a view: %s")
}
