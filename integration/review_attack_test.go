package integration

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// The review path attacked (issue 24): SANDBOX DIFF, EXPORT and PROMOTE,
// and the forks they read, tried as an attacker would against a real
// MariaDB through the proxy, each case with the least-privilege and with an
// ALL PRIVILEGES everyday account (and, for privileges, server accounts of
// narrower rights logged in through the proxy), production's ALL
// PRIVILEGES account promoting. After every case production, the proxy's
// registry and the machine's files are as they were, but for what the
// case's own account could have done directly (review_attack_helpers_test.go).
//
//  1. TestReviewAttackExportInjection: names and values that break out of
//     EXPORT's comments and quotes, applied with the mariadb client.
//  2. TestReviewAttackForkRights: forks read with the user's own rights.
//  3. TestReviewAttackPromoteRights: PROMOTE applies what the user may.
//  4. TestReviewAttackAlterInjection: ALTER TABLE text built from names.
//  5. TestReviewAttackViewSecurity: promoted views never run as the
//     promote account.
//  6. TestReviewAttackSystemViews: views of information_schema, mysql, sys,
//     performance_schema and the proxy's databases.
//  7. TestReviewAttackSystemSchemaDDL: DDL of the system schemas.
//  8. TestReviewAttackCharsets: sjis, gbk and big5 next to latin1.
//  9. TestReviewAttackReferentialIntegrity: no orphans, no checks off.
//  10. TestReviewAttackDiffTerminal: the CLI's diff prints no controls.
//  11. TestReviewAttackAdminBearer: the scheme of Authorization.

// ---- 1. EXPORT comment and quote injection ----

// rvPayloads are the names (and values) the injection cases give the
// sandbox's objects: written by an export outside quotes — in a comment a
// line end ends, a quoted name cut short — each makes the mariadb client
// run a shell command (a file in the directory it runs in) or delete
// {db}.secrets, which the sandbox never touches.
var rvPayloads = []string{
	// Line ends end a -- comment: the next line is the client's.
	"n\n\\! touch pwned_nl\nDELETE FROM {db}.secrets; #",
	"r\r\\! touch pwned_cr\rDELETE FROM {db}.secrets; #",
	"d\nDELIMITER ;;\nDELETE FROM {db}.secrets;;\nDELIMITER ;\n#",
	"h\n# x\n-- x\n\\! touch pwned_hd\nDELETE FROM {db}.secrets;",
	// Comment and quote ends, controls, multibyte text.
	"c*/ DELETE FROM {db}.secrets; /*",
	"q'\"`\\'; DELETE FROM {db}.secrets; #",
	"k\x01\x07\x08\x1b[2J\x7f\x0b\x0c\x1a\u0085",
	"m表é\u202eソ構\u2028z",
}

// rvKind is a kind of name the sandbox controls: make are the statements
// that give one object of the kind the name q (quoted; lit is the name as
// a string literal, i its number); database kinds are production's
// databases, made by the schema.
type rvKind struct {
	name     string
	make     func(q, lit string, i int) []string
	after    []string // run once the objects are made
	database bool
}

// rvKinds are every kind of name a sandbox gives that an export or a diff
// writes, and the values of rows.
var rvKinds = []rvKind{
	{name: "table", make: func(q, _ string, i int) []string { // keyless: the export's note names it
		return []string{"CREATE TABLE " + q + " (a INT, b VARCHAR(40))", fmt.Sprintf("INSERT INTO %s VALUES (%d, 'x')", q, i)}
	}},
	{name: "column", make: func(q, _ string, i int) []string {
		return []string{"ALTER TABLE t ADD COLUMN " + q + " INT", fmt.Sprintf("UPDATE t SET %s = %d WHERE id = 1", q, i)}
	}},
	{name: "index", make: func(q, _ string, _ int) []string { return []string{"CREATE INDEX " + q + " ON t (c)"} }},
	{name: "view", make: func(q, _ string, _ int) []string { return []string{"CREATE VIEW " + q + " AS SELECT id, c FROM t"} }},
	{name: "procedure", make: func(q, _ string, _ int) []string { return []string{"CREATE PROCEDURE " + q + "() SELECT 1"} },
		after: []string{"UPDATE t SET c = 5 WHERE id = 1"}},
	{name: "function", make: func(q, _ string, _ int) []string {
		return []string{"CREATE FUNCTION " + q + "() RETURNS INT DETERMINISTIC RETURN 1"}
	}, after: []string{"UPDATE t SET c = 5 WHERE id = 1"}},
	{name: "trigger", make: func(q, _ string, _ int) []string {
		return []string{"CREATE TRIGGER " + q + " BEFORE UPDATE ON t FOR EACH ROW SET NEW.c = NEW.c"}
	}, after: []string{"UPDATE t SET c = 5 WHERE id = 1"}},
	{name: "sequence", make: func(q, _ string, _ int) []string {
		return []string{"CREATE SEQUENCE " + q, "SELECT NEXTVAL(" + q + ")"}
	}},
	{name: "database", database: true, make: func(q, _ string, _ int) []string {
		return []string{"CREATE PROCEDURE " + q + ".p() SELECT 1", "UPDATE " + q + ".w SET v = v + 1 WHERE id = 1"}
	}},
	{name: "value", make: func(_, lit string, i int) []string {
		return []string{fmt.Sprintf("INSERT INTO vals VALUES (%d, %s)", 10+i, lit), "UPDATE vals SET v = CONCAT(v, " + lit + ") WHERE id = 1"}
	}},
}

// rvInjectionSchema is production for the injection and terminal cases.
const rvInjectionSchema = `CREATE TABLE secrets (id INT PRIMARY KEY, s VARCHAR(40));
INSERT INTO secrets VALUES (1, 'TOPSECRET-1'), (2, 'TOPSECRET-2');
CREATE TABLE t (id INT PRIMARY KEY, c INT); INSERT INTO t VALUES (1, 1), (2, 2);
CREATE TABLE vals (id INT PRIMARY KEY, v TEXT); INSERT INTO vals VALUES (1, 'one');
CREATE TABLE kv (k VARCHAR(60) PRIMARY KEY, v INT); INSERT INTO kv VALUES ('a', 1);`

// rvKindSchema is the schema of a kind's case with names: production's
// databases of those names for a database kind.
func rvKindSchema(k rvKind, names []string) rvSchema {
	s := rvSchema{sql: rvInjectionSchema}
	if !k.database {
		return s
	}
	for _, n := range names {
		s.sql += fmt.Sprintf("\nCREATE DATABASE %[1]s; CREATE TABLE %[1]s.w (id INT PRIMARY KEY, v INT); INSERT INTO %[1]s.w VALUES (1, 1);", escQI(n))
		s.dbs = append(s.dbs, n)
	}
	return s
}

// TestReviewAttackExportInjection: for every kind of name a sandbox gives
// and row values, objects whose names break out of a comment or a quote
// (line ends, \r, */, #, -- , quotes, backticks, ;, \!, DELIMITER,
// controls, multibyte text) are exported — by SANDBOX EXPORT and by
// `sqlfork-proxy sandbox export`, which must be the same text — and the
// export applied to a copy of production with the mariadb client, under
// the server's sql_mode and under NO_BACKSLASH_ESCAPES,ANSI_QUOTES: the
// client sends exactly the export's statements, runs them all, touches no
// file, and no table the sandbox did not change changes.
func TestReviewAttackExportInjection(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "x", rvStartServer(t), true)
	for _, k := range rvKinds {
		t.Run(k.name, func(t *testing.T) {
			e.each(t, rvKindSchema(k, rvPayloads), func(t *testing.T, r *rvRun) { rvInjection(t, r, k, rvPayloads) })
		})
	}
}

