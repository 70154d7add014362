package integration

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// Transactions on lazy forks still filling (session/txfill.go): the first
// write in a transaction forks lazily, and its statements copy their rows
// up inside the transaction instead of waiting for the fill.

// TestLazyForkTransactions runs random transactions — BEGIN or autocommit
// off, REPEATABLE READ or READ COMMITTED, committed or rolled back, some
// taking their read view on another table first — of point statements in
// a sandbox while its lazy fork fills and production changes, with
// autocommit statements between them, and the same on a copy made at the
// fork: every answer is the copy's, none waited for the fill (it is still
// filling at the end), and a last transaction's statement that needs the
// whole fork is answered after the fill, its transaction replayed.
func TestLazyForkTransactions(t *testing.T) {
	const n = 100000
	h, direct := lazyEnv(t, n, 1000) // a fill of about 100 s: lifted at the end
	root, sb, ref := lazyReference(t, h)
	mustExecC(t, root, "CREATE TABLE lzs.small (id INT PRIMARY KEY)")
	mustExecC(t, root, "INSERT INTO lzs.small VALUES (1), (2)")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	ctx := context.Background()
	i := 0
	both := func(q string) {
		t.Helper()
		i++
		got, want := runBoth(ctx, sb, q), runBoth(ctx, ref, toRef(q))
		if got != want {
			t.Fatalf("statement %d %q:\n sandbox: %s\n    copy: %s", i, q, got, want)
		}
	}
	lazy := map[string]string{"strategy": "lazy", "kind": "full"}
	forks := h.metric(t, "sqlfork_forks_total", lazy)
	for _, q := range []string{"BEGIN", "SELECT id, v FROM t WHERE id = 3", "UPDATE t SET s = 'first' WHERE id = 1", "COMMIT"} {
		both(q)
	}
	if got := h.metric(t, "sqlfork_forks_total", lazy); got != forks+1 {
		t.Fatalf("lazy forks: %v, want %v: the first write in a transaction was not forked lazily", got, forks+1)
	}
	stop := make(chan struct{})
	prodDone := make(chan error, 1)
	go func() { prodDone <- productionWrites(root, n, stop) }()
	for g := 0; g < 60; g++ {
		lazyTransaction(rng, n, both)
	}
	close(stop)
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}
	if !lazyFilling(t, sb, "lzs.t") {
		t.Fatal("the fork is whole already: a statement waited for the fill, or the fill ran faster than its rate")
	}
	// Transactions on keys the fill has staged (and on some it has not):
	// their rows are read from the staging table.
	name := rowsOf(t, sb, "SANDBOX STATUS")[0][1]
	for filledRows(t, h, name) < 2000 {
		time.Sleep(50 * time.Millisecond)
	}
	for _, k := range []int{1500, 1700, 1900, n - 5} {
		for _, q := range []string{"BEGIN", fmt.Sprintf("UPDATE t SET s = 'staged' WHERE id IN (%d, %d)", k, k+1),
			fmt.Sprintf("SELECT id, v, s FROM t WHERE id IN (%d, %d, %d) ORDER BY id", k-1, k, k+1), "COMMIT"} {
			both(q)
		}
	}
	ups := map[string]int64{}
	copiedUp(t, h, name, ups)
	restarts := func(o string) float64 {
		return h.metric(t, "sqlfork_sandbox_transaction_restarts_total", map[string]string{"outcome": o})
	}
	t.Logf("copy-ups %v; transactions restarted %v, replayed %v", ups, restarts("restarted"), restarts("replayed"))
	if ups["transaction"] == 0 || ups["snapshot"]+ups["staging"] == 0 {
		t.Errorf("copy-ups %v: want some inside transactions and some outside", ups)
	}
	if ups["transaction_staging"] == 0 || ups["transaction_staging"] == ups["transaction"] {
		t.Errorf("copy-ups %v: want some inside transactions read from the staging table and some from the snapshot", ups)
	}
	// A statement no copy-up bounds, in a transaction that copied rows up:
	// the transaction is rolled back, the fill waited for, and replayed.
	replays := restarts("replayed")
	h.setFillRate(0)
	for _, q := range []string{"BEGIN", "UPDATE t SET v = v + 5 WHERE id = 11", "SELECT COUNT(*), SUM(v) FROM t WHERE v > -100",
		"UPDATE t SET v = v + 5 WHERE id = 12", "SELECT id, v FROM t WHERE id IN (11, 12) ORDER BY id", "COMMIT"} {
		both(q)
	}
	if got := restarts("replayed"); got <= replays {
		t.Errorf("replays %v, then %v: the statement needing the whole fork did not replay its transaction", replays, got)
	}
	if lazyFilling(t, sb, "lzs.t") {
		t.Error("the fork still fills after a statement that needed it whole")
	}
	checkLazyAgainstRef(t, sb, direct)
}

