package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// replaySchema is the production database of TestFidelityReplay (fidr),
// and of the direct copy each case starts from (fidr_direct).
const replaySchema = `
CREATE TABLE a (id INT PRIMARY KEY, v INT, s VARCHAR(64), d DECIMAL(20,10));
CREATE TABLE b (id INT PRIMARY KEY, v INT);
CREATE TABLE c (id INT PRIMARY KEY, v INT);
CREATE TABLE ts (id INT PRIMARY KEY, at TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6));
CREATE SEQUENCE fseq;
INSERT INTO a VALUES (1, 1, 'x', 0), (2, 2, 'y', 0), (3, 3, 'z', 0);
INSERT INTO b VALUES (1, 10), (2, 20);
INSERT INTO c VALUES (1, 100), (2, 200)`

// replayStep is one statement of a fidelity case, on the case's first or
// second connection; same, when not 0, names an earlier step (1-based)
// whose outcome this one must equal, and kept marks such a step, whose
// value no two runs share (UUID(), the clock) and the transcript leaves
// out.
type replayStep struct {
	conn int
	sql  string
	same int
	kept bool
}

func rp1(sql string) replayStep           { return replayStep{conn: 1, sql: sql} }
func rp2(sql string) replayStep           { return replayStep{conn: 2, sql: sql} }
func rpSame(k int, sql string) replayStep { return replayStep{conn: 1, sql: sql, same: k} }
func rpKept(sql string) replayStep        { return replayStep{conn: 1, sql: sql, kept: true} }

// rpForkB is the second connection's write that forks b into the shared
// sandbox while the first one's transaction is open, changing no row.
var rpForkB = rp2("UPDATE b SET v = v WHERE 1 = 0")

