package forker_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// These tests run the strategies and catalog readers against the
// in-memory upstream (session/sessiontest), which answers the
// information_schema reads a MariaDB would and records every statement.

func upstream(t *testing.T) (*sessiontest.Upstream, *sessiontest.FakeSide) {
	t.Helper()
	up := sessiontest.NewUpstream()
	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Rows: 3, Bytes: 16384,
		Columns: []sessiontest.Column{{Name: "id"}, {Name: "a"}}})
	c, err := up.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := c.Exec(context.Background(), "CREATE DATABASE IF NOT EXISTS `sb_app`"); err != nil {
		t.Fatal(err)
	}
	return up, c
}

// TestCopyFork: a full copy makes the table LIKE production's and copies
// its rows in one INSERT … SELECT of the columns that take values; a
// schema-only fork copies no row; a missing source is ErrNoSource.
func TestCopyFork(t *testing.T) {
	ctx := context.Background()
	src, dst := sqlname.Table{DB: "app", Name: "t"}, sqlname.Table{DB: "sb_app", Name: "t"}
	for _, mode := range []forker.Mode{forker.Full, forker.SchemaOnly} {
		up, c := upstream(t)
		s, err := forker.New("copy")
		if err != nil || s.Name() != "copy" {
			t.Fatalf("New(copy) = %v, %v", s, err)
		}
		if _, err := s.Fork(ctx, c, src, dst, mode); err != nil {
			t.Fatalf("mode %v: %v", mode, err)
		}
		if !up.HasTable("sb_app", "t") {
			t.Errorf("mode %v: no fork made", mode)
		}
		inserts := up.Count("^INSERT INTO `sb_app`\\.`t` \\(`id`, `a`\\) SELECT `id`, `a` FROM `app`\\.`t`")
		if want := map[forker.Mode]int{forker.Full: 1, forker.SchemaOnly: 0}[mode]; inserts != want {
			t.Errorf("mode %v: %d row copies, want %d:\n%s", mode, inserts, want, strings.Join(up.Matching("."), "\n"))
		}
		rows, bytes, err := forker.Size(ctx, c, src)
		if err != nil || rows != 3 || bytes != 16384 {
			t.Errorf("Size = %d, %d, %v", rows, bytes, err)
		}
	}
	_, c := upstream(t)
	s, _ := forker.New("copy")
	if _, err := s.Fork(ctx, c, sqlname.Table{DB: "app", Name: "nosuch"}, dst, forker.Full); !errors.Is(err, forker.ErrNoSource) {
		t.Errorf("fork of a missing table: %v, want ErrNoSource", err)
	}
	if _, _, err := forker.Size(ctx, c, sqlname.Table{DB: "app", Name: "nosuch"}); !errors.Is(err, forker.ErrNoSource) {
		t.Errorf("size of a missing table: %v", err)
	}
	if _, err := forker.New("nosuch"); err == nil {
		t.Error("New of an unknown strategy succeeded")
	}
	if forker.Detect("11.4.0-SeekDB") != "seekdb" || forker.Detect("10.11.19-MariaDB") != "copy" {
		t.Error("Detect")
	}
}