// lazyTransaction runs one random transaction through both, then a few
// autocommit statements.
func lazyTransaction(rng *rand.Rand, n int, both func(string)) {
	both("SET SESSION TRANSACTION ISOLATION LEVEL " + []string{"REPEATABLE READ", "READ COMMITTED"}[rng.Intn(2)])
	off := rng.Intn(3) == 0
	if off {
		both("SET autocommit = 0")
	} else {
		both("BEGIN")
	}
	if rng.Intn(3) == 0 {
		both("SELECT COUNT(*) FROM small WHERE id > 0") // a read view taken before the fork's rows are copied up
	}
	for k := 1 + rng.Intn(6); k > 0; k-- {
		both(lazyStatement(rng, n))
	}
	both([]string{"COMMIT", "ROLLBACK"}[rng.Intn(2)])
	if off {
		both("SET autocommit = 1")
	}
	for k := rng.Intn(3); k > 0; k-- {
		both(lazyStatement(rng, n))
	}
}

// TestLazyForkTransactionsShared: two connections of one sandbox on a
// fork still filling. One's open transaction holds the fork: the other's
// statements on it run once that one ends, and see its changes; the fill's
// end waits for a transaction left open, and a statement needing the
// whole fork waits with it.
func TestLazyForkTransactionsShared(t *testing.T) {
	const n = 30000
	h, direct := lazyEnv(t, n, 500)
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "CREATE TABLE lzs.small (id INT PRIMARY KEY)")
	mustExecC(t, root, "INSERT INTO lzs.small VALUES (1), (2)")
	ctx := context.Background()
	conn := func() *sql.Conn {
		c, err := openDB(t, h.dsn("lzs")).Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, b := conn(), conn()
	mustExecC(t, a, "SANDBOX CREATE lztx")
	mustExecC(t, b, "SANDBOX ATTACH lztx")
	mustExecC(t, a, "UPDATE t SET v = 1 WHERE id = 1") // forks t lazily
	// A read view taken before another connection copied a row up does
	// not see it: the transaction is restarted before it holds the fork.
	mustExecC(t, a, "BEGIN")
	wantString(t, a, "SELECT COUNT(*) FROM lzs.small", "2", "a read view on another table: %s")
	wantString(t, b, "SELECT v FROM t WHERE id = 20", "20", "row 20: %s")
	wantString(t, a, "SELECT v FROM t WHERE id = 20", "20", "row 20 in a transaction whose read view is older than its copy-up: %q")
	mustExecC(t, a, "COMMIT")
	mustExecC(t, a, "BEGIN")
	mustExecC(t, a, "UPDATE t SET v = 100 WHERE id = 5")
	if !lazyFilling(t, b, "lzs.t") {
		t.Fatal("the fork is not filling")
	}
	done := make(chan error, 1)
	go func() {
		_, err := b.ExecContext(ctx, "UPDATE t SET v = v + 1 WHERE id IN (5, 6)")
		done <- err
	}()
	wantString(t, a, "SELECT v FROM t WHERE id = 6", "6", "row 6 inside the transaction: %s")
	mustExecC(t, a, "COMMIT")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (5, 6)", "101,7", "rows 5 and 6: %s")
	// A transaction left open holds the fill's end: the count waits.
	mustExecC(t, a, "BEGIN")
	mustExecC(t, a, "DELETE FROM t WHERE id = 9")
	h.setFillRate(0)
	testkit.Eventually(t, "the fill to wait for the transaction", func() bool { return fillWaitingOn(t, b, "lzs.t") })
	counted := make(chan string, 1)
	go func() {
		var s string
		if err := b.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&s); err != nil {
			s = err.Error()
		}
		counted <- s
	}()
	mustExecC(t, a, fmt.Sprintf("INSERT INTO t (id, v, s, u) VALUES (%d, 1, 'a', 'ua')", n+1))
	mustExecC(t, a, "COMMIT")
	if got := <-counted; got != fmt.Sprint(n) {
		t.Errorf("count after the fill: %s, want %d (one row deleted, one added)", got, n)
	}
	if lazyFilling(t, a, "lzs.t") {
		t.Error("the fork still fills")
	}
	if got := direct("SELECT COUNT(*) FROM lzs.t"); got != fmt.Sprint(n) {
		t.Errorf("production's rows: %s", got)
	}
}

