package review

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/capture"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// The review's paths run here on scripted side connections
// (testkit.Script): the registry's (the snapshot the diff is read in, the
// captures, the promote's audit rows) and the promote account's. Each
// test scripts what the server holds — tables' shapes, definitions, the
// rows of the diff's queries — and asserts the SQL the reviewer sends and
// what it makes of the answers.

const (
	testPrefix = "_sqlfork"
	testID     = "0badcafe"
	// physDB is the sandbox's database of app.
	physDB = testPrefix + "_" + testID + "_app"
	// sideDB is the sandbox's own database (capture side tables).
	sideDB = testPrefix + "_" + testID
)

// fixture is a Reviewer over a registry whose side connection is side,
// with a sandbox (sb, owned by alice) and a promote account whose
// connection is prod.
type fixture struct {
	t        *testing.T
	ctx      context.Context
	side     *testkit.Script
	prod     *testkit.Script
	m        *Reviewer
	sb       *registry.Sandbox
	obs      *obs
	entries  map[string]*sandbox.Entry
	captures [][]*string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), side: testkit.NewScript(), prod: testkit.NewScript(), obs: &obs{},
		entries: map[string]*sandbox.Entry{}}
	s := f.side
	s.Exact("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
	s.Exact("SELECT @@sql_mode, @@sql_quote_show_create").Rows(testkit.Row("STRICT_TRANS_TABLES", "1"))
	s.Exact("SELECT @@session.time_zone").Rows(testkit.Row("SYSTEM"))
	s.Prefix("SET time_zone = ")
	s.Exact("START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
	s.Exact("COMMIT")
	// Tables nobody scripted do not exist; there are no foreign keys,
	// routines or triggers unless a test says so.
	s.Prefix("SELECT t.ENGINE, e.TRANSACTIONS, t.TABLE_TYPE FROM information_schema.TABLES t ")
	s.Exact("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
	s.Prefix("SELECT s.ROUTINE_TYPE, s.ROUTINE_SCHEMA, s.ROUTINE_NAME FROM information_schema.ROUTINES s ")
	s.Prefix("SELECT TRIGGER_NAME, ACTION_TIMING, EVENT_MANIPULATION, ACTION_STATEMENT, SQL_MODE, ")
	s.Prefix("SELECT CHECK_CLAUSE FROM information_schema.CHECK_CONSTRAINTS ")
	f.setCaptures()
	dial := func(context.Context) (sideconn.Conn, error) { return f.side, nil }
	reg := registry.New(registry.Config{Prefix: testPrefix, SideConnections: 1, ForkQueueTimeout: time.Minute, ForkTimeout: time.Minute},
		dial, zap.NewNop(), nil)
	t.Cleanup(reg.Close)
	names := sandbox.Names{Prefix: testPrefix, CaseSensitive: true}
	engine := rewrite.NewEngine(0)
	server := rewrite.ParseServer(sessiontest.DefaultVersion)
	f.m = New(Config{Prefix: testPrefix}, zap.NewNop(), names, engine, server, reg, capture.New(capture.Config{Prefix: testPrefix},
		zap.NewNop(), names, reg), catalog.Triggers{Engine: engine, CaseSensitive: true, Server: server})
	f.m.SetObserver(f.obs)
	f.sb = registry.ForTest(testID, f.entries)
	f.sb.Owner = "alice"
	return f
}

// setCaptures scripts the registry's captures of the sandbox.
func (f *fixture) setCaptures() {
	f.side.Exact("SELECT db, tbl, state, reason, key_kind, key_cols, side_db, side_tbl, trg, cascades, base_cols FROM `_sqlfork_meta`.captures " +
		"WHERE sandbox_id = '" + testID + "'").Rows(f.captures...)
}

// entry puts app.name in the sandbox as kind, in its database of app.
func (f *fixture) entry(name string, kind sandbox.Kind) *sandbox.Entry {
	e := &sandbox.Entry{Logical: rewrite.Table{DB: "app", Name: name}, Phys: rewrite.Table{DB: physDB, Name: name}, Kind: kind}
	f.entries["app\x00"+name] = e
	return e
}

// capture records app.name's capture: state rows (by key) or full (with
// reason).
func (f *fixture) capture(name, state, reason string, key ...string) {
	k, _ := json.Marshal(key)
	kind := "row"
	if len(key) > 0 {
		kind = "primary"
	}
	f.captures = append(f.captures, testkit.Row("app", name, state, reason, kind, string(k), sideDB, "c_"+name, testPrefix+"_"+name, nil, nil))
	f.setCaptures()
}

// shape scripts forker.ReadShape's reads of t: a table of tableType
// (BASE TABLE, VIEW, SEQUENCE) with cols, keyed by key (its primary key).
func (f *fixture) shape(t rewrite.Table, tableType string, cols []forker.Column, key ...string) {
	where := " WHERE TABLE_SCHEMA = " + quote.String(t.DB) + " AND TABLE_NAME = " + quote.String(t.Name)
	txn := "YES"
	if tableType == "MyISAM" {
		tableType, txn = "BASE TABLE", "NO"
	}
	f.side.Match(`^SELECT t\.ENGINE, .*` + regexp.QuoteMeta(strings.ReplaceAll(where, "TABLE_", "t.TABLE_")) + "$").
		Rows(testkit.Row("InnoDB", txn, tableType))
	var rows, stats [][]*string
	for _, c := range cols {
		extra, null := "", "YES"
		if c.Generated {
			extra = "VIRTUAL GENERATED"
		}
		for _, k := range key {
			if strings.EqualFold(k, c.Name) {
				null = "NO"
			}
		}
		rows = append(rows, testkit.Row(c.Name, c.Type, c.DataType, orNil(c.Charset), orNil(c.Collation), extra, null))
	}
	for _, k := range key {
		stats = append(stats, testkit.Row("PRIMARY", "0", k, nil))
	}
	f.side.Match(`^SELECT COLUMN_NAME, .* FROM information_schema\.COLUMNS` + regexp.QuoteMeta(where) + " ").Rows(rows...)
	f.side.Match(`^SELECT INDEX_NAME, .* FROM information_schema\.STATISTICS` + regexp.QuoteMeta(where) + " ").Rows(stats...)
}

// both scripts the same shape for app.name and its sandbox copy.
func (f *fixture) both(name string, cols []forker.Column, key ...string) {
	f.shape(rewrite.Table{DB: "app", Name: name}, "BASE TABLE", cols, key...)
	f.shape(rewrite.Table{DB: physDB, Name: name}, "BASE TABLE", cols, key...)
}

// query scripts the answer to the diff's queries that start with start and
// name table (quoted, as in the query).
func (f *fixture) query(start, table string, rows ...[]*string) *testkit.Answer {
	return f.side.Match("^" + regexp.QuoteMeta(start) + ".*" + regexp.QuoteMeta(table)).Rows(rows...)
}

// createTable scripts SHOW CREATE TABLE of t.
func (f *fixture) createTable(t rewrite.Table, text string) {
	f.side.Exact("SHOW CREATE TABLE " + t.Quoted()).Rows(testkit.Row(t.Name, text))
}

func orNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// unscripted fails the test for the statements no answer matched.
func (f *fixture) unscripted() {
	f.t.Helper()
	for _, s := range [...]*testkit.Script{f.side, f.prod} {
		if u := s.Unscripted(); len(u) > 0 {
			f.t.Errorf("statements nothing answered:\n %s", strings.Join(u, "\n "))
		}
	}
}

// cells are a reply's rows as text, NULL as "NULL", cells joined by " | ".
func cells(r *reply.Reply) []string {
	var out []string
	for _, row := range r.Rows {
		s := make([]string, len(row))
		for i, v := range row {
			s[i] = "NULL"
			if v != nil {
				s[i] = *v
			}
		}
		out = append(out, strings.Join(s, " | "))
	}
	return out
}

var (
	tID   = forker.Column{Name: "id", Type: "int(11)", DataType: "int"}
	tName = forker.Column{Name: "name", Type: "varchar(20)", DataType: "varchar", Charset: "utf8mb4", Collation: "utf8mb4_general_ci"}
	tV    = forker.Column{Name: "v", Type: "int(11)", DataType: "int"}
)
