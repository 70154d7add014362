package sessiontest

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// step is one statement on a connection of the fake and what it must
// answer: rows (for a query), an affected count, or a server error.
type step struct {
	sql   string
	query bool
	rows  [][]string
	n     uint64
	code  uint16
}

// run runs steps on c in turn.
func run(t *testing.T, c *FakeSide, steps []step) {
	t.Helper()
	ctx := context.Background()
	for _, s := range steps {
		var got [][]string
		var n uint64
		var err error
		if s.query {
			var rows [][]*string
			rows, err = c.Query(ctx, s.sql)
			got = cellsOf(rows)
		} else {
			n, err = c.Exec(ctx, s.sql)
		}
		code, _, _, _ := Code(err)
		switch {
		case s.code != 0 && code != s.code:
			t.Errorf("%s: %v, want error %d", s.sql, err, s.code)
		case s.code == 0 && err != nil:
			t.Errorf("%s: %v", s.sql, err)
		case s.code == 0 && s.query && !reflect.DeepEqual(got, s.rows):
			t.Errorf("%s = %q, want %q", s.sql, got, s.rows)
		case s.code == 0 && !s.query && n != s.n:
			t.Errorf("%s affected %d, want %d", s.sql, n, s.n)
		}
	}
}

func dial(t *testing.T, u *Upstream) *FakeSide {
	t.Helper()
	c, err := u.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSettings: what the setters set is what the server then reports.
func TestSettings(t *testing.T) {
	u := NewUpstream()
	u.SetVersion("11.4.2-MariaDB")
	u.SetLowerCaseTableNames(1)
	u.SetGrants("GRANT ALL PRIVILEGES ON *.* TO `x`@`%`")
	u.SetTriggerGrants("*", "app")
	u.AddView("app", "v", "select 1 AS `a`")
	u.AddView("app", "hidden", "")
	u.AddFunction("app", "f")
	u.AddUDF("udf1")
	u.AddTable(Table{DB: "app", Name: "t", Triggers: 1})
	c := dial(t, u)
	run(t, c, []step{
		{sql: "SELECT VERSION(), @@lower_case_table_names", query: true, rows: [][]string{{"11.4.2-MariaDB", "1"}}},
		{sql: "SHOW GRANTS FOR CURRENT_USER()", query: true, rows: [][]string{{"GRANT ALL PRIVILEGES ON *.* TO `x`@`%`"}}},
		{sql: "SELECT '*' FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE = 'TRIGGER' " +
			"UNION ALL SELECT TABLE_SCHEMA FROM information_schema.SCHEMA_PRIVILEGES WHERE PRIVILEGE_TYPE = 'TRIGGER'",
			query: true, rows: [][]string{{"*"}, {"app"}}},
		{sql: "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'app'", query: true,
			rows: [][]string{{"hidden", "NULL"}, {"v", "select 1 AS `a`"}}},
		{sql: "SELECT ROUTINE_SCHEMA, ROUTINE_NAME, ROUTINE_TYPE FROM information_schema.ROUTINES", query: true,
			rows: [][]string{{"app", "f", "FUNCTION"}}},
		{sql: "SELECT name FROM mysql.func", query: true, rows: [][]string{{"udf1"}}},
		{sql: "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_TABLE = 't'", query: true,
			rows: [][]string{{"t_trg0"}}},
		{sql: "SELECT CURRENT_USER()", query: true, rows: [][]string{{"sqlfork@%"}}},
		{sql: "SELECT CURRENT_ROLE()", query: true, rows: [][]string{{"NULL"}}},
		{sql: "SELECT ROLE_NAME FROM information_schema.APPLICABLE_ROLES WHERE GRANTEE = CURRENT_USER()", query: true, rows: [][]string{}},
		{sql: "SELECT @@sql_mode, @@character_set_client, @@collation_connection", query: true,
			rows: [][]string{{"STRICT_TRANS_TABLES", "utf8mb4", "utf8mb4_general_ci"}}},
		{sql: "SET SESSION sql_mode = ''"},
		{sql: "SELECT PARTITION_NAME FROM information_schema.PARTITIONS", query: true, rows: [][]string{}},
	})
	if !u.HasSchema("app") || u.HasSchema("nope") || !u.HasTable("app", "v") || u.HasTable("app", "nope") {
		t.Error("HasSchema/HasTable")
	}
	if v, ok := u.Describe("app", "v"); !ok || v.Type != "VIEW" || v.Engine != "" || v.Definition != "select 1 AS `a`" {
		t.Errorf("Describe(v) = %+v, %v", v, ok)
	}
	if tb, ok := u.Describe("app", "t"); !ok || tb.Type != "BASE TABLE" || tb.Engine != "InnoDB" || len(tb.Columns) != 1 {
		t.Errorf("Describe(t) = %+v, %v (want the defaults)", tb, ok)
	}
	if _, ok := u.Describe("app", "nope"); ok {
		t.Error("Describe of a missing table")
	}
	if got := u.Schemas(); !reflect.DeepEqual(got, []string{"app", "information_schema", "mysql"}) {
		t.Errorf("Schemas() = %q", got)
	}
}

// TestForkStatements: the statements a fork sends — schema defaults,
// triggers, views, IS_USED_LOCK — do what MariaDB does with them.
func TestForkStatements(t *testing.T) {
	u := NewUpstream()
	u.AddTable(Table{DB: "app", Name: "t", Rows: 2})
	c := dial(t, u)
	holder := dial(t, u)
	trgList := "SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT, SQL_MODE, CHARACTER_SET_CLIENT, " +
		"COLLATION_CONNECTION FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = 'sb' AND EVENT_OBJECT_TABLE = 't' ORDER BY 1"
	defaults := "SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'app' " +
		"UNION ALL SELECT SCHEMA_NAME, DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'sb'"
	run(t, c, []step{
		{sql: defaults, query: true, rows: [][]string{{"app", "NULL", "NULL"}}},
		{sql: "CREATE DATABASE IF NOT EXISTS `sb`", n: 1},
		{sql: defaults, query: true, rows: [][]string{{"app", "NULL", "NULL"}, {"sb", "NULL", "NULL"}}},
		{sql: "CREATE TABLE `sb`.`t` LIKE `app`.`t`"},
		{sql: trgList, query: true, rows: [][]string{}},
		{sql: "CREATE TRIGGER `sb`.`t_bi` BEFORE INSERT ON `sb`.`t` FOR EACH ROW SET NEW.id = 1"},
		{sql: "CREATE TRIGGER sb.t_ai AFTER INSERT ON sb.t FOR EACH ROW PRECEDES `x` SET @a = 1"},
		{sql: "CREATE TRIGGER `sb`.`n_bi` BEFORE INSERT ON `sb`.`nope` FOR EACH ROW SET NEW.id = 1", code: 1146},
		{sql: trgList, query: true, rows: [][]string{
			{"t_trg0", "BEFORE", "INSERT", "SET NEW.id = NEW.id", "STRICT_TRANS_TABLES", "utf8mb4", "utf8mb4_general_ci"},
			{"t_trg1", "BEFORE", "INSERT", "SET NEW.id = NEW.id", "STRICT_TRANS_TABLES", "utf8mb4", "utf8mb4_general_ci"}}},
		{sql: "CREATE OR REPLACE SQL SECURITY INVOKER VIEW `sb`.`v` AS select `sb`.`t`.`id` AS `id` from `sb`.`t`"},
		{sql: "CREATE OR REPLACE VIEW `nodb`.`v` AS select 1", code: 1049},
		{sql: "SELECT TABLE_NAME, VIEW_DEFINITION FROM information_schema.VIEWS WHERE TABLE_SCHEMA = 'sb'", query: true,
			rows: [][]string{{"v", "select `sb`.`t`.`id` AS `id` from `sb`.`t`"}}},
		{sql: "ALTER TABLE `sb`.`t` COMMENT = 'forked'"},
		{sql: "ALTER TABLE `sb`.`nope` COMMENT = 'x'", code: 1146},
		{sql: "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sb' AND TABLE_NAME = 't'", query: true,
			rows: [][]string{{"forked"}}},
		{sql: "SELECT IS_USED_LOCK('k')", query: true, rows: [][]string{{"NULL"}}},
	})
	run(t, holder, []step{{sql: "SELECT GET_LOCK('k', 0)", query: true, rows: [][]string{{"1"}}}})
	run(t, c, []step{{sql: "SELECT IS_USED_LOCK('k')", query: true, rows: [][]string{{"1"}}}})
	_ = holder.Close()
	run(t, c, []step{{sql: "SELECT IS_USED_LOCK('k')", query: true, rows: [][]string{{"NULL"}}}})
	if w := u.ProductionWrites("sb"); len(w) != 0 {
		t.Errorf("production written: %q", w)
	}
	if _, err := c.Exec(context.Background(), "ALTER TABLE `sb`.`t` ENGINE = 'Aria'"); !errors.As(err, new(*UnknownError)) {
		t.Errorf("an ALTER the fake does not emulate: %v", err)
	}
}

// registry creates registry-like tables in the schema m, as the manager
// does, and fills them.
func registry(t *testing.T, c *FakeSide) {
	t.Helper()
	run(t, c, []step{
		{sql: "CREATE DATABASE IF NOT EXISTS `m`", n: 1},
		{sql: "CREATE TABLE IF NOT EXISTS `m`.sandboxes (id VARCHAR(16) NOT NULL PRIMARY KEY, name VARCHAR(64) NOT NULL UNIQUE, " +
			"owner VARCHAR(128) NOT NULL, kept TINYINT NOT NULL DEFAULT 0, created_at DATETIME(6) NOT NULL, expires_at DATETIME(6) NULL, " +
			"last_active DATETIME(6) NOT NULL, lease_until DATETIME(6) NULL, changed_at DATETIME(6) NULL, promoted_at DATETIME(6) NULL, " +
			"clean_at DATETIME(6) NULL) DEFAULT CHARSET=utf8mb4"},
		{sql: "CREATE TABLE IF NOT EXISTS `m`.holders (sandbox_id VARCHAR(16) NOT NULL, proxy_id VARCHAR(32) NOT NULL, " +
			"lease_until DATETIME(6) NOT NULL, PRIMARY KEY (sandbox_id, proxy_id))"},
		{sql: "CREATE TABLE IF NOT EXISTS `m`.tables (sandbox_id VARCHAR(16) NOT NULL, db VARCHAR(64) NOT NULL, tbl VARCHAR(64) NOT NULL, " +
			"kind VARCHAR(16) NOT NULL, phys_db VARCHAR(64) NOT NULL, phys_tbl VARCHAR(64) NOT NULL, bytes BIGINT NOT NULL DEFAULT 0, " +
			"PRIMARY KEY (sandbox_id, db, tbl))"},
		{sql: "CREATE TABLE IF NOT EXISTS `m`.generations (sandbox_id VARCHAR(16) NOT NULL PRIMARY KEY, generation BIGINT NOT NULL DEFAULT 0)"},
		{sql: "CREATE TABLE IF NOT EXISTS `m`.readers (sandbox_id VARCHAR(16) NOT NULL, proxy_id VARCHAR(32) NOT NULL, " +
			"valid_until DATETIME(6) NOT NULL, PRIMARY KEY (sandbox_id, proxy_id))"},
		{sql: "INSERT INTO `m`.sandboxes (id, name, owner, created_at, expires_at, last_active, lease_until) VALUES " +
			"('a', 'one', 'u', '2024-01-01 00:00:00.000000', NULL, '2024-01-02 00:00:00.000000', '2030-01-01 00:00:00.000000')", n: 1},
		{sql: "INSERT INTO `m`.sandboxes (id, name, owner, kept, created_at, last_active) VALUES " +
			"('b', 'two', 'v', 1, '2024-01-01 00:00:00.000000', '2024-01-03 00:00:00.000000')", n: 1},
		{sql: "INSERT INTO `m`.holders (sandbox_id, proxy_id, lease_until) VALUES ('a', 'p1', '2030-01-01 00:00:00.000000')", n: 1},
		{sql: "INSERT INTO `m`.holders (sandbox_id, proxy_id, lease_until) VALUES ('a', 'p2', '2020-01-01 00:00:00.000000')", n: 1},
		{sql: "INSERT INTO `m`.tables (sandbox_id, db, tbl, kind, phys_db, phys_tbl, bytes) VALUES ('a', 'app', 't', 'fork', '_sf_a_app', 't', 100)", n: 1},
		{sql: "INSERT INTO `m`.tables (sandbox_id, db, tbl, kind, phys_db, phys_tbl, bytes) VALUES ('a', 'app', 'u', 'fork', '_sf_a_app', 'u', 20)", n: 1},
		{sql: "INSERT INTO `m`.tables (sandbox_id, db, tbl, kind, phys_db, phys_tbl) VALUES ('a', 'app', 'x', 'absent', '_sf_a_app', 'x')", n: 1},
		{sql: "INSERT INTO `m`.generations (sandbox_id, generation) VALUES ('a', 1)", n: 1},
	})
}

// TestRegistryQueries: the registry's joins — expiry, listing, orphans,
// generation, sync leases — answer from the stored rows.
func TestRegistryQueries(t *testing.T) {
	u := NewUpstream()
	u.AddTable(Table{DB: "_sf_a_app", Name: "t"})
	u.AddTable(Table{DB: "_sf_a_app", Name: "stray"})
	u.AddTable(Table{DB: "xsf_b", Name: "t"})
	c := dial(t, u)
	registry(t, c)
	run(t, c, []step{
		{sql: "SELECT s.id, s.name, s.kept, s.expires_at, s.last_active, s.lease_until, (SELECT COUNT(*) FROM `m`.holders h " +
			"WHERE h.sandbox_id = s.id AND h.lease_until > '2025-01-01 00:00:00.000000') FROM `m`.sandboxes s", query: true,
			rows: [][]string{
				{"a", "one", "0", "NULL", "2024-01-02 00:00:00.000000", "2030-01-01 00:00:00.000000", "1"},
				{"b", "two", "1", "NULL", "2024-01-03 00:00:00.000000", "NULL", "0"}}},
		// The registry's marks keep the later time.
		{sql: "UPDATE `m`.sandboxes SET changed_at = GREATEST(COALESCE(changed_at, '2024-02-02 00:00:00.000000'), '2024-02-02 00:00:00.000000') " +
			"WHERE id = 'a'", n: 1},
		{sql: "UPDATE `m`.sandboxes SET changed_at = GREATEST(COALESCE(changed_at, '2024-02-01 00:00:00.000000'), '2024-02-01 00:00:00.000000') " +
			"WHERE id = 'a'", n: 1},
		{sql: "SELECT s.id, s.name, s.kept, s.owner, s.created_at, s.expires_at, COUNT(CASE WHEN t.kind <> 'dropped' THEN 1 END), " +
			"COALESCE(SUM(CASE WHEN t.kind <> 'dropped' THEN t.bytes END), 0), COUNT(t.tbl), s.changed_at, s.promoted_at, s.clean_at " +
			"FROM `m`.sandboxes s LEFT JOIN `m`.tables t ON t.sandbox_id = s.id AND t.kind IN ('fork', 'created', 'dropped') GROUP BY s.id", query: true,
			rows: [][]string{
				{"a", "one", "0", "u", "2024-01-01 00:00:00.000000", "NULL", "2", "120", "2", "2024-02-02 00:00:00.000000", "NULL", "NULL"},
				{"b", "two", "1", "v", "2024-01-01 00:00:00.000000", "NULL", "0", "0", "0", "NULL", "NULL", "NULL"}}},
		// The escape character makes _ literal: xsf_b is not a sandbox schema.
		{sql: "SELECT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.TABLES t LEFT JOIN `m`.tables r " +
			"ON r.phys_db = t.TABLE_SCHEMA AND r.phys_tbl = t.TABLE_NAME WHERE t.TABLE_SCHEMA LIKE '!_sf%' ESCAPE '!' " +
			"AND t.TABLE_SCHEMA <> 'm' AND r.sandbox_id IS NULL", query: true, rows: [][]string{{"_sf_a_app", "stray"}}},
		{sql: "SELECT t.TABLE_SCHEMA, t.TABLE_NAME FROM information_schema.TABLES t LEFT JOIN `m`.tables r " +
			"ON r.phys_db = t.TABLE_SCHEMA AND r.phys_tbl = t.TABLE_NAME WHERE t.TABLE_SCHEMA LIKE '_sf%' " +
			"AND t.TABLE_SCHEMA <> 'm' AND r.sandbox_id IS NULL", query: true, rows: [][]string{{"_sf_a_app", "stray"}, {"xsf_b", "t"}}},
		{sql: "SELECT s.name, s.owner, s.created_at, g.generation FROM `m`.sandboxes s LEFT JOIN `m`.generations g " +
			"ON g.sandbox_id = s.id WHERE s.id = 'a'", query: true, rows: [][]string{{"one", "u", "2024-01-01 00:00:00.000000", "1"}}},
		{sql: "SELECT s.name, s.owner, s.created_at, g.generation FROM `m`.sandboxes s LEFT JOIN `m`.generations g " +
			"ON g.sandbox_id = s.id WHERE s.id = 'b'", query: true, rows: [][]string{{"two", "v", "2024-01-01 00:00:00.000000", "NULL"}}},
		{sql: "SELECT s.name, s.owner, s.created_at, g.generation FROM `m`.nope s LEFT JOIN `m`.generations g " +
			"ON g.sandbox_id = s.id WHERE s.id = 'b'", query: true, code: 1146},
		// Counters go up in place.
		{sql: "INSERT INTO `m`.generations (sandbox_id, generation) VALUES ('a', 1) ON DUPLICATE KEY UPDATE generation = generation + 1", n: 2},
		{sql: "INSERT INTO `m`.generations (sandbox_id, generation) VALUES ('c', 5) ON DUPLICATE KEY UPDATE generation = generation + 1", n: 1},
		{sql: "SELECT sandbox_id, generation FROM `m`.generations", query: true, rows: [][]string{{"a", "2"}, {"c", "5"}}},
		{sql: "REPLACE INTO `m`.readers (sandbox_id, proxy_id, valid_until) VALUES ('a', 'p1', UTC_TIMESTAMP(6) + INTERVAL 60000000 MICROSECOND)", n: 1},
		// Only others' leases count: p1's own leaves none.
		{sql: "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MAX(valid_until)) FROM `m`.readers WHERE sandbox_id = 'a' AND proxy_id <> 'p1'",
			query: true, rows: [][]string{{"NULL"}}},
		{sql: "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MAX(valid_until)) FROM `m`.nope WHERE sandbox_id = 'a' AND proxy_id <> 'p1'",
			query: true, code: 1146},
	})
	rows, err := c.Query(context.Background(), "SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), MAX(valid_until)) FROM `m`.readers "+
		"WHERE sandbox_id = 'a' AND proxy_id <> 'p2'")
	if err != nil || len(rows) != 1 || rows[0][0] == nil {
		t.Fatalf("lease left: %v, %v", rows, err)
	}
	// The lease was taken a moment ago for 60 s: what is left is in (0, 60 s].
	if left, err := strconv.ParseInt(*rows[0][0], 10, 64); err != nil || left <= 0 || left > 60_000_000 {
		t.Errorf("lease left %s µs, want in (0, 60000000]", *rows[0][0])
	}
	// Registry rows read back through Query; Exec changes them unlogged.
	if n, err := u.Exec("DELETE FROM `m`.holders WHERE sandbox_id = 'a'"); err != nil || n != 2 {
		t.Errorf("Exec DELETE = %d, %v", n, err)
	}
	if rows, err := u.Query("SELECT COUNT(*) FROM `m`.holders"); err != nil || *rows[0][0] != "0" {
		t.Errorf("holders left: %v, %v", cellsOf(rows), err)
	}
	if u.Count("DELETE FROM `m`.holders") != 0 {
		t.Error("Upstream.Exec was logged")
	}
}

// TestLogQueries: the log answers which statements ran, Wait waits for
// one, and a Dialer's connections are the server's.
func TestLogQueries(t *testing.T) {
	u := NewUpstream()
	ctx := context.Background()
	d := u.Dialer()
	sc, err := d(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	c := sc.(*FakeSide)
	if c.ID() != 1 || u.Dials() != 1 {
		t.Errorf("first connection is %d, %d dialled", c.ID(), u.Dials())
	}
	run(t, c, []step{
		{sql: "CREATE DATABASE IF NOT EXISTS `m`", n: 1},
		{sql: "CREATE DATABASE IF NOT EXISTS `app`", n: 1},
		{sql: "SELECT VERSION(), @@lower_case_table_names", query: true, rows: [][]string{{DefaultVersion, "0"}}},
	})
	if got := u.Matching("^CREATE DATABASE"); len(got) != 2 || u.Count("^CREATE DATABASE") != 2 || u.Count("nothing") != 0 {
		t.Errorf("Matching = %q", got)
	}
	if w := u.ProductionWrites("m"); !reflect.DeepEqual(w, []string{"CREATE DATABASE IF NOT EXISTS `app`"}) {
		t.Errorf("ProductionWrites = %q", w)
	}
	log := u.Log()
	if len(log) != 3 || log[2].Conn != 1 || !log[2].Query || log[0].Query || !reflect.DeepEqual(log[0].Changed, []string{"m"}) {
		t.Errorf("Log = %+v", log)
	}
	// Wait returns at once for a statement that ran …
	if err := u.Wait(ctx, "^SELECT VERSION"); err != nil {
		t.Error(err)
	}
	// … waits for one that runs later …
	done := make(chan error, 1)
	waiting := make(chan struct{})
	go func() {
		close(waiting)
		done <- u.Wait(ctx, "^CREATE DATABASE IF NOT EXISTS `later`$")
	}()
	<-waiting
	run(t, c, []step{{sql: "CREATE DATABASE IF NOT EXISTS `later`", n: 1}})
	select {
	case err := <-done:
		if err != nil {
			t.Error(err)
		}
	case <-time.After(testkit.WaitLimit):
		t.Fatal("Wait did not see the statement")
	}
	// … and gives up when its context ends.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := u.Wait(cctx, "^never$"); !errors.Is(err, context.Canceled) {
		t.Errorf("Wait with a cancelled context: %v", err)
	}
	u.ClearLog()
	if len(u.Log()) != 0 {
		t.Error("ClearLog kept statements")
	}
	// A statement on a cancelled context fails, and a dial too.
	if _, err := c.Exec(cctx, "CREATE DATABASE IF NOT EXISTS `x`"); !errors.Is(err, context.Canceled) || u.HasSchema("x") {
		t.Errorf("Exec on a cancelled context: %v", err)
	}
	if _, err := d(cctx); !errors.Is(err, context.Canceled) {
		t.Errorf("dial on a cancelled context: %v", err)
	}
	u.FailDials(1, Err(1040, "08004", "Too many connections"))
	if _, err := d(ctx); err == nil {
		t.Error("Dialer ignored FailDials")
	}
	// Server errors say so, and unwrap to the MySQL error.
	err = Err(1205, "HY000", "busy %d", 1)
	var se interface{ ServerError() bool }
	if !errors.As(err, &se) || !se.ServerError() || !strings.Contains(err.Error(), "busy 1") {
		t.Errorf("Err = %v", err)
	}
	if code, state, msg, ok := Code(err); !ok || code != 1205 || state != "HY000" || msg != "busy 1" {
		t.Errorf("Code = %d %s %s %v", code, state, msg, ok)
	}
	if _, _, _, ok := Code(errors.New("plain")); ok {
		t.Error("Code of a plain error")
	}
}

// TestParseErrors: what the fake's parser does not take is an unknown
// statement, not a wrong answer.
func TestParseErrors(t *testing.T) {
	u := NewUpstream()
	u.AddTable(Table{DB: "app", Name: "t"})
	c := dial(t, u)
	for _, sql := range []string{
		"SELECT 'unterminated",
		"INSERT INTO `app`.`t` (id) VALUES (1, 2)",
		"INSERT INTO `app`.`t` (id) VALUES (1) ON DUPLICATE KEY UPDATE id = other + 1",
		"UPDATE `app`.`t` SET id 1",
		"DELETE FROM `app`.`t` WHERE",
		"CREATE DATABASE IF NOT EXISTS `a` `b`",
		"DROP TABLE IF EXISTS",
		"ALTER TABLE `app`.`t` AUTO_INCREMENT = 'x'",
		"SELECT IS_USED_LOCK(1, 2)",
		"SELECT RELEASE_LOCK()",
	} {
		if _, err := c.Exec(context.Background(), sql); !errors.As(err, new(*UnknownError)) {
			t.Errorf("%s: %v, want an unknown statement", sql, err)
		}
	}
	run(t, c, []step{
		{sql: "UPDATE `app`.`nope` SET id = 1", code: 1146},
		{sql: "DELETE FROM `app`.`nope`", code: 1146},
		{sql: "INSERT INTO `app`.`nope` (id) VALUES (1)", code: 1146},
		// A production table only counts its rows.
		{sql: "INSERT INTO `app`.`t` (id) VALUES (1)", n: 1},
		{sql: "UPDATE `app`.`t` SET id = 2", n: 0},
		{sql: "INSERT INTO `app`.`t` (id) SELECT id FROM `app`.`nope`", code: 1146},
		{sql: "INSERT INTO `app`.`nope` (id) SELECT id FROM `app`.`t`", code: 1146},
		{sql: "INSERT INTO `app`.`t` (id) SELECT a FROM `app`.`t`", code: 1136},
		{sql: "INSERT INTO `app`.`t` (x) SELECT x FROM `app`.`t`", code: 1054},
		{sql: "CREATE TABLE IF NOT EXISTS `nodb`.r (id INT)", code: 1049},
		{sql: "SELECT id FROM `app`.`nope`", query: true, code: 1146},
	})
	if tb, _ := u.Describe("app", "t"); tb.Rows != 1 {
		t.Errorf("production table counts %d rows, want 1", tb.Rows)
	}
}

// TestUnknownWholeTextForms: a statement of a form the fake knows by its
// whole text (a lease write, the expiry join) whose parts it cannot read
// is one it does not know: it must fail with an *UnknownError, so that
// Unknown lists it and the tests that check Unknown see it.
func TestUnknownWholeTextForms(t *testing.T) {
	u := NewUpstream()
	c := dial(t, u)
	for _, sql := range []string{
		"REPLACE INTO `m`.readers (sandbox_id, proxy_id, valid_until) VALUES ('a', 'p1', UTC_TIMESTAMP(6) + INTERVAL 99999999999999999999 MICROSECOND)",
		"SELECT s.id, s.name, s.kept, s.expires_at, s.last_active, s.lease_until, (SELECT COUNT(*) FROM holders h " +
			"WHERE h.sandbox_id = s.id AND h.lease_until > '2025-01-01') FROM sandboxes s",
	} {
		if _, err := c.Exec(context.Background(), sql); !errors.As(err, new(*UnknownError)) {
			t.Errorf("%s: %v, want an *UnknownError", sql, err)
		}
	}
	if n := len(u.Unknown()); n != 2 {
		t.Errorf("Unknown() lists %d statements, want 2", n)
	}
}