// TestLazyForkTransactionReplayed: a transaction that copied rows up
// inside it and then meets a table forked after its read view is replayed,
// its copy-ups made again first: its writes have the same effect.
func TestLazyForkTransactionReplayed(t *testing.T) {
	h, direct := lazyEnv(t, 30000, 500)
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "CREATE TABLE lzs.x (id INT PRIMARY KEY, v INT)")
	mustExecC(t, root, "INSERT INTO lzs.x VALUES (1, 1), (2, 2)")
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "UPDATE t SET v = 0 WHERE id = 1") // forks t lazily
	mustExecC(t, c, "BEGIN")
	wantString(t, c, "SELECT v FROM x WHERE id = 1", "1", "production's x: %s") // the transaction's read view
	mustExecC(t, c, "UPDATE t SET v = 500 WHERE id = 5")
	replays := h.metric(t, "sqlfork_sandbox_transaction_restarts_total", map[string]string{"outcome": "replayed"})
	mustExecC(t, c, "UPDATE x SET v = 10 WHERE id = 2") // forks x after the read view
	if got := h.metric(t, "sqlfork_sandbox_transaction_restarts_total", map[string]string{"outcome": "replayed"}); got != replays+1 {
		t.Errorf("replays %v, then %v: want one", replays, got)
	}
	wantString(t, c, "SELECT v FROM t WHERE id = 5", "500", "row 5 after the replay: %s")
	wantString(t, c, "SELECT v FROM x WHERE id = 2", "10", "x's row 2 after the replay: %s")
	mustExecC(t, c, "COMMIT")
	if !lazyFilling(t, c, "lzs.t") {
		t.Error("the fork of t no longer fills: the replay waited for it")
	}
	wantString(t, c, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (1, 5)", "0,500", "rows 1 and 5: %s")
	if got := direct("SELECT GROUP_CONCAT(v ORDER BY id) FROM lzs.t WHERE id IN (1, 5)"); got != "1,5" {
		t.Errorf("production's rows 1 and 5: %s", got)
	}
}

