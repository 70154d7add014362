package integration

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// diffSchema is the production schema both sides start from.
const diffSchema = `
CREATE TABLE t0 (id INT AUTO_INCREMENT PRIMARY KEY, a INT NOT NULL, b VARCHAR(20), UNIQUE KEY (b));
CREATE TABLE t1 (id INT AUTO_INCREMENT PRIMARY KEY, t0_id INT, a INT NOT NULL DEFAULT 0, KEY (t0_id));
INSERT INTO t0 (a, b) VALUES (1,'x1'),(2,'x2'),(3,'x3'),(4,NULL);
INSERT INTO t1 (t0_id, a) VALUES (1,10),(2,20),(2,21),(9,90);`

// diffOutcome is what one statement did, as a comparable string.
func diffOutcome(ctx context.Context, c *sql.Conn, q string, args []any, query bool) string {
	if !query {
		r, err := c.ExecContext(ctx, q, args...)
		if err != nil {
			return errOutcome(err)
		}
		n, _ := r.RowsAffected()
		id, _ := r.LastInsertId()
		return fmt.Sprintf("ok affected=%d id=%d", n, id)
	}
	rows, err := c.QueryContext(ctx, q, args...)
	if err != nil {
		return errOutcome(err)
	}
	return rowsOutcome(rows)
}

// rowsOutcome is the outcome of a query's rows: the labels and rows of
// each result set (a CALL's answer has one for each SELECT or SHOW of the
// body, the next after "||"), or the error that ended them.
func rowsOutcome(rows *sql.Rows) string {
	defer rows.Close()
	var b strings.Builder
	for set := 0; ; set++ {
		if set > 0 {
			b.WriteString("||")
		}
		cols, _ := rows.Columns()
		b.WriteString(strings.Join(cols, ","))
		for rows.Next() {
			vals, err := scanStrings(rows)
			if err != nil {
				return "scan: " + err.Error()
			}
			b.WriteString("|" + strings.Join(nullText(vals), ","))
		}
		if !rows.NextResultSet() {
			break
		}
	}
	if err := rows.Err(); err != nil {
		return errOutcome(err)
	}
	return b.String()
}

func errOutcome(err error) string {
	if me, ok := err.(*mysql.MySQLError); ok {
		return fmt.Sprintf("error %d %s", me.Number, me.Message)
	}
	return "error " + err.Error()
}

// diffGen makes a seeded random workload over the tables it knows.
type diffGen struct {
	genState
	r      *rand.Rand
	tables []string // existing tables
}

// genState is what a workload generator keeps of its session: whether a
// transaction is open, and the counter naming the objects it makes.
type genState struct {
	inTx bool
	next int
}

// fresh is the name of a new object, prefix and the next number, added
// to names.
func (s *genState) fresh(prefix string, names *[]string) string {
	s.next++
	name := fmt.Sprintf("%s%d", prefix, s.next)
	*names = append(*names, name)
	return name
}

// txStep begins a transaction, or ends the open one with COMMIT or
// ROLLBACK at random.
func (s *genState) txStep(r *rand.Rand) diffStmt {
	if !s.inTx {
		s.inTx = true
		return diffStmt{sql: "BEGIN"}
	}
	s.inTx = false
	if r.Intn(2) == 0 {
		return diffStmt{sql: "COMMIT"}
	}
	return diffStmt{sql: "ROLLBACK"}
}

type diffStmt struct {
	sql     string
	args    []any
	query   bool
	prepare bool
}

func (g *diffGen) table() string { return g.tables[g.r.Intn(len(g.tables))] }