// TestCatalogReaders: the foreign keys, triggers and shape of the fake's
// tables, read as from MariaDB's information_schema.
func TestCatalogReaders(t *testing.T) {
	ctx := context.Background()
	up, c := upstream(t)
	fks, err := forker.ForeignKeys(ctx, c, nil)
	if err != nil || len(fks) != 0 {
		t.Errorf("ForeignKeys = %v, %v (the fake's tables have none)", fks, err)
	}
	trgs, err := forker.Triggers(ctx, c, sqlname.Table{DB: "app", Name: "t"})
	if err != nil {
		t.Errorf("Triggers: %v", err)
	}
	_ = trgs
	s := func(v string) *string { return &v }
	up.On(`^SELECT t\.ENGINE, e\.TRANSACTIONS, t\.TABLE_TYPE FROM information_schema\.TABLES`).Rows([]*string{s("InnoDB"), s("YES"), s("BASE TABLE")})
	up.On(`^SELECT COLUMN_NAME, COLUMN_TYPE, LOWER\(DATA_TYPE\)`).Rows(
		[]*string{s("id"), s("int(11)"), s("int"), nil, nil, s(""), s("NO")},
		[]*string{s("a"), s("varchar(10)"), s("varchar"), s("utf8mb4"), s("utf8mb4_general_ci"), s(""), s("YES")})
	up.On(`^SELECT INDEX_NAME, NON_UNIQUE, COLUMN_NAME, SUB_PART FROM information_schema\.STATISTICS`).Rows(
		[]*string{s("PRIMARY"), s("0"), s("id"), nil})
	shape, err := forker.ReadShape(ctx, c, sqlname.Table{DB: "app", Name: "t"})
	if err != nil || len(shape.Columns) != 2 || strings.Join(shape.Key, ",") != "id" || !shape.Transactional || shape.Engine != "InnoDB" {
		t.Fatalf("ReadShape = %+v, %v", shape, err)
	}
	// The capture of a fork of it: side table and three triggers in, and
	// out again.
	if _, err := c.Exec(ctx, "CREATE TABLE `sb_app`.`t` LIKE `app`.`t`"); err != nil {
		t.Fatal(err)
	}
	cp := forker.Capture{Fork: sqlname.Table{DB: "sb_app", Name: "t"}, Side: sqlname.Table{DB: "sb_app", Name: "t_sqlfork_c"},
		Trigger: "sqlfork_t", Marker: "sqlfork_in", Shape: shape}
	up.On("^CREATE TABLE `sb_app`\\.`t_sqlfork_c` ").Affected(0) // the fake keeps no side tables
	if err := forker.InstallCapture(ctx, c, cp, false); err != nil {
		t.Fatalf("InstallCapture: %v", err)
	}
	if n := up.Count("^CREATE TRIGGER `sb_app`\\.`sqlfork_t_a[iud]` AFTER"); n != 3 {
		t.Errorf("%d capture triggers made, want 3:\n%s", n, strings.Join(up.Matching("TRIGGER"), "\n"))
	}
	up.On("^DROP (TRIGGER|TABLE) IF EXISTS `sb_app`").Affected(0)
	if err := forker.RemoveCapture(ctx, c, cp); err != nil {
		t.Fatalf("RemoveCapture: %v", err)
	}
	if n := up.Count("^DROP TRIGGER IF EXISTS `sb_app`\\.`sqlfork_t_a[iud]`"); n != 3 {
		t.Errorf("%d capture triggers dropped, want 3:\n%s", n, strings.Join(up.Matching("TRIGGER|DROP"), "\n"))
	}
}

// TestSeekDBFork: SeekDB forks with FORK TABLE and waits until the fork
// takes DDL (a no-op ALTER of its comment); a schema-only fork is CREATE
// TABLE … LIKE.
func TestSeekDBFork(t *testing.T) {
	ctx := context.Background()
	up, c := upstream(t)
	s, err := forker.New("seekdb")
	if err != nil || s.Name() != "seekdb" {
		t.Fatalf("New(seekdb) = %v, %v", s, err)
	}
	up.On("^FORK TABLE `app`\\.`t` TO `sb_app`\\.`t`$").Affected(0)
	up.On("^SELECT TABLE_COMMENT FROM information_schema\\.TABLES").Rows([]*string{nil})
	up.On("^ALTER TABLE `sb_app`\\.`t` COMMENT").Affected(0)
	src, dst := sqlname.Table{DB: "app", Name: "t"}, sqlname.Table{DB: "sb_app", Name: "t"}
	if _, err := s.Fork(ctx, c, src, dst, forker.Full); err != nil {
		t.Fatalf("full fork: %v", err)
	}
	if up.Count("^FORK TABLE") != 1 || up.Count("^ALTER TABLE `sb_app`\\.`t` COMMENT") != 1 {
		t.Errorf("statements:\n%s", strings.Join(up.Matching("FORK|ALTER"), "\n"))
	}
	if _, err := s.Fork(ctx, c, src, sqlname.Table{DB: "sb_app", Name: "t2"}, forker.SchemaOnly); err != nil {
		t.Fatalf("schema-only fork: %v", err)
	}
	if up.Count("^FORK TABLE") != 1 || !up.HasTable("sb_app", "t2") {
		t.Error("a schema-only fork used FORK TABLE, or made no table")
	}
}