// TestLazyForkTransactionsCrossed: two transactions of one sandbox each
// hold the fill of one table, whose copies then complete (their ends wait
// for the holders), and each then writes the other's table. Neither waits
// for the other's fill while holding its own: the one that finds the other
// table held rolls back, lets its fill go and replays after, so both
// answer and both fills end.
func TestLazyForkTransactionsCrossed(t *testing.T) {
	h, _ := lazyEnv(t, 3000, 300)
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "CREATE TABLE lzs.x LIKE lzs.t")
	mustExecC(t, root, "INSERT INTO lzs.x SELECT * FROM lzs.t")
	ctx := context.Background()
	a, b := conn(t, openDB(t, h.dsn("lzs"))), conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, a, "SANDBOX CREATE lzx")
	mustExecC(t, b, "SANDBOX ATTACH lzx")
	mustExecC(t, a, "UPDATE t SET v = -1 WHERE id = 1")
	mustExecC(t, b, "UPDATE x SET v = -1 WHERE id = 1")
	mustExecC(t, a, "BEGIN")
	mustExecC(t, a, "UPDATE t SET v = 100 WHERE id = 2")
	mustExecC(t, b, "BEGIN")
	mustExecC(t, b, "UPDATE x SET v = 100 WHERE id = 2")
	if !lazyFilling(t, root2(t, h), "lzs.t") {
		t.Fatal("t is not filling")
	}
	h.setFillRate(0)
	sb := root2(t, h)
	testkit.Eventually(t, "both fills to wait for their holders", func() bool {
		return fillWaitingOn(t, sb, "lzs.t") && fillWaitingOn(t, sb, "lzs.x")
	})
	done := make(chan string, 2)
	go func() {
		done <- "a: " + runBoth(ctx, a, "UPDATE x SET v = v + 1 WHERE id = 3") + ", " + runBoth(ctx, a, "COMMIT")
	}()
	go func() {
		done <- "b: " + runBoth(ctx, b, "UPDATE t SET v = v + 1 WHERE id = 3") + ", " + runBoth(ctx, b, "COMMIT")
	}()
	for range 2 {
		select {
		case got := <-done:
			if !strings.HasSuffix(got, "affected 1, id 0, affected 0, id 0") {
				t.Errorf("%s", got)
			}
		case <-time.After(testkit.WaitLimit):
			t.Fatal("the crossed transactions wait for each other's fills")
		}
	}
	wantString(t, a, "SELECT CONCAT((SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id <= 3), '/', "+
		"(SELECT GROUP_CONCAT(v ORDER BY id) FROM x WHERE id <= 3))", "-1,100,4/-1,100,4", "t and x: %s")
}

// root2 is a connection attached to sandbox lzx, for SANDBOX STATUS.
func root2(t *testing.T, h *proxyHandle) *sql.Conn {
	t.Helper()
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "SANDBOX ATTACH lzx")
	return c
}

// fillWaitingOn says whether the fill of table waits for a transaction to
// end (its copy complete), as SANDBOX STATUS on c shows it.
func fillWaitingOn(t *testing.T, c *sql.Conn, table string) bool {
	t.Helper()
	return strings.Contains(tableStateOf(t, c, table), "waiting for a transaction")
}

