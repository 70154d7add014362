package integration

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"
)

// step is one statement of a scenario run on a single connection.
type step struct {
	exec  bool // Exec (affected rows, insert id) instead of Query
	query string
	args  []any
}

// sessionScenario exercises results, errors, warnings and per-session
// state. It writes only to temporary tables, so direct and proxied runs do
// not disturb each other.
var sessionScenario = []step{
	{query: "SELECT 1"},
	{query: "SELECT * FROM app.users ORDER BY id"},
	{query: "SELECT NULL AS n, 1.5 AS d, 'x' AS s, CAST('2024-01-01' AS DATE) AS dt, CAST(1 AS UNSIGNED) AS u, x'414243' AS b, 1e10 AS f, -0.0 AS z"},
	{query: "SELECT * FROM app.nope"},
	{query: "SELEC broken"},
	{exec: true, query: "SET @v := 42"},
	{query: "SELECT @v, @undefined"},
	{exec: true, query: "SET SESSION sql_mode = 'ANSI_QUOTES'"},
	{query: `SELECT "name" FROM app.users ORDER BY id LIMIT 1`},
	{query: "SELECT @@SESSION.sql_mode"},
	{exec: true, query: "SET SESSION sql_mode = DEFAULT"},
	{exec: true, query: "CREATE TEMPORARY TABLE tmp (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10) NOT NULL, n INT)"},
	{exec: true, query: "INSERT INTO tmp (v) VALUES ('a'),('b')"},
	{query: "SELECT LAST_INSERT_ID()"},
	{exec: true, query: "UPDATE tmp SET v='c' WHERE id=1"},
	{exec: true, query: "UPDATE tmp SET v='c' WHERE id=1"},
	{exec: true, query: "INSERT INTO tmp (id, v) VALUES (1,'dup')"},
	{exec: true, query: "INSERT INTO tmp (v) VALUES (NULL)"},
	{exec: true, query: "INSERT INTO tmp (v, n) VALUES ('w', 'notanumber')"},
	{query: "SHOW WARNINGS"},
	{query: "SELECT 1/0"},
	{query: "SHOW WARNINGS"},
	{exec: true, query: "BEGIN"},
	{exec: true, query: "INSERT INTO tmp (v) VALUES ('rolled-back')"},
	{query: "SELECT @@in_transaction"},
	{exec: true, query: "ROLLBACK"},
	{query: "SELECT COUNT(*), @@in_transaction FROM tmp"},
	{query: "CALL app.two_results()"},
	{exec: true, query: "CALL app.out_param(21, @out)"},
	{query: "SELECT @out"},
	{query: "SELECT REPEAT('x', 300000) AS big, REPEAT('y', 5) AS small"},
	{query: "SHOW VARIABLES LIKE 'autocommit'"},
	{query: "SELECT name FROM app.users WHERE id = ?", args: []any{2}},
	{query: "SELECT ? AS i, ? AS f, ? AS s, ? AS b, ? AS t, ? AS n", args: []any{int64(-7), 2.25, "héllo 'q'", []byte{0, 1, 2}, time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC), nil}},
	{exec: true, query: "INSERT INTO tmp (v, n) VALUES (?, ?)", args: []any{"p", 5}},
	{query: "SELECT LAST_INSERT_ID(), ROW_COUNT()"},
	{query: "SELECT * FROM tmp ORDER BY id"},
	{query: "SELECT * FROM app.users WHERE name = ?", args: []any{"nobody"}},
	{query: "SELECT * FROM app.nope WHERE id = ?", args: []any{1}},
	{exec: true, query: "USE other"},
	{query: "SELECT DATABASE(), (SELECT COUNT(*) FROM things)"},
	{query: "SELECT id, bio, avatar FROM app.users ORDER BY id"},
	{query: "SELECT CONVERT('ü' USING latin1), @@character_set_client, @@collation_connection"},
}

// multiScenario needs multiStatements=true.
var multiScenario = []step{
	{query: "SELECT 1 AS a; SELECT 2 AS b, 3 AS c"},
	{exec: true, query: "CREATE TEMPORARY TABLE m (id INT PRIMARY KEY); INSERT INTO m VALUES (1),(2); UPDATE m SET id = id + 10"},
	{query: "SELECT * FROM m ORDER BY id; SELECT * FROM app.nope; SELECT 3"},
	{query: "SELECT 1; CALL app.two_results(); SELECT 'end'"},
}

// runScenario runs steps on one connection and returns a transcript.
func runScenario(t *testing.T, dsn string, steps []step) []string {
	t.Helper()
	db := openDB(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatalf("connect %s: %v", dsn, err)
	}
	defer conn.Close()
	var out []string
	for _, s := range steps {
		out = append(out, fmt.Sprintf("== %s %v", s.query, s.args))
		if s.exec {
			res, err := conn.ExecContext(ctx, s.query, s.args...)
			if err != nil {
				out = append(out, "error: "+mysqlErr(err))
				continue
			}
			a, _ := res.RowsAffected()
			id, _ := res.LastInsertId()
			out = append(out, fmt.Sprintf("affected=%d last_insert_id=%d", a, id))
			continue
		}
		rows, err := conn.QueryContext(ctx, s.query, s.args...)
		if err != nil {
			out = append(out, "error: "+mysqlErr(err))
			continue
		}
		out = append(out, dumpRows(rows)...)
	}
	return out
}