func (g *diffGen) next1() diffStmt {
	r := g.r
	if len(g.tables) == 0 {
		return g.createTable()
	}
	t := g.table()
	switch k := r.Intn(100); {
	case k < 18:
		if strings.HasPrefix(t, "t1") {
			return diffStmt{sql: "INSERT INTO " + t + " (t0_id, a) VALUES (?, ?)", args: []any{r.Intn(8), r.Intn(100)}, prepare: r.Intn(2) == 0}
		}
		return diffStmt{sql: "INSERT INTO " + t + " (a, b) VALUES (?, ?)", args: []any{r.Intn(100), fmt.Sprintf("v%d", r.Intn(30))}, prepare: r.Intn(2) == 0}
	case k < 30:
		return diffStmt{sql: fmt.Sprintf("UPDATE %s SET a = a + %d WHERE id %% %d = %d", t, r.Intn(5), 2+r.Intn(3), r.Intn(2))}
	case k < 38:
		return diffStmt{sql: fmt.Sprintf("DELETE FROM %s WHERE a > %d", t, 50+r.Intn(60))}
	case k < 52:
		return diffStmt{sql: "SELECT * FROM " + t + " WHERE a >= ? ORDER BY id", args: []any{r.Intn(50)}, query: true, prepare: r.Intn(2) == 0}
	case k < 58:
		return diffStmt{sql: "SELECT COUNT(*), SUM(a), MAX(id) FROM " + t, query: true}
	case k < 62:
		if g.has("t0") && g.has("t1") {
			return diffStmt{sql: "SELECT t0.id, t0.b, COUNT(t1.id) FROM t0 LEFT JOIN t1 ON t1.t0_id = t0.id GROUP BY t0.id, t0.b ORDER BY t0.id", query: true}
		}
		return diffStmt{sql: "SELECT 1", query: true}
	case k < 66:
		return diffStmt{sql: "SHOW TABLES", query: true}
	case k < 69:
		return diffStmt{sql: "SELECT table_name, table_rows IS NOT NULL FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1", query: true}
	case k < 72:
		return diffStmt{sql: "SELECT column_name, data_type, column_default FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = '" + t + "' ORDER BY ordinal_position", query: true}
	case k < 75:
		return diffStmt{sql: "DESCRIBE " + t, query: true}
	case k < 77:
		return diffStmt{sql: "SHOW CREATE TABLE " + t, query: true}
	case k < 84:
		return g.txStep(r)
	case k < 87:
		g.inTx = false // DDL commits
		return diffStmt{sql: fmt.Sprintf("ALTER TABLE %s ADD COLUMN c%d INT DEFAULT %d", t, g.next+r.Intn(1000), r.Intn(9))}
	case k < 89:
		g.inTx = false
		return g.createTable()
	case k < 91:
		g.inTx = false
		g.drop(t)
		return diffStmt{sql: "DROP TABLE IF EXISTS " + t + ", never_existed"}
	case k < 93:
		g.inTx = false
		g.drop(t)
		return diffStmt{sql: "RENAME TABLE " + t + " TO " + g.fresh("r", &g.tables)}
	case k < 95:
		g.inTx = false
		return diffStmt{sql: "TRUNCATE TABLE " + t}
	case k < 96:
		return diffStmt{sql: "INSERT INTO " + t + " (id, a) VALUES (1, 1)"} // often a duplicate key
	case k < 98:
		return g.insertSelect(t)
	case k < 99:
		return diffStmt{sql: "SELECT ROW_COUNT(), FOUND_ROWS(), @@warning_count", query: true}
	default:
		return diffStmt{sql: "SELECT * FROM missing_table", query: true}
	}
}

// insertSelect is INSERT | INSERT IGNORE | REPLACE … SELECT of rows of t
// with ids of their own (none generated: the answer's last insert id is
// then the last row's), from t or another of the workload's tables.
// Production's tables, forked (with the capture's triggers), are its
// target more often than not.
func (g *diffGen) insertSelect(t string) diffStmt {
	r := g.r
	for _, p := range []string{"t0", "t1"} {
		if g.has(p) && r.Intn(3) == 0 {
			t = p
		}
	}
	from := t
	if r.Intn(3) == 0 {
		from = g.table()
	}
	verb := [...]string{"INSERT", "INSERT IGNORE", "REPLACE"}[r.Intn(3)]
	shift := [...]int{0, 1, 100 + r.Intn(900)}[r.Intn(3)] // the same ids, the next ones, new ones
	lo := 1 + r.Intn(12)
	return diffStmt{sql: fmt.Sprintf("%s INTO %s (id, a) SELECT id + %d, a + 1 FROM %s WHERE id BETWEEN %d AND %d ORDER BY id",
		verb, t, shift, from, lo, lo+r.Intn(6))}
}