// TestLazyForkTransactionsLinked: an autocommit input of two statements
// on two filling forks, one held by another connection's transaction, does
// not keep the other fork marked while it waits (the holder then takes
// that one's hold); and a transaction holding a fill writes a table whose
// production trigger writes the filling one: the fork linked to it waits
// for that fill, which the transaction lets go first (rolled back, waited
// for, replayed) instead of waiting for itself.
func TestLazyForkTransactionsLinked(t *testing.T) {
	h, _ := lazyEnv(t, 3000, 300)
	root := openDB(t, h.db.DSN(""))
	for _, q := range []string{"CREATE TABLE lzs.x LIKE lzs.t", "INSERT INTO lzs.x SELECT * FROM lzs.t",
		"CREATE TABLE lzs.aud (id INT PRIMARY KEY, n INT)", "INSERT INTO lzs.aud VALUES (1, 0)",
		"CREATE TRIGGER lzs.aud_au AFTER UPDATE ON lzs.aud FOR EACH ROW UPDATE lzs.t SET v = v + 1000 WHERE id = NEW.id"} {
		mustExecC(t, root, q)
	}
	ctx := context.Background()
	a, b := conn(t, openDB(t, h.dsn("lzs", "multiStatements=true"))), conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, a, "SANDBOX CREATE lzl")
	mustExecC(t, b, "SANDBOX ATTACH lzl")
	mustExecC(t, a, "UPDATE t SET v = -1 WHERE id = 1")
	mustExecC(t, a, "UPDATE x SET v = -1 WHERE id = 1")
	mustExecC(t, b, "BEGIN")
	mustExecC(t, b, "UPDATE x SET v = 100 WHERE id = 2")
	done := make(chan string, 1)
	go func() { done <- runBoth(ctx, a, "UPDATE t SET v = 70 WHERE id = 7; UPDATE x SET v = 80 WHERE id = 8") }()
	time.Sleep(200 * time.Millisecond) // a waits for b's hold (not a bound: either order must answer)
	answered := make(chan string, 1)
	go func() { answered <- runBoth(ctx, b, "UPDATE t SET v = 30 WHERE id = 3") }()
	select {
	case got := <-answered:
		if got != "affected 1, id 0" {
			t.Errorf("b's UPDATE of t: %s", got)
		}
	case <-time.After(testkit.WaitLimit):
		t.Fatal("b's UPDATE of t waits behind a's input, which waits for b's hold of x")
	}
	mustExecC(t, b, "COMMIT")
	if got := <-done; got != "affected 1, id 0" {
		t.Errorf("a's input: %s", got)
	}
	// The trigger's table, forked in a transaction holding t's fill.
	mustExecC(t, b, "BEGIN")
	mustExecC(t, b, "UPDATE t SET v = 50 WHERE id = 5")
	fin := make(chan string, 1)
	go func() { fin <- runBoth(ctx, b, "UPDATE aud SET n = 1 WHERE id = 1") }()
	select {
	case got := <-fin:
		if got != "affected 1, id 0" {
			t.Errorf("the trigger table's UPDATE: %s", got)
		}
	case <-time.After(testkit.WaitLimit):
		t.Fatal("the transaction waits for the fill it holds")
	}
	mustExecC(t, b, "COMMIT")
	wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (1, 3, 5, 7)", "999,30,50,70", "t: %s")
	wantString(t, b, "SELECT v FROM x WHERE id = 8", "80", "x's row 8: %s")
}

// TestLazyForkUnreplayableTransaction: a transaction the proxy cannot
// replay (it set a server variable after writing) that has a read view
// copies rows up on a fork still filling, as one it can replay: waiting
// for the fill instead would end it under the view, and the statement
// would then need the replay it cannot make (1412 where a copy answers).
func TestLazyForkUnreplayableTransaction(t *testing.T) {
	h, direct := lazyEnv(t, 30000, 2000)
	root := openDB(t, h.db.DSN(""))
	mustExecC(t, root, "CREATE TABLE lzs.small (id INT PRIMARY KEY, v INT)")
	mustExecC(t, root, "INSERT INTO lzs.small VALUES (1, 1), (2, 2)")
	c := conn(t, openDB(t, h.dsn("lzs")))
	mustExecC(t, c, "UPDATE small SET v = 10 WHERE id = 1")
	for lazyFilling(t, c, "lzs.small") {
		time.Sleep(20 * time.Millisecond)
	}
	mustExecC(t, c, "UPDATE t SET v = 1000 WHERE id = 7")
	if !lazyFilling(t, c, "lzs.t") {
		t.Fatal("t is not filling")
	}
	for _, q := range []string{"BEGIN", "UPDATE small SET v = 11 WHERE id = 2", "SET SESSION div_precision_increment = 6"} {
		mustExecC(t, c, q)
	}
	wantString(t, c, "SELECT SUM(v) FROM small", "21", "small's rows: %s") // the read view
	mustExecC(t, c, "UPDATE t SET v = 5 WHERE id = 20000")
	wantString(t, c, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (7, 20000, 20001)", "1000,5,1", "rows of t: %s")
	mustExecC(t, c, "COMMIT")
	if !lazyFilling(t, c, "lzs.t") {
		t.Error("t no longer fills: the transaction's statements waited for its fill")
	}
	mustExecC(t, c, "SET SESSION div_precision_increment = DEFAULT")
	wantString(t, c, "SELECT GROUP_CONCAT(v ORDER BY id) FROM t WHERE id IN (7, 20000, 20001)", "1000,5,1", "rows of t after COMMIT: %s")
	if got := direct("SELECT v FROM lzs.t WHERE id = 20000"); got != "0" {
		t.Errorf("production's row 20000: v = %s", got)
	}
}