// rvInjection makes the kind's objects named names in a sandbox, exports
// it and applies the export.
func rvInjection(t *testing.T, r *rvRun, k rvKind, names []string) {
	sb := r.everyday(t, r.db)
	for i, n := range names {
		n = r.expand(n)
		if j, err := rvTry(sb, k.make(escQI(n), sqlQuote(n), i)...); err != nil {
			t.Logf("refused in the sandbox (fail closed) for %q: statement %d: %s", n, j+1, mysqlErr(err))
		}
	}
	if j, err := rvTry(sb, k.after...); err != nil {
		t.Fatalf("%s: %s", k.after[j], mysqlErr(err))
	}
	stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
	text := adminapi.ExportText(stmts)
	if out, errOut, err := r.acct.cli(t, "export", r.db); err != nil || out != text {
		t.Errorf("sqlfork-proxy sandbox export %s: %v %s; differs from SANDBOX EXPORT:\n%s", r.db, err, errOut, lineDiff(text, out))
	}
	r.applyExport(t, text, stmts, rvTouched(t, sb))
	rvCheckCLIDiff(t, r)
	if t.Failed() {
		t.Logf("export:\n%s", text)
	}
}

// rvTouched are the tables and views (db.name) the sandbox changed, as
// DIFF SUMMARY lists them.
func rvTouched(t *testing.T, sb rowQuerier) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for name := range diffSummary(t, sb, "SANDBOX DIFF SUMMARY") {
		out[name] = true
	}
	return out
}

// applyExport applies text (the export stmts) to a copy of production on
// the replica with the mariadb client under each of rvModes: the client
// sends exactly the export's statements and runs them all, and of the
// run's databases only touched objects change, no file appears.
func (r *rvRun) applyExport(t *testing.T, text string, stmts []string, touched map[string]bool) {
	t.Helper()
	want := rvStatements(stmts)
	var before rvSnap
	for _, mode := range rvModes {
		what := "the export applied under sql_mode " + cmp.Or(mode, "(the server's)")
		if r.replicaUsed {
			r.resetReplica(t)
		}
		if before == nil { // the same after every reset
			before = rvSnapshot(t, r.e.replicaRoot, r.dbs, r.e.marker)
		}
		r.replicaUsed = true
		res := r.e.apply(t, text, mode)
		if res.exit != 0 {
			t.Errorf("%s: mariadb exited %d: %s", what, res.exit, strings.TrimSpace(res.stderr))
		}
		checkRan(t, what, res, want)
		for _, c := range before.diff(rvSnapshot(t, r.e.replicaRoot, r.dbs, r.e.marker)) {
			if c.key.kind == "files" || !touched[c.key.obj] {
				t.Errorf("%s: the replica's %s", what, c)
			}
		}
		r.e.clearMarker()
	}
}

// ---- 10. the CLI's diff on a terminal ----

// rvTerminalName holds what drives a terminal: a title change, a screen
// clear, a carriage return and backspace over the text, a C1 CSI, a
// right-to-left override, and a line end that would make up a row.
const rvTerminalName = "x\x1b]0;pwned\x07\x1b[2J\r\b\u009b31m\u202eevil\nfake line"

// rvTerminalKinds are the names and values a diff shows.
var rvTerminalKinds = []rvKind{
	{name: "table", make: func(q, _ string, _ int) []string {
		return []string{"CREATE TABLE " + q + " (id INT PRIMARY KEY, v INT)", "INSERT INTO " + q + " VALUES (1, 1)"}
	}},
	{name: "column", make: func(q, _ string, _ int) []string {
		return []string{"ALTER TABLE t ADD COLUMN " + q + " INT", "UPDATE t SET " + q + " = 1 WHERE id = 1"}
	}},
	{name: "index", make: func(q, _ string, _ int) []string { return []string{"CREATE INDEX " + q + " ON t (c)"} }},
	{name: "view", make: func(q, _ string, _ int) []string { return []string{"CREATE VIEW " + q + " AS SELECT id FROM t"} }},
	{name: "value", make: func(_, lit string, _ int) []string { return []string{"UPDATE vals SET v = " + lit + " WHERE id = 1"} }},
	{name: "key", make: func(_, lit string, _ int) []string { return []string{"INSERT INTO kv VALUES (" + lit + ", 2)"} }},
	{name: "database", database: true, make: func(q, _ string, _ int) []string {
		return []string{"UPDATE " + q + ".w SET v = 2 WHERE id = 1"}
	}},
}

// TestReviewAttackDiffTerminal: `sqlfork-proxy sandbox diff` (rows and
// summary, as a table and as JSON) shows names and values with controls
// in them without a raw control character: a terminal showing it could
// otherwise be made to show something else.
func TestReviewAttackDiffTerminal(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "d", rvStartServer(t), false)
	for _, k := range rvTerminalKinds {
		t.Run(k.name, func(t *testing.T) {
			e.each(t, rvKindSchema(k, []string{rvTerminalName}), func(t *testing.T, r *rvRun) {
				sb := r.everyday(t, r.db)
				if j, err := rvTry(sb, k.make(escQI(rvTerminalName), sqlQuote(rvTerminalName), 0)...); err != nil {
					t.Logf("refused in the sandbox (fail closed): statement %d: %s", j+1, mysqlErr(err))
					return
				}
				diffDetail(t, sb, "SANDBOX DIFF")
				rvCheckCLIDiff(t, r)
			})
		})
	}
}

// rvCheckCLIDiff runs `sqlfork-proxy sandbox diff` of the run's sandbox
// (rows and summary, as JSON and as a table): no raw control character,
// and a table has one line per row the JSON lists (a line end in a name
// or a value would make up rows).
func rvCheckCLIDiff(t *testing.T, r *rvRun) {
	t.Helper()
	for _, summary := range [][]string{nil, {"--summary"}} {
		lines := -1
		for _, format := range [][]string{{"-o", "json"}, nil} {
			args := append(append([]string{"diff", r.db}, summary...), format...)
			out, errOut, err := r.acct.cli(t, args...)
			if err != nil {
				t.Errorf("sqlfork-proxy sandbox %v: %v %s", args, err, errOut)
				continue
			}
			if bad := rvControls(out); len(bad) > 0 {
				t.Errorf("sqlfork-proxy sandbox %v prints %d raw control characters, first %s", args, len(bad), bad[0])
			}
			var rows []json.RawMessage
			switch {
			case format != nil && json.Unmarshal([]byte(out), &rows) != nil:
				t.Errorf("sqlfork-proxy sandbox %v: not a JSON array: %.200q", args, out)
			case format != nil:
				lines = len(rows) + 1 // and the header
			case lines >= 0 && strings.Count(out, "\n") != lines:
				t.Errorf("sqlfork-proxy sandbox %v prints %d lines for %d rows and a header: %.300q", args, strings.Count(out, "\n"), lines-1, out)
			}
		}
	}
}

// ---- 11. the admin API's Authorization scheme ----

// TestReviewAttackAdminBearer: the admin API reads the scheme of
// Authorization case-insensitively (RFC 9110), and still refuses a wrong
// token or another scheme.
func TestReviewAttackAdminBearer(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "b", rvStartServer(t), false)
	for _, c := range []struct {
		name, header string
		status       int
	}{
		{"Bearer", "Bearer " + rvToken, http.StatusOK},
		{"bearer", "bearer " + rvToken, http.StatusOK},
		{"BEARER", "BEARER " + rvToken, http.StatusOK},
		{"bEaReR", "bEaReR " + rvToken, http.StatusOK},
		{"wrong-token", "bearer not-" + rvToken, http.StatusUnauthorized},
		{"basic", "Basic " + rvToken, http.StatusUnauthorized},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, a := range e.accts {
				req, err := http.NewRequest(http.MethodGet, a.api+"/api/v1/sandboxes", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", c.header)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != c.status {
					t.Errorf("%s: Authorization %q: HTTP %d, want %d", a.name, strings.Replace(c.header, rvToken, "<token>", 1), resp.StatusCode, c.status)
				}
			}
		})
	}
}

// rvFKChecksOff finds an export statement turning foreign key checks off.
var rvFKChecksOff = regexp.MustCompile(`(?i)foreign_key_checks\s*=\s*(0|off)`)

// ---- 2. forks read with the user's own rights ----