// dumpRows renders every result set of rows.
func dumpRows(rows *sql.Rows) []string {
	defer rows.Close()
	var out []string
	for {
		cols, _ := rows.ColumnTypes()
		var hdr []string
		for _, c := range cols {
			n, _ := c.Nullable()
			hdr = append(hdr, fmt.Sprintf("%s:%s:null=%v", c.Name(), c.DatabaseTypeName(), n))
		}
		out = append(out, "cols "+strings.Join(hdr, ","))
		for rows.Next() {
			vals, err := scanRow[sql.RawBytes](rows, len(cols))
			if err != nil {
				out = append(out, "scan error: "+err.Error())
				break
			}
			var r []string
			for _, v := range vals {
				if v == nil {
					r = append(r, "NULL")
				} else if len(v) > 64 {
					r = append(r, fmt.Sprintf("%q...(%d bytes)", v[:16], len(v)))
				} else {
					r = append(r, fmt.Sprintf("%q", v))
				}
			}
			out = append(out, "row "+strings.Join(r, " | "))
		}
		if err := rows.Err(); err != nil {
			out = append(out, "error: "+mysqlErr(err))
			return out
		}
		if !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				out = append(out, "error: "+mysqlErr(err))
			}
			return out
		}
		out = append(out, "-- next result set")
	}
}

// compareTranscripts fails the test at the first line that differs.
func compareTranscripts(t *testing.T, direct, proxied []string) {
	t.Helper()
	if d, p := strings.Join(direct, "\n"), strings.Join(proxied, "\n"); d != p {
		t.Fatalf("transcripts differ at %s", diffFirst(d, p))
	}
}

// TestGoDriverMatchesDirect runs the same session through the proxy and
// straight to MariaDB with go-sql-driver/mysql in its three common modes,
// and requires identical results, errors, warnings and session behaviour.
func TestGoDriverMatchesDirect(t *testing.T) {
	db, p := env(t)
	modes := []struct {
		name   string
		params []string
		steps  []step
	}{
		{"server-side-prepared", nil, sessionScenario},
		{"interpolate-params", []string{"interpolateParams=true"}, sessionScenario},
		{"multi-statements", []string{"multiStatements=true"}, append(append([]step{}, sessionScenario...), multiScenario...)},
		{"client-found-rows", []string{"clientFoundRows=true"}, sessionScenario[11:17]},
		// The handshake's collation byte must reach upstream unchanged.
		{"latin1-collation", []string{"collation=latin1_swedish_ci"}, sessionScenario[len(sessionScenario)-1:]},
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			direct := runScenario(t, directDSN(db, "app", m.params...), m.steps)
			proxied := runScenario(t, p.dsn("app", m.params...), m.steps)
			compareTranscripts(t, direct, proxied)
			if len(proxied) < len(m.steps)*2 {
				t.Fatalf("transcript too short: %d lines", len(proxied))
			}
		})
	}
}

// TestPreparedStatementsStayOnSession checks that server-side statements
// prepared through the proxy live on the pinned upstream connection.
func TestPreparedStatementsStayOnSession(t *testing.T) {
	_, p := env(t)
	db := openDB(t, p.dsn("app"))
	db.SetMaxOpenConns(1)
	stmt, err := db.Prepare("SELECT name FROM users WHERE id = ?")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	for i, want := range []string{"alice", "bob", "carol"} {
		var got string
		if err := stmt.QueryRow(i + 1).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("id %d: got %q want %q", i+1, got, want)
		}
	}
	var n int
	if err := db.QueryRow("SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME='PREPARED_STMT_COUNT'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Fatalf("prepared statement not on the session's upstream connection (count %d)", n)
	}
}

// TestScenarioTranscriptIsSubstantive guards the comparison above against
// passing vacuously: the transcript must show results, errors, warnings and
// multiple result sets.
func TestScenarioTranscriptIsSubstantive(t *testing.T) {
	_, p := env(t)
	got := strings.Join(runScenario(t, p.dsn("app", "multiStatements=true"), append(append([]step{}, sessionScenario...), multiScenario...)), "\n")
	for _, want := range []string{
		`row "1" | "alice" | "alice@example.com" | "10.50"`,
		"error: 1146 (42S02) Table 'app.nope' doesn't exist",
		"error: 1064 (42000)",
		"error: 1062 (23000) Duplicate entry '1' for key 'PRIMARY'",
		"affected=2 last_insert_id=1",
		`row "Warning" | "1365" | "Division by 0"`,
		"error: 1366 (22007) Incorrect integer value",
		"-- next result set",
		`row "42"`,
		`row "bob"`,
		`"xxxxxxxxxxxxxxxx"...(300000 bytes)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("transcript:\n%s", got)
	}
}