// createTable makes a new table of the workload's.
func (g *diffGen) createTable() diffStmt {
	return diffStmt{sql: "CREATE TABLE " + g.fresh("n", &g.tables) + " (id INT AUTO_INCREMENT PRIMARY KEY, a INT NOT NULL, b VARCHAR(20))"}
}

func (g *diffGen) has(t string) bool {
	for _, x := range g.tables {
		if x == t {
			return true
		}
	}
	return false
}

func (g *diffGen) drop(t string) {
	for i, x := range g.tables {
		if x == t {
			g.tables = append(g.tables[:i], g.tables[i+1:]...)
			return
		}
	}
}

// tableDump is every table of db with its rows, for the final comparison.
func tableDump(ctx context.Context, t *testing.T, c *sql.Conn) string {
	names := column(t, c, "SHOW TABLES")
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n + ": " + diffOutcome(ctx, c, "SELECT * FROM "+n+" ORDER BY id", nil, true) + "\n")
	}
	return b.String()
}

// TestDifferentialSandbox runs the same seeded random workload — DML, DDL,
// transactions, prepared statements, introspection — directly on one
// MariaDB and through a sandbox in front of a second one, and requires
// identical outcomes statement by statement (error codes and messages,
// rows, affected rows, insert ids) and identical final tables, with the
// second server's production unchanged.
//
// It runs twice: with the proxy's upstream account holding only SELECT on
// production (the database then refuses any escape too) and with one
// holding ALL PRIVILEGES, where the proxy alone keeps production unchanged.
func TestDifferentialSandbox(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	sandDB, leastPriv, allPriv, directDB := directAndSandboxes(ctx, t)
	t.Run("least-privilege", func(t *testing.T) {
		differential(ctx, t, sandDB, directDB, leastPriv.userDSN(sandboxUser, "%s"))
	})
	t.Run("all-privileges", func(t *testing.T) {
		differential(ctx, t, sandDB, directDB, allPriv.dsn("%s"))
	})
}

// directAndSandboxes starts what a comparison of sandboxes with direct
// connections needs: the shared server with a transparent proxy logging in
// with the least-privilege account and one with the ALL PRIVILEGES
// account, and a second server for the direct side (stopped when the test
// ends).
func directAndSandboxes(ctx context.Context, t *testing.T) (sandDB *testdb.Server, leastPriv, allPriv *proxyHandle, directDB *testdb.Server) {
	t.Helper()
	sandDB, leastPriv = sandboxProxy(t, "transparent", nil)
	allPriv = startTestProxy(t, sandDB.Addr, sandDB, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.Sandbox.ReapInterval = 500 * time.Millisecond
	})
	return sandDB, leastPriv, allPriv, testdb.StartForTest(ctx, t, testdb.Options{})
}