// rvRightsSchema is production for the privilege cases: secrets, which the
// accounts may not read, a table whose foreign key reads it and one whose
// trigger writes it.
const rvRightsSchema = `CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(20), email VARCHAR(40));
INSERT INTO users VALUES (1, 'alice', 'TOPSECRET-alice@x'), (2, 'bob', 'TOPSECRET-bob@x'), (3, 'carol', NULL);
CREATE TABLE secrets (id INT PRIMARY KEY, s VARCHAR(40));
INSERT INTO secrets VALUES (1, 'TOPSECRET-1'), (2, 'TOPSECRET-2');
CREATE TABLE orders (id INT PRIMARY KEY, sid INT, FOREIGN KEY (sid) REFERENCES secrets (id));
INSERT INTO orders VALUES (1, 1);
CREATE TABLE notes (id INT PRIMARY KEY, body VARCHAR(40));
CREATE TRIGGER notes_ai AFTER INSERT ON notes FOR EACH ROW UPDATE secrets SET s = s WHERE id = NEW.id;
CREATE PROCEDURE peek() SQL SECURITY INVOKER SELECT s FROM secrets;
CREATE FUNCTION peekf() RETURNS VARCHAR(40) READS SQL DATA SQL SECURITY INVOKER RETURN (SELECT s FROM secrets WHERE id = 1);
CREATE SQL SECURITY INVOKER VIEW sv AS SELECT * FROM secrets;`

// rvForkCase is an attack on what a fork lets an account read: with
// grants (besides the sandbox's), the account runs attack in its sandbox
// (the last statement is the attack, any before it must work); the last
// gets one of codes (SQLSTATE 42000), or, codes nil, may work. Then every
// probe gets through the proxy the error it gets directly, and leak (a
// query of the sandbox's own) shows no secret.
type rvForkCase struct {
	name   string
	grants []string
	attack []string
	codes  []uint16
	probes []string
	leak   string
}

var (
	rvSecretsOnly = []string{"SELECT * FROM secrets", "SELECT s FROM secrets WHERE id = 1"}
	rvUsersOnly   = []string{"SELECT ON {db}.users"}
	rvDenied      = []uint16{1142}
)

