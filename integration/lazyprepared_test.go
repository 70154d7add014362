package integration

import (
	"context"
	"database/sql"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLazyForkPrepared: a prepared statement (the driver's server-side
// prepare, as go-sql-driver, mysql2's execute and JDBC with
// useServerPrepStmts do) forks a big table lazily at its first write, and
// each execution while the fork fills has the rows its parameters pin
// copied up, without waiting for the fill. The answers, the whole fork and
// DIFF are a copy's.
func TestLazyForkPrepared(t *testing.T) {
	const n = 200000
	h, direct := lazyEnv(t, n, 1000) // 200 s of fill: no statement below may wait for it
	ctx := context.Background()
	root, sb, ref := lazyReference(t, h)
	before := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"})
	first := "UPDATE t SET s = ? WHERE id = ?"
	if got, want := runBoth(ctx, sb, first, "first", 1), runBoth(ctx, ref, toRef(first), "first", 1); got != want {
		t.Fatalf("%s: sandbox %s, copy %s", first, got, want)
	}
	if got := h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"}); got != before+1 {
		t.Fatalf("lazy forks: %v, want %v: a prepared first write forks lazily", got, before+1)
	}
	stop := make(chan struct{})
	prodDone := make(chan error, 1)
	go func() { prodDone <- productionWrites(root, n, stop) }()
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for i := 0; i < 300; i++ {
		q, args := parameterized(lazyStatement(rng, n), rng)
		if got, want := runBoth(ctx, sb, q, args...), runBoth(ctx, ref, toRef(q), args...); got != want {
			t.Fatalf("statement %d %q %v:\n sandbox: %s\n    copy: %s", i, q, args, got, want)
		}
	}
	preparedAgain(t, sb, ref, rng, n)
	close(stop)
	if err := <-prodDone; err != nil {
		t.Fatal(err)
	}
	// Had an execution waited for the fill, it would have ended: 200,000
	// rows at 1,000 a second.
	if !lazyFilling(t, sb, "lzs.t") {
		t.Fatal("the fork is whole already: an execution waited for its fill")
	}
	// A parameter the proxy does not read as a literal (a DOUBLE, NULL):
	// the execution waits for the fill, then runs on the whole fork; then
	// a string and bytes, on it too.
	h.setFillRate(0)
	for _, arg := range []any{5.0, nil, "u12", []byte("9")} {
		q := "SELECT id, v, s FROM t WHERE id = ?"
		if s, ok := arg.(string); ok && strings.HasPrefix(s, "u") {
			q = "SELECT id, v, s FROM t WHERE u = ?"
		}
		if got, want := runBoth(ctx, sb, q, arg), runBoth(ctx, ref, toRef(q), arg); got != want {
			t.Fatalf("%s with %v: sandbox %s, copy %s", q, arg, got, want)
		}
	}
	checkLazyAgainstRef(t, sb, direct)
	if lazyFilling(t, sb, "lzs.t") {
		t.Fatal("the fork still fills after a full scan")
	}
}

// lazyReference makes lzs.orig and lzs.ref, copies of lzs.t (lazyEnv) as
// made, and returns a root pool, a connection through h to lzs and a
// direct one to it.
func lazyReference(t *testing.T, h *proxyHandle) (root *sql.DB, sb, ref *sql.Conn) {
	t.Helper()
	root = openDB(t, h.db.DSN(""))
	for _, q := range []string{
		"CREATE TABLE lzs.orig LIKE lzs.t", "INSERT INTO lzs.orig SELECT * FROM lzs.t",
		"CREATE TABLE lzs.ref LIKE lzs.t", "INSERT INTO lzs.ref SELECT * FROM lzs.t",
	} {
		mustExecC(t, root, q)
	}
	ctx := context.Background()
	sb, err := openDB(t, h.dsn("lzs")).Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	if ref, err = root.Conn(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	mustExecC(t, ref, "USE lzs")
	return root, sb, ref
}

// checkLazyAgainstRef fails t unless the sandbox's t (through sb) holds
// what lzs.ref does, and SANDBOX DIFF SUMMARY counts what lzs.ref changed
// from lzs.orig.
func checkLazyAgainstRef(t *testing.T, sb *sql.Conn, direct func(string) string) {
	t.Helper()
	sum := "SELECT CONCAT(COUNT(*), '/', SUM(CRC32(CONCAT_WS('|', id, v, s, u)))) FROM "
	if got, want := queryString(t, sb, sum+"t"), direct(sum+"lzs.ref"); got != want {
		t.Fatalf("the fork: %s, the copy: %s", got, want)
	}
	counts := direct("SELECT CONCAT((SELECT COUNT(*) FROM lzs.ref r WHERE NOT EXISTS (SELECT 1 FROM lzs.orig o WHERE o.id = r.id)), '/', " +
		"(SELECT COUNT(*) FROM lzs.ref r JOIN lzs.orig o USING (id) WHERE NOT (r.v <=> o.v AND r.s <=> o.s AND r.u <=> o.u)), '/', " +
		"(SELECT COUNT(*) FROM lzs.orig o WHERE NOT EXISTS (SELECT 1 FROM lzs.ref r WHERE o.id = r.id)))")
	if rows := rowsOf(t, sb, "SANDBOX DIFF SUMMARY"); len(rows) != 1 || strings.Join(rows[0][2:5], "/") != counts {
		t.Errorf("DIFF SUMMARY %v, want inserted/updated/deleted %s", rows, counts)
	}
}

// preparedAgain executes statements prepared once, many times each, with
// random keys: each execution copies up the rows its parameters pin.
func preparedAgain(t *testing.T, sb, ref *sql.Conn, rng *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	for _, q := range []string{
		"SELECT id, v, s, u FROM t WHERE id = ?",
		"UPDATE t SET v = v + 7 WHERE id = ?",
		"SELECT id, v FROM t WHERE u = ?",
	} {
		ps, err := sb.PrepareContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := ref.PrepareContext(ctx, toRef(q))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 40; i++ {
			var arg any = 1 + rng.Int63n(int64(n))
			if strings.Contains(q, "u = ?") {
				arg = "u" + strconv.Itoa(1+rng.Intn(n))
			}
			var got, want string
			if strings.HasPrefix(q, "SELECT") {
				got, want = describeRows(ps.QueryContext(ctx, arg)), describeRows(pr.QueryContext(ctx, arg))
			} else {
				got, want = execDescribed(ps.ExecContext(ctx, arg)), execDescribed(pr.ExecContext(ctx, arg))
			}
			if got != want {
				t.Fatalf("%s with %v: sandbox %s, copy %s", q, arg, got, want)
			}
		}
		ps.Close()
		pr.Close()
	}
}

// execDescribed describes a statement's outcome as runBoth does.
func execDescribed(r sql.Result, err error) string {
	if err != nil {
		return "error " + mysqlErr(err)
	}
	a, _ := r.RowsAffected()
	id, _ := r.LastInsertId()
	return "affected " + strconv.FormatInt(a, 10) + ", id " + strconv.FormatInt(id, 10)
}

// literalRE finds the literals of lazyStatement's statements.
var literalRE = regexp.MustCompile(`'[^']*'|\b[0-9]+\b`)

// parameterized is q with its literals as placeholders, and their values:
// strings, and integers, sent as strings at times in a WHERE (the server
// compares them as numbers; an INSERT's string for an INT key is not a
// value the proxy reads as the key's: it would wait for the fill).
func parameterized(q string, rng *rand.Rand) (string, []any) {
	var args []any
	where := strings.Index(q, "WHERE")
	out := literalRE.ReplaceAllStringFunc(q, func(lit string) string {
		if strings.HasPrefix(lit, "'") {
			args = append(args, strings.Trim(lit, "'"))
			return "?"
		}
		v, _ := strconv.ParseInt(lit, 10, 64)
		if where >= 0 && rng.Intn(4) == 0 {
			args = append(args, lit)
		} else {
			args = append(args, v)
		}
		return "?"
	})
	return out, args
}

// toRef is q on the copy, lzs.ref, for t.
func toRef(q string) string {
	return strings.NewReplacer(" t ", " ref ").Replace(q)
}
