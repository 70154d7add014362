package rewrite

import (
	"fmt"
	"strings"
	"testing"
)

// TestReplayFacts checks what the analysis records for a second run of a
// statement: its variables, the transaction characteristics of BEGIN and
// SET TRANSACTION, and why a second run could differ (Volatile).
func TestReplayFacts(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	cases := []struct {
		sql      string
		vars     string // Var: name/u|s(ystem)/r|w[/g]
		volatile string // substring of Volatile(), "" for none
		start    string // %+v of Start
		next     string // %+v of Next
		previous string // Previous()
		setsID   bool   // SetsLastInsertID()
	}{
		{sql: "UPDATE t SET a = a + 1 WHERE id = 3"},
		{sql: "INSERT INTO t (a) VALUES (CONNECTION_ID()), (LENGTH('x')), (COALESCE(NULL, 1))"},
		{sql: "SELECT @n := @n + 1", vars: "n/u/w,n/u/r", volatile: "user variable @n"},
		{sql: "UPDATE t SET a = (@n := @n + 1)", vars: "n/u/w,n/u/r", volatile: "user variable @n"},
		{sql: "INSERT INTO t VALUES (@x)", vars: "x/u/r", volatile: "user variable @x"},
		{sql: "SET @x = 1", vars: "x/u/w", volatile: "user variable @x"},
		{sql: "SET @x = (SELECT a FROM t)", vars: "x/u/w", volatile: "user variable @x"},
		{sql: "SELECT a INTO @a FROM t", vars: "a/u/w", volatile: "user variable @a"}, // unparseable: read from the text
		{sql: "SELECT @@session.last_insert_id, @@warning_count", vars: "last_insert_id/s/r,warning_count/s/r", volatile: "@@last_insert_id",
			previous: "@@warning_count"},
		{sql: "SELECT @@sql_mode", vars: "sql_mode/s/r"},
		{sql: "SELECT @@global.max_connections", vars: "max_connections/s/r/g", volatile: "global variable"},
		{sql: "SET timestamp = 5, SESSION sql_log_bin = 0", vars: "timestamp/s/w,sql_log_bin/s/w", volatile: "@@timestamp"},
		{sql: "INSERT INTO t VALUES (UUID())", volatile: "UUID()"},
		{sql: "INSERT INTO t VALUES (RAND())", volatile: "RAND()"},
		{sql: "UPDATE t SET at = NOW()", volatile: "NOW()"},
		{sql: "UPDATE t SET at = CURRENT_TIMESTAMP", volatile: "CURRENT_TIMESTAMP()"},
		{sql: "UPDATE t SET d = current_date", volatile: "CURRENT_DATE()"},
		{sql: "INSERT INTO t VALUES (SYSDATE())", volatile: "SYSDATE()"},
		{sql: "INSERT INTO t VALUES (UNIX_TIMESTAMP())", volatile: "UNIX_TIMESTAMP()"},
		{sql: "INSERT INTO t VALUES (UUID_SHORT())", volatile: "UUID_SHORT()"},
		{sql: "INSERT INTO t VALUES (LAST_INSERT_ID())", volatile: "LAST_INSERT_ID()"},
		{sql: "SELECT LAST_INSERT_ID(5)", volatile: "LAST_INSERT_ID()", setsID: true},
		{sql: "SELECT a FROM t INTO @a WHERE b = LAST_INSERT_ID()", vars: "a/u/w", volatile: "user variable @a"},                     // INTO masked: read
		{sql: "SELECT a FROM t INTO @a WHERE b = LAST_INSERT_ID() AND (", vars: "a/u/w", volatile: "user variable @a", setsID: true}, // unparseable
		{sql: "INSERT INTO t VALUES (ROW_COUNT())", volatile: "ROW_COUNT()", previous: "ROW_COUNT()"},
		{sql: "SELECT FOUND_ROWS(), a FROM t", volatile: "FOUND_ROWS()", previous: "FOUND_ROWS()"},
		{sql: "SELECT @@warning_count", vars: "warning_count/s/r", volatile: "@@warning_count", previous: "@@warning_count"},
		{sql: "SELECT GET_LOCK('x', 0) FROM t FOR UPDATE", volatile: "GET_LOCK()"},
		{sql: "SELECT NEXTVAL(s)", volatile: "NEXTVAL()"},
		{sql: "SELECT NEXT VALUE FOR s", volatile: "NEXTVAL()"},
		{sql: "SELECT PREVIOUS VALUE FOR s", volatile: "NEXTVAL()"},
		{sql: "SELECT LASTVAL(s)", volatile: "LASTVAL()"},
		{sql: "SELECT SETVAL(s, 10)", volatile: "SETVAL()"},
		{sql: "INSERT INTO t VALUES (app.f(1))"},
		{sql: "CALL p()", volatile: "procedure"},
		{sql: "BEGIN", start: "{Isolation: Access: Snapshot:false}"},
		{sql: "BEGIN WORK", start: "{Isolation: Access: Snapshot:false}"},
		{sql: "START TRANSACTION READ ONLY", start: "{Isolation: Access:READ ONLY Snapshot:false}"},
		{sql: "START TRANSACTION READ WRITE", start: "{Isolation: Access:READ WRITE Snapshot:false}"},
		{sql: "START TRANSACTION WITH CONSISTENT SNAPSHOT", start: "{Isolation: Access: Snapshot:true}"},
		{sql: "start transaction read only, with consistent snapshot", start: "{Isolation: Access:READ ONLY Snapshot:true}"},
		{sql: "SET TRANSACTION READ ONLY", next: "{Isolation: Access:READ ONLY Snapshot:false}"},
		{sql: "SET TRANSACTION ISOLATION LEVEL READ COMMITTED, READ WRITE", next: "{Isolation:READ COMMITTED Access:READ WRITE Snapshot:false}"},
		{sql: "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", next: "{Isolation:SERIALIZABLE Access: Snapshot:false}"},
		{sql: "SET SESSION TRANSACTION READ ONLY", vars: "tx_read_only/s/w"},
		{sql: "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", vars: "tx_isolation/s/w"},
	}
	for _, c := range cases {
		a := e.Analyze(c.sql, opts)
		if len(a.Statements) != 1 {
			t.Errorf("%q: %d statements", c.sql, len(a.Statements))
			continue
		}
		st := a.Statements[0]
		var vars []string
		for _, v := range st.Vars {
			s := v.Name + "/u"
			if v.System {
				s = v.Name + "/s"
			}
			if v.Set {
				s += "/w"
			} else {
				s += "/r"
			}
			if v.Global {
				s += "/g"
			}
			vars = append(vars, s)
		}
		if got := strings.Join(vars, ","); got != c.vars {
			t.Errorf("%q: vars %q, want %q", c.sql, got, c.vars)
		}
		if got := st.Volatile(); c.volatile == "" && got != "" || c.volatile != "" && !strings.Contains(got, c.volatile) {
			t.Errorf("%q: Volatile() = %q, want %q", c.sql, got, c.volatile)
		}
		if got := st.Previous(); got != c.previous {
			t.Errorf("%q: Previous() = %q, want %q", c.sql, got, c.previous)
		}
		if got := st.SetsLastInsertID(); got != c.setsID {
			t.Errorf("%q: SetsLastInsertID() = %v, want %v", c.sql, got, c.setsID)
		}
		if got := chars(st.Start); got != c.start {
			t.Errorf("%q: Start %s, want %s", c.sql, got, c.start)
		}
		if got := chars(st.Next); got != c.next {
			t.Errorf("%q: Next %s, want %s", c.sql, got, c.next)
		}
	}
}

func chars(c *TxChars) string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("%+v", *c)
}