// rvForkCases: secrets written, locked, altered, referenced, pulled in by
// a foreign key or a trigger, read under lock or into the sandbox's own
// tables; a column-level grant.
var rvForkCases = []rvForkCase{
	{name: "select", grants: rvUsersOnly, probes: rvSecretsOnly},
	{name: "delete-where-false", grants: rvUsersOnly, attack: []string{"DELETE FROM secrets WHERE 1 = 0"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "insert", grants: rvUsersOnly, attack: []string{"INSERT INTO secrets VALUES (9, 'x')"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "update-where-false", grants: rvUsersOnly, attack: []string{"UPDATE secrets SET s = s WHERE 1 = 0"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "alter", grants: rvUsersOnly, attack: []string{"ALTER TABLE secrets ADD COLUMN z INT"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "truncate", grants: rvUsersOnly, attack: []string{"TRUNCATE TABLE secrets"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "create-trigger", grants: rvUsersOnly, attack: []string{"CREATE TRIGGER tg BEFORE INSERT ON secrets FOR EACH ROW SET NEW.s = NEW.s"},
		codes: rvDenied, probes: rvSecretsOnly},
	{name: "select-for-update", grants: rvUsersOnly, attack: []string{"SELECT * FROM secrets FOR UPDATE"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "lock-tables", grants: rvUsersOnly, attack: []string{"LOCK TABLES secrets READ"}, codes: []uint16{1142, 1044}, probes: rvSecretsOnly},
	{name: "create-table-references", grants: rvUsersOnly,
		attack: []string{"CREATE TABLE kid (id INT PRIMARY KEY, sid INT, FOREIGN KEY (sid) REFERENCES secrets (id))"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "write-foreign-key-child", grants: []string{"SELECT ON {db}.users", "SELECT, INSERT, UPDATE, DELETE ON {db}.orders"},
		attack: []string{"UPDATE orders SET sid = 2 WHERE id = 1"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "write-trigger-table", grants: []string{"SELECT ON {db}.users", "SELECT, INSERT ON {db}.notes"},
		attack: []string{"INSERT INTO notes VALUES (1, 'x')"}, codes: rvDenied, probes: rvSecretsOnly},
	{name: "insert-select", grants: rvUsersOnly, attack: []string{"CREATE TABLE mine (id INT, s VARCHAR(40))", "INSERT INTO mine SELECT id, s FROM secrets"},
		codes: rvDenied, probes: rvSecretsOnly, leak: "SELECT * FROM mine"},
	{name: "create-table-select", grants: rvUsersOnly, attack: []string{"CREATE TABLE mine AS SELECT * FROM secrets"}, codes: rvDenied,
		probes: rvSecretsOnly, leak: "SELECT * FROM mine"},
	{name: "create-view", grants: rvUsersOnly, attack: []string{"CREATE VIEW mine AS SELECT * FROM secrets"}, codes: rvDenied,
		probes: rvSecretsOnly, leak: "SELECT * FROM mine"},
	{name: "multi-table-update", grants: rvUsersOnly, attack: []string{"UPDATE users u JOIN secrets s ON s.id = u.id SET u.name = s.s"},
		codes: rvDenied, probes: rvSecretsOnly, leak: "SELECT name FROM users"},
	{name: "set-variable-subquery", grants: rvUsersOnly, attack: []string{"SET @x = (SELECT s FROM secrets WHERE id = 1)"}, codes: rvDenied,
		probes: rvSecretsOnly, leak: "SELECT @x"},
	// Production's routines and views of SQL SECURITY INVOKER read with
	// the caller's rights: copied into the sandbox, they must still.
	{name: "call-invoker-procedure", grants: []string{"SELECT ON {db}.users", "EXECUTE ON PROCEDURE {db}.peek"},
		attack: []string{"CALL peek()"}, codes: rvDenied, probes: append([]string{"CALL peek()"}, rvSecretsOnly...)},
	{name: "call-invoker-function", grants: []string{"SELECT ON {db}.users", "EXECUTE ON FUNCTION {db}.peekf"},
		attack: []string{"SELECT peekf()"}, codes: rvDenied, probes: append([]string{"SELECT peekf()"}, rvSecretsOnly...)},
	{name: "invoker-view-locking-read", grants: []string{"SELECT ON {db}.users", "SELECT ON {db}.sv"},
		attack: []string{"SELECT * FROM sv FOR UPDATE"}, codes: []uint16{1142, 1356}, probes: append([]string{"SELECT * FROM sv"}, rvSecretsOnly...)},
	// Column-level: SELECT (id, name) on users only; a write forks the
	// whole table, which must not show email.
	{name: "columns-after-update", grants: []string{"SELECT (id, name) ON {db}.users"}, attack: []string{"UPDATE users SET name = name WHERE 1 = 0"},
		probes: []string{"SELECT email FROM users", "SELECT * FROM users", "SELECT id FROM users WHERE email LIKE 'TOP%'"}},
	{name: "columns-after-delete", grants: []string{"SELECT (id, name) ON {db}.users"}, attack: []string{"DELETE FROM users WHERE id = 3"},
		probes: []string{"SELECT email FROM users", "SELECT * FROM users"}},
}

// TestReviewAttackForkRights: an account logged in through the proxy
// (relayed) reads in its sandbox only what its own grants let it read
// directly: an attack that would fork a table it may not read gets the
// server's own 1142, and the table stays unreadable (1142 as directly,
// never rows); a column-level grant keeps the other columns unreadable.
func TestReviewAttackForkRights(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "f", rvStartServer(t), false)
	rvEachCase(t, e, rvForkCases, func(c rvForkCase) (string, rvSchema) { return c.name, rvSchema{sql: rvRightsSchema} }, rvForkRun)
}

// rvForkRun runs a fork case.
func rvForkRun(t *testing.T, r *rvRun, c rvForkCase) {
	_, sb, direct := r.relayed(t, "b", "", c.grants...)
	want := map[string]string{}
	for _, p := range c.probes {
		_, err := rvTry(direct, r.expand(p))
		me := rvErr(err)
		if me == nil {
			t.Fatalf("%s directly: %v, want a server error (the case is wrong)", p, err)
		}
		want[p] = fmt.Sprintf("%d (%s)", me.Number, me.SQLState[:])
	}
	if n := len(c.attack); n > 0 {
		if j, err := rvTry(sb, c.attack[:n-1]...); err != nil {
			t.Fatalf("%s: %s", c.attack[j], mysqlErr(err))
		}
		_, err := rvTry(sb, c.attack[n-1])
		if c.codes != nil {
			checkErr(t, c.attack[n-1]+" in the sandbox", err, c.codes, "42000", "")
		}
	}
	for _, p := range c.probes {
		rows := rvQuery(sb, r.expand(p))
		if text := rvText(rows); strings.Contains(text, "TOPSECRET") {
			t.Errorf("%s read what the account may not: %.200q", p, text)
		}
		_, err := rvTry(sb, r.expand(p))
		got := "no error"
		if me := rvErr(err); me != nil {
			got = fmt.Sprintf("%d (%s)", me.Number, me.SQLState[:])
		}
		if got != want[p] {
			t.Errorf("after the attack, %s through the proxy: %s (%s); directly %s", p, got, mysqlErr(err), want[p])
		}
	}
	if c.leak != "" {
		if text := rvText(rvQuery(sb, c.leak)); strings.Contains(text, "TOPSECRET") {
			t.Errorf("%s shows what the account may not read: %.200q", c.leak, text)
		}
	}
}

// ---- 3. PROMOTE applies only what the user may ----

// rvPromoteCase: an account with grants changes its sandbox (steps) and
// promotes it (STRATEGY OURS, so only rights can refuse it): refused with
// one of codes (SQLSTATE 42000) naming mention, production unchanged; or,
// allowed (the account may make those changes directly), committed, and
// tables in production are the sandbox's. victim: the sandbox promoted is
// another account's, which made these steps.
type rvPromoteCase struct {
	name    string
	grants  []string
	steps   []string
	codes   []uint16
	mention string
	allowed []string
	victim  bool
	// echo: production has a trigger on users writing audit, which the
	// account may read but not write: PROMOTE is refused naming audit, or
	// production gets what the account's own UPDATE would give it there
	// (users changed, one audit row, written by the trigger).
	echo bool
}

const rvPromoteSchema = `CREATE TABLE users (id INT PRIMARY KEY, name VARCHAR(20), email VARCHAR(40));
INSERT INTO users VALUES (1, 'alice', 'a@x'), (2, 'bob', 'b@x'), (3, 'carol', NULL);`

var rvPromoteCases = []rvPromoteCase{
	{name: "delete", grants: rvUsersOnly, steps: []string{"DELETE FROM users WHERE id = 1"}, codes: rvDenied, mention: "users"},
	{name: "insert", grants: rvUsersOnly, steps: []string{"INSERT INTO users VALUES (9, 'mallory', 'm@x')"}, codes: rvDenied, mention: "users"},
	{name: "update", grants: rvUsersOnly, steps: []string{"UPDATE users SET name = 'mallory' WHERE id = 1"}, codes: rvDenied, mention: "users"},
	{name: "update-column-it-lacks", grants: []string{"SELECT, UPDATE (name) ON {db}.users"},
		steps: []string{"UPDATE users SET email = 'm@x' WHERE id = 1"}, codes: []uint16{1142, 1143}, mention: "users"},
	{name: "insert-column-it-lacks", grants: []string{"SELECT, INSERT (id, name) ON {db}.users"},
		steps: []string{"INSERT INTO users VALUES (9, 'mallory', 'm@x')"}, codes: []uint16{1142, 1143}, mention: "users"},
	{name: "alter", grants: rvUsersOnly, steps: []string{"ALTER TABLE users ADD COLUMN z INT"}, codes: rvDenied, mention: "users"},
	{name: "drop-table", grants: rvUsersOnly, steps: []string{"DROP TABLE users"}, codes: rvDenied, mention: "users"},
	{name: "create-table", grants: rvUsersOnly, steps: []string{"CREATE TABLE newt (id INT PRIMARY KEY)", "INSERT INTO newt VALUES (1)"},
		codes: rvDenied, mention: "newt"},
	{name: "create-view", grants: rvUsersOnly, steps: []string{"CREATE VIEW v AS SELECT id FROM users"}, codes: rvDenied, mention: "v"},
	// Another account's sandbox, by name: refused (1227), or not found
	// (1105: its existence is not told).
	{name: "another-owners-sandbox", grants: []string{"ALL PRIVILEGES ON {db}.*"}, victim: true,
		steps: []string{"DELETE FROM users WHERE id = 1"}, codes: []uint16{1227, 1105}},
	// The account has the rights: the change is promoted, exactly.
	{name: "allowed-rows", grants: []string{"SELECT, INSERT, UPDATE, DELETE ON {db}.*"},
		steps:   []string{"DELETE FROM users WHERE id = 1", "INSERT INTO users VALUES (9, 'dave', 'd@x')", "UPDATE users SET name = 'bobby' WHERE id = 2"},
		allowed: []string{"users"}},
	{name: "allowed-column", grants: []string{"SELECT, UPDATE (name) ON {db}.users"},
		steps: []string{"UPDATE users SET name = 'bobby' WHERE id = 2"}, allowed: []string{"users"}},
	{name: "trigger-writes-another-table", grants: []string{"SELECT, UPDATE ON {db}.users", "SELECT ON {db}.audit"}, echo: true,
		steps: []string{"UPDATE users SET name = 'bobby' WHERE id = 2"}},
	{name: "allowed-ddl", grants: []string{"ALL PRIVILEGES ON {db}.*"},
		steps:   []string{"ALTER TABLE users ADD COLUMN z INT", "UPDATE users SET z = id", "CREATE TABLE newt (id INT PRIMARY KEY)", "INSERT INTO newt VALUES (1)"},
		allowed: []string{"users", "newt"}},
}

// TestReviewAttackPromoteRights: SANDBOX PROMOTE, run by an account logged
// in through the proxy, applies to production only what that account
// could do there directly; the promote account's broader rights lend it
// nothing.
func TestReviewAttackPromoteRights(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "p", rvStartServer(t), false)
	rvEachCase(t, e, rvPromoteCases, func(c rvPromoteCase) (string, rvSchema) {
		schema := rvSchema{sql: rvPromoteSchema}
		if c.echo {
			schema.sql += "CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, uid INT); " +
				"CREATE TRIGGER users_au AFTER UPDATE ON users FOR EACH ROW INSERT INTO audit (uid) VALUES (NEW.id);"
		}
		return c.name, schema
	}, rvPromoteRun)
}

// rvPromoteRun runs a promote case.
func rvPromoteRun(t *testing.T, r *rvRun, c rvPromoteCase) {
	_, sb, _ := r.relayed(t, "p", "", c.grants...)
	promote := "SANDBOX PROMOTE STRATEGY OURS"
	changes := sb
	if c.victim {
		_, changes, _ = r.relayed(t, "v", "v"+r.db, c.grants...)
		promote = "SANDBOX PROMOTE v" + r.db + " STRATEGY OURS"
	}
	if j, err := rvTry(changes, c.steps...); err != nil {
		t.Fatalf("%s in the sandbox: %s", c.steps[j], mysqlErr(err))
	}
	if c.victim && !strings.Contains(rvText(rvQuery(changes, "SANDBOX LIST")), "v"+r.db) {
		t.Fatalf("the victim's sandbox v%s is not listed", r.db)
	}
	_, err := rvTry(sb, promote)
	if c.echo {
		rvPromoteEcho(t, r, err)
		return
	}
	if c.allowed == nil {
		state := "42000"
		if c.victim {
			state = "" // 1105 is HY000
		}
		checkErr(t, promote, err, c.codes, state, c.mention)
		return
	}
	if err != nil {
		t.Fatalf("%s of changes the account may make: %s", promote, mysqlErr(err))
	}
	for _, tbl := range c.allowed {
		r.allow("{db}." + tbl)
	}
	compareWithReplica(t, sb, r.e.root, r.db, c.allowed, "production after the promote")
}

// rvPromoteEcho checks an echo case's promote (err its outcome).
func rvPromoteEcho(t *testing.T, r *rvRun, err error) {
	t.Helper()
	if err != nil {
		checkErr(t, "SANDBOX PROMOTE of a change whose trigger writes audit", err, rvDenied, "42000", "audit")
		return
	}
	r.allow("{db}.users", "{db}.audit")
	want := "1 alice|2 bobby|3 carol/1 2"
	if got := allRows(t, r.e.root, "SELECT id, name FROM "+escQI(r.db)+".users ORDER BY id") + "/" +
		allRows(t, r.e.root, "SELECT COUNT(*), MAX(uid) FROM "+escQI(r.db)+".audit"); got != want {
		t.Errorf("production after the promote: %s, want %s (the account's UPDATE, its trigger's one audit row)", got, want)
	}
}

// ---- 4. ALTER TABLE text built from names ----

// rvAlterCase is an ALTER TABLE of production's audit the sandbox runs,
// whose names, comments, defaults, constraints or expressions hold text
// that, read as SQL outside its quotes, would partition audit, add a
// column z or put its files in the marker directory.
type rvAlterCase struct{ name, alter string }

var rvAlterCases = []rvAlterCase{
	{"partition-in-column-names", "ALTER TABLE audit ADD COLUMN `INT#` INT, ADD COLUMN `msg\nCOLUMN z INT PARTITION BY HASH(id)(PARTITION a/*` INT, " +
		"ADD COLUMN `msg\n*/DATA DIRECTORY='{marker}',PARTITION b)#` INT"},
	{"column-line", "ALTER TABLE audit ADD COLUMN `y\n  ``z`` int(11) DEFAULT NULL,` INT"},
	{"column-data-directory", "ALTER TABLE audit ADD COLUMN `n\n) DATA DIRECTORY='{marker}' #` INT"},
	{"comment-newline", "ALTER TABLE audit ADD COLUMN c INT COMMENT 'x\n*/ PARTITION BY HASH(id) PARTITIONS 2 /*'"},
	{"comment-quotes", "ALTER TABLE audit ADD COLUMN c INT COMMENT 'q''\"\\\\`;\n) PARTITION BY HASH(id) PARTITIONS 2 #'"},
	{"default-value", "ALTER TABLE audit ADD COLUMN d VARCHAR(80) DEFAULT 'x\n) PARTITION BY HASH(id) PARTITIONS 2 #'"},
	{"check-name", "ALTER TABLE audit ADD CONSTRAINT `ck\n) DATA DIRECTORY='{marker}' #` CHECK (id > 0)"},
	{"check-expression", "ALTER TABLE audit ADD CONSTRAINT ck2 CHECK (msg <> 'x\n) PARTITION BY HASH(id) PARTITIONS 2 #')"},
	{"index-name", "ALTER TABLE audit ADD INDEX `ix\n) PARTITION BY HASH(id) PARTITIONS 2 #` (msg)"},
	{"generated-column", "ALTER TABLE audit ADD COLUMN g VARCHAR(90) AS (CONCAT(msg, 'x\n) PARTITION BY HASH(id) PARTITIONS 2 #')) VIRTUAL"},
	{"foreign-key-name", "ALTER TABLE audit ADD COLUMN ref INT, ADD CONSTRAINT `fk\n) PARTITION BY HASH(id) PARTITIONS 2 #` FOREIGN KEY (ref) REFERENCES audit (id)"},
	{"table-comment", "ALTER TABLE audit COMMENT = 'x\n) PARTITION BY HASH(id) PARTITIONS 2 #'"},
	{"index-comment", "ALTER TABLE audit ADD INDEX ic (msg) COMMENT 'x\n) PARTITION BY HASH(id) PARTITIONS 2 #'"},
	{"enum-values", "ALTER TABLE audit ADD COLUMN e ENUM('a\n) PARTITION BY HASH(id) PARTITIONS 2 #', 'b''c')"},
	{"backtick-in-name", "ALTER TABLE audit ADD COLUMN `a``\n) PARTITION BY HASH(id) PARTITIONS 2 #` INT"},
	{"renamed-column", "ALTER TABLE audit CHANGE COLUMN msg `msg\n) PARTITION BY HASH(id) PARTITIONS 2 #` VARCHAR(40)"},
}

// TestReviewAttackAlterInjection: an altered table's export (applied with
// the mariadb client to a copy of production) and PROMOTE STRATEGY OURS
// give production exactly the sandbox's table — or the promote is refused
// and audit is as it was — and never partition it, add a column z, or
// write a file in the marker directory.
func TestReviewAttackAlterInjection(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "a", rvStartServer(t), true)
	schema := rvSchema{sql: "CREATE TABLE audit (id INT PRIMARY KEY, msg VARCHAR(40)); INSERT INTO audit VALUES (1, 'a'), (2, 'b');"}
	rvEachCase(t, e, rvAlterCases, func(c rvAlterCase) (string, rvSchema) { return c.name, schema }, rvAlterRun)
}

// rvAlterRun runs an ALTER case.
func rvAlterRun(t *testing.T, r *rvRun, c rvAlterCase) {
	sb := r.everyday(t, "")
	if _, err := rvTry(sb, r.expand(c.alter), "INSERT INTO audit (id) VALUES (3)"); err != nil {
		t.Logf("refused in the sandbox (fail closed): %s", mysqlErr(err))
		return
	}
	want := tableState(t, sb, r.db, "audit")
	prodBefore := tableState(t, r.e.root, r.db, "audit")
	r.allow("{db}.audit")
	if stmts, err := rvExportOrRefusal(sb); err != nil {
		t.Logf("EXPORT refused (fail closed): %s", mysqlErr(err))
	} else {
		r.applyExport(t, adminapi.ExportText(stmts), stmts, map[string]bool{r.db + ".audit": true})
		if got := tableState(t, r.e.replicaRoot, r.db, "audit"); got != want {
			t.Errorf("the export applied: audit is not the sandbox's:\n%s", lineDiff(want, got))
		}
		rvNotInjected(t, "the replica", r.e.replicaRoot, r.db)
	}
	_, err := rvTry(sb, "SANDBOX PROMOTE STRATEGY OURS")
	got := tableState(t, r.e.root, r.db, "audit")
	switch {
	case err != nil && got != prodBefore:
		t.Errorf("PROMOTE failed (%s) and changed production's audit:\n%s", mysqlErr(err), lineDiff(prodBefore, got))
	case err != nil:
		t.Logf("PROMOTE refused (fail closed): %s", mysqlErr(err))
	case got != want:
		t.Errorf("PROMOTE: production's audit is not the sandbox's:\n%s", lineDiff(want, got))
	}
	rvNotInjected(t, "production", r.e.root, r.db)
}

// rvExportOrRefusal runs SANDBOX EXPORT: its statements, or its error.
func rvExportOrRefusal(sb *sql.Conn) ([]string, error) {
	return firstColumn(context.Background(), sb, "SANDBOX EXPORT")
}

// rvNotInjected checks audit is not partitioned and has no column z.
func rvNotInjected(t *testing.T, where string, root rowQuerier, db string) {
	t.Helper()
	q := "SELECT (SELECT COUNT(*) FROM information_schema.PARTITIONS WHERE TABLE_SCHEMA = " + escQS(db) +
		" AND TABLE_NAME = 'audit' AND PARTITION_NAME IS NOT NULL), (SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " +
		escQS(db) + " AND TABLE_NAME = 'audit' AND COLUMN_NAME = 'z')"
	if got := rvText(rvQuery(root, q)); got != "0\t0" {
		t.Errorf("%s's audit: partitions and columns z: %s, want none", where, got)
	}
}

// ---- 5. promoted views never run as the promote account ----

// rvViewCase: the sandbox makes views (steps) reading {db}_2.t2, which the
// everyday account may read and a viewer of {db} may not.
type rvViewCase struct {
	name   string
	schema string // besides t and {db}_2.t2
	steps  []string
	views  []string
}

var rvViewCases = []rvViewCase{
	{name: "plain", steps: []string{"CREATE VIEW leak AS SELECT * FROM {db}_2.t2"}, views: []string{"leak"}},
	{name: "sql-security-definer", steps: []string{"CREATE SQL SECURITY DEFINER VIEW leak AS SELECT * FROM {db}_2.t2"}, views: []string{"leak"}},
	{name: "definer-clause", steps: []string{"CREATE DEFINER = CURRENT_USER SQL SECURITY DEFINER VIEW leak AS SELECT * FROM {db}_2.t2"},
		views: []string{"leak"}},
	{name: "updatable-check-option", steps: []string{"CREATE VIEW leak AS SELECT id, v FROM {db}_2.t2 WHERE v >= 0 WITH CHECK OPTION"},
		views: []string{"leak"}},
	{name: "replace-production-view", schema: "CREATE SQL SECURITY INVOKER VIEW leak AS SELECT * FROM t;",
		steps: []string{"CREATE OR REPLACE SQL SECURITY DEFINER VIEW leak AS SELECT * FROM {db}_2.t2"}, views: []string{"leak"}},
	{name: "alter-production-view", schema: "CREATE SQL SECURITY INVOKER VIEW leak AS SELECT * FROM t;",
		steps: []string{"ALTER SQL SECURITY DEFINER VIEW leak AS SELECT * FROM {db}_2.t2"}, views: []string{"leak"}},
	{name: "view-of-view", steps: []string{"CREATE VIEW inner1 AS SELECT * FROM {db}_2.t2", "CREATE VIEW leak AS SELECT * FROM inner1"},
		views: []string{"inner1", "leak"}},
}

// TestReviewAttackViewSecurity: a view the sandbox made over a table its
// account may read is exported without SQL SECURITY DEFINER, and promoted
// (STRATEGY OURS) either not at all or as SQL SECURITY INVOKER: an account
// without rights on the table neither reads nor updates it through the
// view.
func TestReviewAttackViewSecurity(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "v", rvStartServer(t), false)
	rvEachCase(t, e, rvViewCases, func(c rvViewCase) (string, rvSchema) {
		return c.name, rvSchema{dbs: []string{"{db}_2"}, sql: "CREATE TABLE t (id INT PRIMARY KEY, v INT); INSERT INTO t VALUES (100, 1); " +
			"CREATE DATABASE {db}_2; CREATE TABLE {db}_2.t2 (id INT PRIMARY KEY, v INT, secret VARCHAR(40)); " +
			"INSERT INTO {db}_2.t2 VALUES (1, 1, 'TOPSECRET'); " + c.schema}
	}, rvViewRun)
}

// rvDefinerText finds a definer's security or a DEFINER clause.
var rvDefinerText = regexp.MustCompile(`(?i)SQL\s+SECURITY\s+DEFINER|\bDEFINER\s*=`)

// rvViewRun runs a view case.
func rvViewRun(t *testing.T, r *rvRun, c rvViewCase) {
	viewer := r.direct(t, r.account(t, "w", "SELECT, UPDATE ON {db}.*"))
	sb := r.everyday(t, "")
	if j, err := rvTry(sb, rvExpandAll(r, c.steps)...); err != nil {
		t.Logf("refused in the sandbox (fail closed): %s: %s", c.steps[j], mysqlErr(err))
	}
	if stmts, err := rvExportOrRefusal(sb); err != nil {
		t.Logf("EXPORT refused (fail closed): %s", mysqlErr(err))
	} else {
		for _, s := range stmts {
			if rvDefinerText.MatchString(s) {
				t.Errorf("EXPORT runs a view as its definer: %.300q", s)
			}
		}
	}
	if _, err := rvTry(sb, "SANDBOX PROMOTE STRATEGY OURS"); err != nil {
		t.Logf("PROMOTE refused (fail closed): %s", mysqlErr(err))
	}
	for _, v := range c.views {
		r.allow("{db}." + v)
		sec := rvText(rvQuery(r.e.root, "SELECT SECURITY_TYPE FROM information_schema.VIEWS WHERE TABLE_SCHEMA = "+escQS(r.db)+" AND TABLE_NAME = "+escQS(v)))
		if sec != "" && sec != "INVOKER" {
			t.Errorf("production's view %s: SQL SECURITY %s, want INVOKER (or no view)", v, sec)
		}
		// Row 1 is t2's (t's is 100).
		q := escQI(r.db) + "." + escQI(v)
		if text := rvText(rvQuery(viewer, "SELECT id FROM "+q+" WHERE id = 1")); text == "1" {
			t.Errorf("an account without rights on %s_2 reads it through production's %s", r.db, v)
		}
		if res, err := viewer.ExecContext(context.Background(), "UPDATE "+q+" SET v = v + 1 WHERE id = 1"); err == nil {
			if n, _ := res.RowsAffected(); n > 0 {
				t.Errorf("an account without rights on %s_2 updates it through production's %s", r.db, v)
			}
		}
	}
}

// rvExpandAll is stmts with the run's names in.
func rvExpandAll(r *rvRun, stmts []string) []string {
	out := make([]string, len(stmts))
	for i, s := range stmts {
		out[i] = r.expand(s)
	}
	return out
}

// ---- 6. views of the system schemas and of the proxy's databases ----

// rvSystemViewCases: views (named views) the steps make reading
// information_schema, mysql, sys, performance_schema or the proxy's
// registry: directly, in a subquery, a CTE, a join, or through a view.
var rvSystemViewCases = []struct {
	name  string
	steps []string
	views []string
}{
	{"information-schema", []string{"CREATE VIEW isv AS SELECT TABLE_NAME FROM information_schema.tables"}, []string{"isv"}},
	{"information-schema-joined", []string{"CREATE VIEW isv AS SELECT t.id, s.SCHEMA_NAME FROM t JOIN information_schema.SCHEMATA s"}, []string{"isv"}},
	{"mysql", []string{"CREATE VIEW mv AS SELECT name FROM mysql.func"}, []string{"mv"}},
	{"sys", []string{"CREATE VIEW sv AS SELECT * FROM sys.version"}, []string{"sv"}},
	{"performance-schema", []string{"CREATE VIEW pv AS SELECT * FROM performance_schema.session_account_connect_attrs"}, []string{"pv"}},
	{"proxy-registry", []string{"CREATE VIEW fv AS SELECT * FROM _sqlfork_meta.sandboxes"}, []string{"fv"}},
	{"information-schema-subquery", []string{"CREATE VIEW isv AS SELECT (SELECT COUNT(*) FROM information_schema.TABLES) AS n"}, []string{"isv"}},
	{"information-schema-cte", []string{"CREATE VIEW isv AS WITH x AS (SELECT TABLE_NAME FROM information_schema.TABLES) SELECT * FROM x"},
		[]string{"isv"}},
	{"mysql-in-exists", []string{"CREATE VIEW mv AS SELECT id FROM t WHERE EXISTS (SELECT 1 FROM mysql.func)"}, []string{"mv"}},
	{"nested", []string{"CREATE VIEW a1 AS SELECT SCHEMA_NAME FROM information_schema.SCHEMATA", "CREATE VIEW b1 AS SELECT * FROM a1"},
		[]string{"a1", "b1"}},
}

// TestReviewAttackSystemViews: a view the sandbox made over
// information_schema, mysql, sys, performance_schema or the proxy's
// databases is neither exported (no CREATE VIEW of it; no statement names
// a system schema or a _sqlfork database) nor promoted (STRATEGY OURS:
// production has no such view, and no production view names a _sqlfork
// database).
func TestReviewAttackSystemViews(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "i", rvStartServer(t), false)
	schema := rvSchema{sql: "CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);"}
	for _, c := range rvSystemViewCases {
		t.Run(c.name, func(t *testing.T) {
			e.each(t, schema, func(t *testing.T, r *rvRun) {
				sb := r.everyday(t, "")
				if j, err := rvTry(sb, c.steps...); err != nil {
					t.Logf("refused in the sandbox (fail closed): %s: %s", c.steps[j], mysqlErr(err))
				}
				rvContained(t, r, sb, c.views)
			})
		})
	}
}

// rvContained checks that a sandbox's export names no system schema (but
// in a note) and no proxy database, and makes none of views; then
// promotes it (STRATEGY OURS), after which no production view names a
// proxy database (the invariant checks production has none of views).
func rvContained(t *testing.T, r *rvRun, sb *sql.Conn, views []string) {
	t.Helper()
	if stmts, err := rvExportOrRefusal(sb); err != nil {
		t.Logf("EXPORT refused (fail closed): %s", mysqlErr(err))
	} else {
		for _, s := range stmts {
			if strings.Contains(strings.ToLower(s), "_sqlfork") {
				t.Errorf("EXPORT names the proxy's databases: %.300q", s)
			}
			if !strings.HasPrefix(s, "-- ") && rvSystemName.MatchString(s) {
				t.Errorf("EXPORT names a system schema: %.300q", s)
			}
			for _, v := range views {
				if strings.Contains(s, " VIEW "+escQI(r.db)+"."+escQI(v)) {
					t.Errorf("EXPORT makes view %s: %.300q", v, s)
				}
			}
		}
	}
	if _, err := rvTry(sb, "SANDBOX PROMOTE STRATEGY OURS"); err != nil {
		t.Logf("PROMOTE refused (fail closed): %s", mysqlErr(err))
	}
	if got := rvText(rvQuery(r.e.root, "SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.VIEWS "+
		"WHERE TABLE_SCHEMA NOT LIKE '\\_sqlfork%' AND VIEW_DEFINITION LIKE '%\\_sqlfork%'")); got != "" {
		t.Errorf("production views name the proxy's databases: %s", got)
	}
}

// ---- 7. DDL of the system schemas ----

// rvSystemDDLCases: DDL of the system schemas in a sandbox (row: a row
// write, which a sandbox's fork may take, but no export or promote);
// repair puts the (throwaway) production server back if a promote applied
// it, so the cases after it start from the same server (rvbak holds
// copies of the tables attacked).
var rvSystemDDLCases = []struct {
	name, ddl string
	repair    []string
	row       bool
}{
	{"create-mysql-table", "CREATE TABLE mysql.user2 (id INT PRIMARY KEY)", []string{"DROP TABLE IF EXISTS mysql.user2"}, false},
	{"alter-mysql-table", "ALTER TABLE mysql.db ADD COLUMN z INT", []string{"ALTER TABLE mysql.db DROP COLUMN IF EXISTS z"}, false},
	{"rename-mysql-table", "RENAME TABLE mysql.func TO {db}.f", []string{"CREATE TABLE IF NOT EXISTS mysql.func LIKE rvbak.func",
		"INSERT IGNORE INTO mysql.func SELECT * FROM rvbak.func"}, false},
	{"truncate-mysql-table", "TRUNCATE TABLE mysql.proxies_priv", []string{"INSERT IGNORE INTO mysql.proxies_priv SELECT * FROM rvbak.proxies_priv"}, false},
	{"trigger-on-mysql-table", "CREATE TRIGGER mysql.tg BEFORE INSERT ON mysql.func FOR EACH ROW SET NEW.dl = 'x'",
		[]string{"DROP TRIGGER IF EXISTS mysql.tg"}, false},
	{"replace-sys-view", "CREATE OR REPLACE VIEW sys.version AS SELECT 'pwned' AS sys_version, 'pwned' AS mysql_version", []string{"restore sys.version"}, false},
	{"drop-sys-view", "DROP VIEW sys.version", []string{"restore sys.version"}, false},
	{"create-sys-table", "CREATE TABLE sys.t (id INT PRIMARY KEY)", []string{"DROP TABLE IF EXISTS sys.t"}, false},
	{"create-performance-schema-table", "CREATE TABLE performance_schema.x (id INT)", nil, false},
	{"create-information-schema-table", "CREATE TABLE information_schema.x (id INT)", nil, false},
	{"create-mysql-view", "CREATE VIEW mysql.v AS SELECT 1 AS a", []string{"DROP VIEW IF EXISTS mysql.v"}, false},
	{"alter-sys-table", "ALTER TABLE sys.sys_config ADD COLUMN z INT", []string{"ALTER TABLE sys.sys_config DROP COLUMN IF EXISTS z"}, false},
	{"rename-into-mysql", "RENAME TABLE t TO mysql.t", []string{"DROP TABLE IF EXISTS mysql.t"}, false},
	{"create-index-on-mysql-table", "CREATE INDEX i ON mysql.func (dl)", []string{"DROP INDEX IF EXISTS i ON mysql.func"}, false},
	{"create-like-into-sys", "CREATE TABLE sys.t2 LIKE t", []string{"DROP TABLE IF EXISTS sys.t2"}, false},
	// The row write DDL is measured against.
	{name: "insert-mysql-row", ddl: "INSERT INTO mysql.func VALUES ('rvf', 0, 'rv.so', 'function')",
		repair: []string{"DELETE FROM mysql.func WHERE name = 'rvf'"}, row: true},
	{"drop-mysql-global-priv", "DROP TABLE mysql.global_priv", []string{"CREATE TABLE IF NOT EXISTS mysql.global_priv LIKE rvbak.global_priv",
		"INSERT IGNORE INTO mysql.global_priv SELECT * FROM rvbak.global_priv"}, false},
}

// TestReviewAttackSystemSchemaDDL: DDL of mysql, sys, performance_schema
// and information_schema in a sandbox is refused as writes of their rows
// are, EXPORT never names those schemas, and PROMOTE (STRATEGY OURS) never
// changes them. Production is a server of the test's own: a promote that
// did would break it for every other test.
func TestReviewAttackSystemSchemaDDL(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "s", rvStartServer(t), false)
	rvExec(t, e.root, "CREATE DATABASE rvbak; CREATE TABLE rvbak.global_priv LIKE mysql.global_priv; "+
		"INSERT INTO rvbak.global_priv SELECT * FROM mysql.global_priv; CREATE TABLE rvbak.func LIKE mysql.func; "+
		"CREATE TABLE rvbak.proxies_priv LIKE mysql.proxies_priv; INSERT INTO rvbak.proxies_priv SELECT * FROM mysql.proxies_priv")
	sysVersion := rvQuery(e.root, "SHOW CREATE VIEW sys.version")[0][1]
	schema := rvSchema{sql: "CREATE TABLE t (id INT PRIMARY KEY); INSERT INTO t VALUES (1);"}
	for _, c := range rvSystemDDLCases {
		t.Run(c.name, func(t *testing.T) {
			e.each(t, schema, func(t *testing.T, r *rvRun) {
				t.Cleanup(func() { // after the invariant
					for _, q := range c.repair {
						if q == "restore sys.version" {
							q = strings.Replace(sysVersion, "CREATE ", "CREATE OR REPLACE ", 1)
						}
						_, _ = r.e.root.Exec(r.expand(q))
					}
				})
				sb := r.everyday(t, "")
				if _, err := rvTry(sb, r.expand(c.ddl)); err == nil && !c.row {
					t.Errorf("%s in a sandbox: succeeded, want it refused", c.ddl)
				}
				rvContained(t, r, sb, nil)
			})
		})
	}
}

// ---- 8. sjis, gbk and big5 next to latin1 ----

// rvCharsetCase: a table with an sjis, a gbk, a big5 and a latin1 column
// (key: its key clause), changed by the same three statements; DIFF
// SUMMARY counts want (inserted, updated, deleted); promoted by strategy.
type rvCharsetCase struct {
	name, key string
	want      [3]int64
	strategy  string
}

var rvCharsetCases = []rvCharsetCase{
	{name: "int-key", key: ", PRIMARY KEY (id)", want: [3]int64{1, 1, 1}, strategy: "FAIL"},
	{name: "sjis-key", key: ", PRIMARY KEY (sj)", want: [3]int64{1, 1, 1}, strategy: "FAIL"},
	{name: "big5-unique-key", key: ", UNIQUE KEY (b5)", want: [3]int64{1, 1, 1}, strategy: "FAIL"},
	{name: "no-key", want: [3]int64{2, 0, 2}, strategy: "FAIL OVERWRITE cs"}, // compared whole
}

// TestReviewAttackCharsets: DIFF, EXPORT and PROMOTE of a table with sjis,
// gbk and big5 columns next to a latin1 one work (no 1271 "illegal mix of
// collations"), and the values — with characters whose second byte is a
// backslash in those character sets — round-trip through the export
// (applied with the mariadb client) and the promote (of the account that
// may write production; the least-privilege one's is refused).
func TestReviewAttackCharsets(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "c", rvStartServer(t), true)
	rvEachCase(t, e, rvCharsetCases, func(c rvCharsetCase) (string, rvSchema) {
		return c.name, rvSchema{sql: "CREATE TABLE cs (id INT NOT NULL, sj VARCHAR(20) CHARACTER SET sjis NOT NULL, gb VARCHAR(20) CHARACTER SET gbk, " +
			"b5 VARCHAR(20) CHARACTER SET big5 NOT NULL, l1 VARCHAR(20) CHARACTER SET latin1" + c.key + "); " +
			"INSERT INTO cs VALUES (1, 'ソ表', '中文', '許功', 'é'), (2, 'a', 'b', 'c', 'd'), (3, 'x', 'y', 'z', 'w');"}
	}, rvCharsetRun)
}

// rvCharsetRun runs a character set case.
func rvCharsetRun(t *testing.T, r *rvRun, c rvCharsetCase) {
	sb := r.everyday(t, "")
	for _, s := range []string{"UPDATE cs SET gb = '数据', l1 = 'ñ' WHERE id = 1", "INSERT INTO cs VALUES (4, '構ソ', '中', '功', 'ü')",
		"DELETE FROM cs WHERE id = 3"} {
		mustExecC(t, sb, s)
	}
	got := diffSummary(t, sb, "SANDBOX DIFF SUMMARY")[r.db+".cs"]
	if [3]int64{got.ins, got.upd, got.del} != c.want {
		t.Errorf("DIFF SUMMARY: %+v, want inserted, updated, deleted %v", got, c.want)
	}
	diffDetail(t, sb, "SANDBOX DIFF")
	stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
	r.applyExport(t, adminapi.ExportText(stmts), stmts, map[string]bool{r.db + ".cs": true})
	compareWithReplica(t, sb, r.e.replicaRoot, r.db, []string{"cs"}, "the export applied")
	r.promote(t, sb, "SANDBOX PROMOTE STRATEGY "+c.strategy, "cs")
}

// ---- 9. referential integrity ----

// rvRICase: the sandbox's steps; then production's (root, on production
// and the replica); orphan: a query counting the rows the export or the
// promote would orphan, which must fail (1452) and leave none; else both
// must work and give tables the sandbox's rows.
type rvRICase struct {
	name, schema      string
	steps, production []string
	orphan            string
	tables            []string
}

const (
	rvParentChild = "CREATE TABLE parent (id INT PRIMARY KEY); INSERT INTO parent VALUES (1), (2); " +
		"CREATE TABLE child (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES parent (id));"
	rvTree = "CREATE TABLE tree (id INT PRIMARY KEY, parent INT NULL, FOREIGN KEY (parent) REFERENCES tree (id)); "
)

var rvRICases = []rvRICase{
	{name: "orphan-child", schema: rvParentChild, steps: []string{"INSERT INTO child VALUES (10, 2)"},
		production: []string{"DELETE FROM parent WHERE id = 2"}, orphan: "SELECT COUNT(*) FROM {db}.child WHERE id = 10"},
	{name: "orphan-in-a-tree", schema: rvTree + "INSERT INTO tree VALUES (1, NULL), (2, 1);", steps: []string{"INSERT INTO tree VALUES (3, 2)"},
		production: []string{"DELETE FROM tree WHERE id = 2"}, orphan: "SELECT COUNT(*) FROM {db}.tree WHERE id = 3"},
	{name: "orphan-by-update", schema: rvParentChild + "INSERT INTO child VALUES (10, 1);", steps: []string{"UPDATE child SET pid = 2 WHERE id = 10"},
		production: []string{"DELETE FROM parent WHERE id = 2"}, orphan: "SELECT COUNT(*) FROM {db}.child WHERE pid = 2"},
	{name: "tree-child-sorts-first", schema: rvTree + "INSERT INTO tree VALUES (1, NULL);",
		steps: []string{"INSERT INTO tree VALUES (9, 1)", "INSERT INTO tree VALUES (2, 9)", "INSERT INTO tree VALUES (5, 2)"}, tables: []string{"tree"}},
	{name: "tree-delete-child-sorts-last", schema: rvTree + "INSERT INTO tree VALUES (1, NULL), (3, 1), (5, 3), (7, 5);",
		steps: []string{"DELETE FROM tree WHERE id = 7", "DELETE FROM tree WHERE id = 5", "DELETE FROM tree WHERE id = 3"}, tables: []string{"tree"}},
	// Tables referencing each other: rows that refer to each other are
	// written in an order (or with a NULL first) that keeps the checks on.
	{name: "two-tables-cycle", schema: "CREATE TABLE a (id INT PRIMARY KEY, b_id INT NULL); CREATE TABLE b (id INT PRIMARY KEY, a_id INT NULL, " +
		"FOREIGN KEY (a_id) REFERENCES a (id)); ALTER TABLE a ADD FOREIGN KEY (b_id) REFERENCES b (id);",
		steps:  []string{"INSERT INTO a VALUES (1, NULL)", "INSERT INTO b VALUES (1, 1)", "UPDATE a SET b_id = 1 WHERE id = 1"},
		tables: []string{"a", "b"}},
	{name: "tree-reparent", schema: rvTree + "INSERT INTO tree VALUES (5, NULL), (6, 5), (7, 5);",
		steps: []string{"INSERT INTO tree VALUES (1, 5)", "UPDATE tree SET parent = 1 WHERE id IN (6, 7)", "DELETE FROM tree WHERE id = 5 AND 0"}, tables: []string{"tree"}},
}

// TestReviewAttackReferentialIntegrity: EXPORT never turns foreign key
// checks off; rows whose parent production deleted since make applying the
// export (with the mariadb client) and PROMOTE fail with 1452 rather than
// leave orphans; a self-referencing tree whose children's keys sort before
// their parents' exports and promotes as the sandbox has it.
func TestReviewAttackReferentialIntegrity(t *testing.T) {
	t.Parallel() // its own servers: see rvStartServer
	e := newRVEnv(t, "r", rvStartServer(t), true)
	rvEachCase(t, e, rvRICases, func(c rvRICase) (string, rvSchema) { return c.name, rvSchema{sql: c.schema} }, rvRIRun)
}

// rvRIRun runs a referential integrity case.
func rvRIRun(t *testing.T, r *rvRun, c rvRICase) {
	sb := r.everyday(t, "")
	for _, s := range c.steps {
		mustExecC(t, sb, s)
	}
	for _, q := range c.production {
		rvExec(t, r.e.root, "USE "+escQI(r.db)+"; "+q)
		r.onReplica = append(r.onReplica, q)
	}
	r.resetReplica(t)
	r.rebase(t)
	stmts := sandboxExport(t, sb, "SANDBOX EXPORT")
	for _, s := range stmts {
		if rvFKChecksOff.MatchString(s) {
			t.Errorf("EXPORT turns foreign key checks off: %q", s)
		}
	}
	text := adminapi.ExportText(stmts)
	if c.orphan == "" {
		touched := map[string]bool{}
		for _, tbl := range c.tables {
			touched[r.db+"."+tbl] = true
		}
		r.applyExport(t, text, stmts, touched)
		compareWithReplica(t, sb, r.e.replicaRoot, r.db, c.tables, "the export applied")
		r.promote(t, sb, "SANDBOX PROMOTE", c.tables...)
		return
	}
	r.replicaUsed = true
	res := r.e.apply(t, text, "")
	if res.exit == 0 || !strings.Contains(res.stderr, "1452") {
		t.Errorf("the export applied: mariadb exited %d (%s), want ERROR 1452", res.exit, strings.TrimSpace(res.stderr))
	}
	if n := rvText(rvQuery(r.e.replicaRoot, r.expand(c.orphan))); n != "0" {
		t.Errorf("the export applied left orphans: %s", n)
	}
	_, err := rvTry(sb, "SANDBOX PROMOTE")
	switch {
	case !r.mayWrite():
		checkErr(t, "SANDBOX PROMOTE by an account that may not write production", err, []uint16{1142}, "42000", "")
	case err == nil || !strings.Contains(err.Error(), "1452") && !strings.Contains(err.Error(), "foreign key constraint fails"):
		t.Errorf("PROMOTE: %v, want it to fail with 1452", err)
	}
}