// TestFidelityReplay runs transactions that meet a table forked after they
// took their snapshot — so the proxy restarts or replays them — through a
// sandbox shared by two connections and, statement by statement, on two
// direct connections to a copy of the database, and requires the same
// rows, errors, affected rows and warnings on both, and production
// unchanged. A transaction whose replay could have another effect (user
// variables, UUID(), RAND(), sequences, column defaults that read the
// clock, a server variable set after writing) must be refused with 1412;
// the client then rolls back and runs it again, and the direct side does
// the same at the same point. A restarted transaction keeps its READ ONLY,
// isolation level and snapshot.
func TestFidelityReplay(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	if _, err := root.Exec("DROP DATABASE IF EXISTS fidr; CREATE DATABASE fidr; USE fidr;" + replaySchema +
		"; GRANT SELECT ON fidr.* TO '" + sandboxUser + "'@'%'"); err != nil {
		t.Fatal(err)
	}
	before := replayProduction(t, root)
	cases := []struct {
		name    string
		steps   []replayStep
		refused string // the proxy must refuse the replay with 1412 saying this
	}{
		{name: "replayed", steps: []replayStep{rp1("BEGIN"), rp1("UPDATE a SET v = v + 1 WHERE id = 1"), rp1("SELECT * FROM a"), rpForkB,
			rp1("SELECT * FROM b"), rp1("SELECT * FROM a"), rp1("COMMIT")}},
		{name: "begin-work-replayed", steps: []replayStep{rp1("BEGIN WORK"), rp1("INSERT INTO c VALUES (3, 300)"), rp1("SELECT * FROM c"), rpForkB,
			rp1("SELECT * FROM b"), rp1("SELECT * FROM c"), rp1("COMMIT")}},
		{name: "user-variable-counter", refused: "user variable @n", steps: []replayStep{rp1("SET @n = 0"), rp1("BEGIN"),
			rp1("UPDATE a SET v = 10 + (@n := @n + 1) WHERE id = 1"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("SELECT @n"),
			rp1("SELECT * FROM a"), rp1("COMMIT")}},
		{name: "user-variable-read", refused: "user variable @x", steps: []replayStep{rp1("SET @x = 5"), rp1("BEGIN"), rp1("UPDATE a SET v = @x WHERE id = 2"),
			rp1("SET @x = 7"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("SELECT * FROM a"), rp1("COMMIT")}},
		{name: "uuid", refused: "UUID()", steps: []replayStep{rp1("BEGIN"), rp1("INSERT INTO a (id, s) VALUES (10, UUID())"),
			rpKept("SELECT s FROM a WHERE id = 10"), rpForkB, rp1("SELECT * FROM b"), rpSame(3, "SELECT s FROM a WHERE id = 10"), rp1("COMMIT")}},
		{name: "rand", refused: "RAND()", steps: []replayStep{rp1("BEGIN"), rp1("UPDATE a SET d = RAND() WHERE id = 3"),
			rpKept("SELECT d FROM a WHERE id = 3"), rpForkB, rp1("SELECT * FROM b"), rpSame(3, "SELECT d FROM a WHERE id = 3"), rp1("COMMIT")}},
		{name: "sequence-nextval", refused: "NEXTVAL()", steps: []replayStep{rp1("BEGIN"), rp1("INSERT INTO a (id, v) VALUES (20, NEXTVAL(fseq))"),
			rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("SELECT * FROM a"), rp1("SELECT NEXTVAL(fseq)"), rp1("COMMIT")}},
		{name: "default-nextval", refused: "defaults to nextval(`fidr`.`fseq`)", steps: []replayStep{rp1("CREATE TABLE sq (id INT PRIMARY KEY, n INT DEFAULT NEXTVAL(fseq))"),
			rp1("BEGIN"), rp1("INSERT INTO sq (id) VALUES (1)"), rp1("SELECT * FROM sq"), rpForkB, rp1("SELECT * FROM b"), rp1("SELECT * FROM sq"),
			rp1("COMMIT"), rp1("SELECT * FROM sq")}},
		{name: "default-current-timestamp", refused: "current_timestamp(", steps: []replayStep{rp1("BEGIN"), rp1("INSERT INTO ts (id) VALUES (1)"),
			rpKept("SELECT at FROM ts WHERE id = 1"), rpForkB, rp1("SELECT * FROM b"), rpSame(3, "SELECT at FROM ts WHERE id = 1"), rp1("COMMIT")}},
		{name: "variable-set-after-write", refused: "@@div_precision_increment", steps: []replayStep{rp1("BEGIN"), rp1("UPDATE a SET d = 1 / 3 WHERE id = 1"),
			rp1("SET div_precision_increment = 8"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("SELECT d FROM a WHERE id = 1"),
			rp1("COMMIT")}},
		{name: "row-count-after-replay", refused: "ROW_COUNT()", steps: []replayStep{rp1("BEGIN"), rp1("UPDATE c SET v = v + 1 WHERE id = 1"),
			rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM c"), rp1("SELECT ROW_COUNT(), v FROM b WHERE id = 1"), rp1("COMMIT")}},
		{name: "chained-read-only-restart", steps: []replayStep{rp1("START TRANSACTION READ ONLY"), rp1("SELECT * FROM a"),
			rp1("COMMIT AND CHAIN"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("UPDATE c SET v = 1 WHERE id = 1"), rp1("COMMIT")}},
		{name: "read-only-restart", steps: []replayStep{rp1("START TRANSACTION READ ONLY"), rp1("SELECT * FROM a"), rpForkB,
			rp1("SELECT * FROM b"), rp1("UPDATE c SET v = 1 WHERE id = 1"), rp1("SELECT * FROM c"), rp1("COMMIT")}},
		{name: "read-write-in-read-only-session-restart", steps: []replayStep{rp1("SET SESSION TRANSACTION READ ONLY"),
			rp1("START TRANSACTION READ WRITE"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("UPDATE c SET v = 1 WHERE id = 1"),
			rp1("COMMIT"), rp1("UPDATE c SET v = 2 WHERE id = 1"), rp1("SET SESSION TRANSACTION READ WRITE")}},
		{name: "set-transaction-read-only-restart", steps: []replayStep{rp1("SET TRANSACTION READ ONLY"), rp1("SELECT 1"),
			rp1("START TRANSACTION"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp1("UPDATE c SET v = 1 WHERE id = 1"), rp1("COMMIT"),
			rp1("UPDATE c SET v = 2 WHERE id = 1"), rp1("SET TRANSACTION READ ONLY"), rp1("SELECT * FROM c"), rp1("START TRANSACTION"),
			rp1("SELECT * FROM a"), rp2("UPDATE c SET v = v WHERE 1 = 0"), rp1("UPDATE c SET v = 3 WHERE id = 1"), rp1("COMMIT")}},
		// The session at READ COMMITTED (whose transactions keep no read
		// view: nothing to restart), the one transaction at REPEATABLE
		// READ: a restart starts it again at that level.
		{name: "isolation-one-shot-restart", steps: []replayStep{rp1("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
			rp1("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"), rp1("BEGIN"),
			rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp2("UPDATE b SET v = 99 WHERE id = 2"), rp1("SELECT * FROM b"), rp1("COMMIT")}},
		{name: "isolation-one-shot-replay", steps: []replayStep{rp1("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"),
			rp1("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"), rp1("BEGIN"),
			rp1("UPDATE c SET v = v + 1 WHERE id = 1"), rp1("SELECT * FROM a"), rpForkB, rp1("SELECT * FROM b"), rp2("UPDATE b SET v = 99 WHERE id = 2"),
			rp1("SELECT * FROM b"), rp1("COMMIT")}},
		{name: "session-isolation-set-inside-restart", steps: []replayStep{rp1("BEGIN"), rp1("SELECT * FROM a"),
			rp1("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"), rpForkB, rp1("SELECT * FROM b"), rp2("UPDATE b SET v = 99 WHERE id = 2"),
			rp1("SELECT * FROM b"), rp1("COMMIT"), rp2("UPDATE b SET v = 98 WHERE id = 2"), rp1("SELECT * FROM b")}},
		{name: "consistent-snapshot-restart-at-write", steps: []replayStep{rp2("UPDATE c SET v = v WHERE 1 = 0"),
			rp1("START TRANSACTION WITH CONSISTENT SNAPSHOT"), rpForkB, rp1("UPDATE b SET v = 5 WHERE id = 1"), rp2("UPDATE c SET v = 77 WHERE id = 1"),
			rp1("SELECT * FROM c"), rp1("COMMIT"), rp1("SELECT * FROM c")}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := root.Exec("DROP DATABASE IF EXISTS fidr_direct; CREATE DATABASE fidr_direct; USE fidr_direct;" + replaySchema); err != nil {
				t.Fatal(err)
			}
			pool := openDB(t, h.userDSN(fmt.Sprintf("%s+fidr%d", sandboxUser, i), "fidr"))
			direct := openDB(t, directDSN(db, "fidr_direct"))
			sand := [2]*sql.Conn{conn(t, pool), conn(t, pool)}
			dir := [2]*sql.Conn{conn(t, direct), conn(t, direct)}
			was := restarts(t, h)
			got, want, refused := replayRun(t, c.steps, sand, dir)
			if got != want {
				t.Errorf("through the sandbox:\n%s\ndirectly:\n%s", got, want)
			}
			// With lazy forks (SQLFORK_TEST_LAZY_FORK_ROWS), a statement
			// that needs a fork whole may replay the transaction earlier
			// than a copy would, so a later one needs none: the answers,
			// compared above, are what counts then.
			lazy := os.Getenv("SQLFORK_TEST_LAZY_FORK_ROWS") != "" && refused == ""
			if c.refused == "" && refused != "" || c.refused != "" && !lazy && !strings.Contains(refused, c.refused) {
				t.Errorf("refused with %q, want %q:\n%s", refused, c.refused, got)
			}
			now := restarts(t, h)
			if now["replayed"]+now["restarted"]+now["refused"] == was["replayed"]+was["restarted"]+was["refused"] {
				t.Errorf("the transaction was neither restarted, replayed nor refused (%v): the case tests nothing", now)
			}
			if w, g := replayDump(t, dir[0]), replayDump(t, sand[0]); w != g {
				t.Errorf("final tables differ:\n direct:  %s\n sandbox: %s", w, g)
			}
		})
	}
	if after := replayProduction(t, root); after != before {
		t.Errorf("production changed:\n before: %s\n after:  %s", before, after)
	}
}

// replayRun runs steps on the sandbox's connections and the direct ones in
// turn and returns both transcripts, and the sandbox's refusal ("" for
// none). When the sandbox refuses a statement with 1412 the client's retry
// follows on both sides: the statement is not run directly, both
// connections roll back and every step runs again.
func replayRun(t *testing.T, steps []replayStep, sand, dir [2]*sql.Conn) (got, want, refused string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var g, w []string
	// With lazy forks (SQLFORK_TEST_LAZY_FORK_ROWS) a transaction that
	// cannot be replayed and needs whole a fork it wrote while it filled
	// gets 1412 earlier than on a copy (docs/SANDBOXES.md), and then may
	// meet, once, the refusal a copy gives it.
	retries := 1
	if os.Getenv("SQLFORK_TEST_LAZY_FORK_ROWS") != "" {
		retries = 2
	}
	for attempt := 0; attempt <= retries; attempt++ {
		var gOut, wOut []string
		retry := false
		for i, st := range steps {
			so := replayOutcome(ctx, sand[st.conn-1], st, gOut)
			if strings.HasPrefix(so, "error 1412 ") {
				if attempt == retries || !strings.Contains(so, "retry") {
					g = append(g, fmt.Sprintf("%d: %s", i+1, so))
					break
				}
				refused, retry = so, true
				_, _ = sand[0].ExecContext(ctx, "ROLLBACK")
				_, _ = dir[0].ExecContext(ctx, "ROLLBACK")
				g, w = append(g, "refused; ROLLBACK and again"), append(w, "refused; ROLLBACK and again")
				break
			}
			do := strings.ReplaceAll(replayOutcome(ctx, dir[st.conn-1], st, wOut), "fidr_direct", "fidr")
			gOut, wOut = append(gOut, so), append(wOut, do)
			g = append(g, fmt.Sprintf("%d: %s %s", i+1, st.sql, replayShown(st, gOut)))
			w = append(w, fmt.Sprintf("%d: %s %s", i+1, st.sql, replayShown(st, wOut)))
		}
		if !retry {
			break
		}
	}
	return strings.Join(g, "\n"), strings.Join(w, "\n"), refused
}

// replayOutcome runs a step and says what it did, with the warnings it
// left; outs are the outcomes of the attempt's earlier steps.
func replayOutcome(ctx context.Context, c *sql.Conn, st replayStep, outs []string) string {
	up := strings.ToUpper(st.sql)
	out := diffOutcome(ctx, c, st.sql, nil, strings.HasPrefix(up, "SELECT") || strings.HasPrefix(up, "SHOW"))
	if strings.HasPrefix(out, "error ") {
		return out
	}
	return out + " warnings=" + diffOutcome(ctx, c, "SHOW WARNINGS", nil, true)
}

// replayShown is what the transcript shows of a step's outcome (the last
// of outs): for a step that must repeat an earlier one's value, whether it
// did.
func replayShown(st replayStep, outs []string) string {
	switch {
	case st.kept:
		return "(kept)"
	case st.same == 0:
		return outs[len(outs)-1]
	}
	return fmt.Sprintf("same as step %d: %v", st.same, st.same <= len(outs) && outs[len(outs)-1] == outs[st.same-1])
}

// replayDump is the rows of the case's tables as c sees them, without the
// columns that hold random values and the clock (the steps compare those).
func replayDump(t *testing.T, c *sql.Conn) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, q := range []string{"SELECT id, v FROM a ORDER BY id", "SELECT * FROM b ORDER BY id", "SELECT * FROM c ORDER BY id",
		"SELECT id FROM ts ORDER BY id", "SELECT next_not_cached_value FROM fseq"} {
		b.WriteString(diffOutcome(ctx, c, q, nil, true) + "; ")
	}
	return b.String()
}

// replayProduction is production's state: the checksums of fidr's tables
// and its sequence's state.
func replayProduction(t *testing.T, root *sql.DB) string {
	t.Helper()
	var b strings.Builder
	for _, tbl := range []string{"a", "b", "c", "ts"} {
		var name string
		var sum sql.NullInt64
		if err := root.QueryRow("CHECKSUM TABLE fidr."+tbl).Scan(&name, &sum); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s=%d ", tbl, sum.Int64)
	}
	var next string
	if err := root.QueryRow("SELECT next_not_cached_value FROM fidr.fseq").Scan(&next); err != nil {
		t.Fatal(err)
	}
	return b.String() + "fseq=" + next
}