// differential runs the seeded workloads through the proxy whose DSN (a
// format with the database as %s) is dsn.
func differential(ctx context.Context, t *testing.T, sandDB, directDB *testdb.Server, dsn string) {
	seeds, perSeed := []int64{1, 2, 3, 4, 5}, 450
	for _, seed := range seeds {
		name := fmt.Sprintf("diff%d", seed)
		for _, srv := range []*testdb.Server{directDB, sandDB} {
			root := openDB(t, srv.DSN("")+"?multiStatements=true")
			if _, err := root.Exec("DROP DATABASE IF EXISTS " + name + "; CREATE DATABASE " + name + "; USE " + name + ";" + diffSchema); err != nil {
				t.Fatal(err)
			}
		}
		rootSand := openDB(t, sandDB.DSN("")+"?multiStatements=true")
		if _, err := rootSand.Exec("GRANT SELECT ON " + name + ".* TO '" + sandboxUser + "'@'%'"); err != nil {
			t.Fatal(err)
		}
		before := checksum(t, sandDB, name+".t0") + checksum(t, sandDB, name+".t1")

		dc := conn(t, openDB(t, directDB.DSN(name)))
		sc := conn(t, openDB(t, fmt.Sprintf(dsn, name)))
		g := &diffGen{r: rand.New(rand.NewSource(seed)), tables: []string{"t0", "t1"}}
		diffs := compareWorkload(ctx, t, fmt.Sprintf("seed %d", seed), dc, sc, perSeed, g.next1)
		if w, g := tableDump(ctx, t, dc), tableDump(ctx, t, sc); w != g {
			t.Errorf("seed %d: final tables differ:\n direct:\n%s\n sandbox:\n%s", seed, w, g)
		}
		if after := checksum(t, sandDB, name+".t0") + checksum(t, sandDB, name+".t1"); after != before {
			t.Errorf("seed %d: production checksums changed", seed)
		}
		var n int
		_ = rootSand.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?", name).Scan(&n)
		if n != 2 {
			t.Errorf("seed %d: production %s has %d tables, want its 2", seed, name, n)
		}
		t.Logf("seed %d: %d statements, %d differences", seed, perSeed, diffs)
		dc.Close()
		sc.Close()
	}
}

// compareWorkload runs n statements of next directly (dc) and through the
// sandbox (sc), then commits both sides' transactions, and returns how
// many outcomes differed; the first five differences fail the test, each
// with the statements before it.
func compareWorkload(ctx context.Context, t *testing.T, label string, dc, sc *sql.Conn, n int, next func() diffStmt) int {
	diffs := 0
	var recent []string // the statements before, for a difference's context
	for i := 0; i < n; i++ {
		st := next()
		recent = append(recent, fmt.Sprintf("%d %s %v", i, st.sql, st.args))
		if len(recent) > 12 {
			recent = recent[1:]
		}
		want, got := bothOutcomes(ctx, dc, sc, st)
		if want != got {
			diffs++
			if diffs <= 5 {
				t.Errorf("%s statement %d %q %v:\n direct:  %s\n sandbox: %s\n after:\n   %s", label, i, st.sql, st.args,
					want, got, strings.Join(recent[:len(recent)-1], "\n   "))
			}
		}
	}
	_, _ = dc.ExecContext(ctx, "COMMIT")
	_, _ = sc.ExecContext(ctx, "COMMIT")
	return diffs
}

// bothOutcomes runs st directly (dc) and through the sandbox (sc).
func bothOutcomes(ctx context.Context, dc, sc *sql.Conn, st diffStmt) (direct, sandbox string) {
	if st.prepare {
		return preparedOutcome(ctx, dc, st), preparedOutcome(ctx, sc, st)
	}
	return diffOutcome(ctx, dc, st.sql, st.args, st.query), diffOutcome(ctx, sc, st.sql, st.args, st.query)
}

// preparedOutcome runs a statement as a server-side prepared statement.
func preparedOutcome(ctx context.Context, c *sql.Conn, st diffStmt) string {
	ps, err := c.PrepareContext(ctx, st.sql)
	if err != nil {
		return errOutcome(err)
	}
	defer ps.Close()
	if !st.query {
		r, err := ps.ExecContext(ctx, st.args...)
		if err != nil {
			return errOutcome(err)
		}
		n, _ := r.RowsAffected()
		id, _ := r.LastInsertId()
		return fmt.Sprintf("ok affected=%d id=%d", n, id)
	}
	rows, err := ps.QueryContext(ctx, st.args...)
	if err != nil {
		return errOutcome(err)
	}
	rows.Close()
	return "rows"
}