// TestObjectStatements: a foreign key, a trigger and statements run under
// the settings they were made with are written as MariaDB reads them.
func TestObjectStatements(t *testing.T) {
	ctx := context.Background()
	up, c := upstream(t)
	up.On("^ALTER TABLE `sb_app`\\.`t` ADD CONSTRAINT").Affected(0)
	fk := forker.ForeignKey{Name: "fk`1", Columns: []string{"a"}, RefColumns: []string{"id"}, OnDelete: "CASCADE", OnUpdate: "SET NULL"}
	if err := forker.AddForeignKey(ctx, c, fk, sqlname.Table{DB: "sb_app", Name: "t"}, sqlname.Table{DB: "sb_app", Name: "p"}); err != nil {
		t.Fatal(err)
	}
	want := "ALTER TABLE `sb_app`.`t` ADD CONSTRAINT `fk``1` FOREIGN KEY (`a`) REFERENCES `sb_app`.`p` (`id`) ON DELETE CASCADE ON UPDATE SET NULL"
	if got := up.Matching("ADD CONSTRAINT"); len(got) != 1 || got[0] != want {
		t.Errorf("AddForeignKey wrote %q, want %q", got, want)
	}
	if !forker.Modifies("CASCADE") || !forker.Modifies("SET NULL") || forker.Modifies("RESTRICT") || forker.Modifies("NO ACTION") {
		t.Error("Modifies")
	}
	if _, err := c.Exec(ctx, "CREATE TABLE `sb_app`.`t` LIKE `app`.`t`"); err != nil {
		t.Fatal(err)
	}
	trg := forker.Trigger{Name: "tr", Timing: "BEFORE", Event: "INSERT", SQLMode: "ANSI_QUOTES", Charset: "latin1", Collation: "latin1_swedish_ci"}
	if err := forker.CreateTrigger(ctx, c, trg, sqlname.Table{DB: "sb_app", Name: "t"}, "SET NEW.a = 1"); err != nil {
		t.Fatal(err)
	}
	set := up.Matching("^SET sql_mode = ")
	if len(set) < 2 || !strings.Contains(set[0], "'ANSI_QUOTES'") || !strings.Contains(set[0], "character_set_client = 'latin1'") {
		t.Errorf("the trigger's settings were not set, then put back: %q", set)
	}
	if up.Count("^CREATE TRIGGER `sb_app`\\.`tr` BEFORE INSERT ON `sb_app`\\.`t` FOR EACH ROW SET NEW\\.a = 1$") != 1 {
		t.Errorf("CREATE TRIGGER: %q", up.Matching("CREATE TRIGGER"))
	}
}

// TestIndexNamesAndSequences: a fork's index made for a key gets back the
// name production's index on the same columns has; a column defaulting to
// a sequence's next value is found; triggers are dropped by name.
func TestIndexNamesAndSequences(t *testing.T) {
	ctx := context.Background()
	up, c := upstream(t)
	s := func(v string) *string { return &v }
	up.On("^SELECT TABLE_SCHEMA, INDEX_NAME, GROUP_CONCAT").Rows(
		[]*string{s("app"), s("k_a"), s("a")}, []*string{s("sb_app"), s("fk_a"), s("A")})
	up.On("^ALTER TABLE `sb_app`\\.`t` RENAME INDEX").Affected(0)
	if err := forker.RestoreIndexNames(ctx, c, sqlname.Table{DB: "app", Name: "t"}, sqlname.Table{DB: "sb_app", Name: "t"}); err != nil {
		t.Fatal(err)
	}
	if got := up.Matching("RENAME INDEX"); len(got) != 1 || got[0] != "ALTER TABLE `sb_app`.`t` RENAME INDEX `fk_a` TO `k_a`" {
		t.Errorf("RestoreIndexNames wrote %q", got)
	}
	up.On("^SELECT COLUMN_NAME, COLUMN_DEFAULT FROM information_schema\\.COLUMNS").Rows(
		[]*string{s("id"), s("nextval(`app`.`seq`)")}, []*string{s("a"), nil})
	col, def, err := forker.SequenceDefault(ctx, c, sqlname.Table{DB: "app", Name: "t"})
	if err != nil || col != "id" || def != "nextval(`app`.`seq`)" {
		t.Errorf("SequenceDefault = %q, %q, %v", col, def, err)
	}
	up.On("^DROP TRIGGER IF EXISTS").Affected(0)
	if err := forker.DropTriggers(ctx, c, "sb_app", []string{"x", "y`z"}); err != nil {
		t.Fatal(err)
	}
	if got := up.Matching("^DROP TRIGGER"); len(got) != 2 || got[1] != "DROP TRIGGER IF EXISTS `sb_app`.`y``z`" {
		t.Errorf("DropTriggers wrote %q", got)
	}
}
