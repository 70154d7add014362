package sessiontest

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

func cellsOf(rows [][]*string) [][]string {
	out := [][]string{}
	for _, r := range rows {
		var row []string
		for _, v := range r {
			if v == nil {
				row = append(row, "NULL")
			} else {
				row = append(row, *v)
			}
		}
		out = append(out, row)
	}
	return out
}

// TestEmulation: the statements the manager sends do what MariaDB does
// with them, as far as the fake goes.
func TestEmulation(t *testing.T) {
	u := NewUpstream()
	u.AddTable(Table{DB: "app", Name: "t", Rows: 3, Bytes: 100, AutoIncrement: 9,
		Columns: []Column{{Name: "id"}, {Name: "g", Generated: "id + 1"}, {Name: "d", Default: "nextval(`app`.`s`)"}}})
	c := dial(t, u)
	run(t, c, []step{
		{sql: "SELECT VERSION(), @@lower_case_table_names", query: true, rows: [][]string{{DefaultVersion, "0"}}},
		{sql: "CREATE DATABASE IF NOT EXISTS `m`", n: 1},
		{sql: "CREATE TABLE IF NOT EXISTS `m`.r (\n id INT NOT NULL,\n name VARCHAR(9) NOT NULL UNIQUE,\n n INT NOT NULL DEFAULT 7,\n" +
			" PRIMARY KEY (id)\n) DEFAULT CHARSET=utf8mb4"},
		{sql: "INSERT INTO `m`.r (id, name) VALUES (1, 'a')", n: 1},
		{sql: "INSERT INTO `m`.r (id, name) VALUES (2, 'a')", code: 1062},
		{sql: "INSERT IGNORE INTO `m`.r (id, name) VALUES (1, 'b')", n: 0},
		{sql: "INSERT INTO `m`.r (id, nope) VALUES (3, 'c')", code: 1054},
		{sql: "REPLACE INTO `m`.r (id, name, n) VALUES (1, 'it''s', 8)", n: 2},
		{sql: "INSERT INTO `m`.r (id, name) VALUES (2, 'x\\'y')", n: 1},
		{sql: "SELECT id, name, n FROM `m`.r WHERE id > 0", query: true, rows: [][]string{{"1", "it's", "8"}, {"2", "x'y", "7"}}},
		{sql: "SELECT COUNT(*) FROM `m`.r WHERE name LIKE 'x%' AND id <> 1", query: true, rows: [][]string{{"1"}}},
		{sql: "UPDATE `m`.r SET n = NULL, name = 'z' WHERE id = 2", n: 1},
		{sql: "SELECT COALESCE(n, 'none'), id < 2 FROM `m`.r", query: true, rows: [][]string{{"8", "1"}, {"none", "0"}}},
		{sql: "DELETE FROM `m`.r WHERE id = 1", n: 1},
		{sql: "SELECT name FROM `m`.r", query: true, rows: [][]string{{"z"}}},
		{sql: "SELECT TABLE_TYPE, AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 't'",
			query: true, rows: [][]string{{"BASE TABLE", "9"}}},
		{sql: "SELECT COLUMN_NAME, COALESCE(GENERATION_EXPRESSION, ''), COALESCE(COLUMN_DEFAULT, '') FROM information_schema.COLUMNS " +
			"WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 't' ORDER BY ORDINAL_POSITION",
			query: true, rows: [][]string{{"id", "", ""}, {"g", "id + 1", ""}, {"d", "", "nextval(`app`.`s`)"}}},
		{sql: "CREATE TABLE `m`.`t` LIKE `app`.`t`"},
		{sql: "CREATE TABLE `m`.`t` LIKE `app`.`t`", code: 1050},
		{sql: "CREATE TABLE `nodb`.`t` LIKE `app`.`t`", code: 1049},
		{sql: "CREATE TABLE `m`.`x` LIKE `app`.`nope`", code: 1146},
		{sql: "INSERT INTO `m`.`t` (`id`, `g`) SELECT `id`, `g` FROM `app`.`t`", code: 1906},
		{sql: "INSERT INTO `m`.`t` (`id`) SELECT `id` FROM `app`.`t`", n: 3},
		{sql: "ALTER TABLE `m`.`t` AUTO_INCREMENT = 9"},
		{sql: "SELECT TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH, AUTO_INCREMENT FROM information_schema.TABLES " +
			"WHERE TABLE_SCHEMA = 'm' AND TABLE_NAME = 't'", query: true, rows: [][]string{{"3", "100", "9"}}},
		{sql: "FORK TABLE `app`.`t` TO `m`.`f`", code: 1064},
		{sql: "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\\\_m%'", query: true, rows: [][]string{}},
		{sql: "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'm_'", query: true, rows: [][]string{}},
		{sql: "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'm%'", query: true, rows: [][]string{{"m"}, {"mysql"}}},
		{sql: "SELECT trx_id FROM information_schema.INNODB_TRX", code: 1109},
		{sql: "DROP TABLE IF EXISTS `m`.`t`"},
		{sql: "DROP DATABASE IF EXISTS `m`"},
		{sql: "SELECT id FROM `m`.r", code: 1146},
	})
	if w := u.ProductionWrites("m"); len(w) != 0 {
		t.Errorf("writes outside m: %q", w)
	}
	if _, err := c.Exec(context.Background(), "FROBNICATE"); !errors.As(err, new(*UnknownError)) ||
		!reflect.DeepEqual(u.Unknown(), []string{"FROBNICATE"}) {
		t.Errorf("unknown statement: %v, %q", err, u.Unknown())
	}
}

// TestRules: rules answer, fail, break or hook matching statements, for
// every match, the nth or the first n.
func TestRules(t *testing.T) {
	u := NewUpstream()
	u.On("^SELECT 1$").Nth(2).Fail(1205, "HY000", "busy")
	u.On("^SELECT 1$").Times(2).Rows(Row("one", nil, 7))
	hooked := 0
	u.On("^SELECT 1$").Before(func(string) { hooked++ })
	u.On("^UPDATE x").Affected(5)
	u.On("^BREAK").Break()
	c, _ := u.Dial(context.Background())
	ctx := context.Background()
	var results []string
	for range 3 {
		rows, err := c.Query(ctx, "SELECT 1")
		if err != nil {
			results = append(results, err.Error())
			continue
		}
		results = append(results, strings.Join(flatten(cellsOf(rows)), ","))
	}
	// Rules count every match, also those an earlier rule answered: the
	// third SELECT 1 is past Times(2), and the fake does not know it.
	want := []string{"one,NULL,7", "ERROR 1205 (HY000): busy", "sessiontest: no rule or emulation for SELECT 1"}
	if !reflect.DeepEqual(results, want) {
		t.Errorf("results %q, want %q", results, want)
	}
	if hooked != 3 {
		t.Errorf("hook ran %d times", hooked)
	}
	if n, err := c.Exec(ctx, "UPDATE x SET a = 1"); n != 5 || err != nil {
		t.Errorf("Affected: %d, %v", n, err)
	}
	if u.OpenConns() != 1 {
		t.Errorf("%d open", u.OpenConns())
	}
	if _, err := c.Exec(ctx, "BREAK"); !errors.Is(err, ErrBroken) {
		t.Errorf("Break: %v", err)
	}
	if _, err := c.Query(ctx, "SELECT VERSION(), @@lower_case_table_names"); !errors.Is(err, ErrBroken) {
		t.Errorf("after Break: %v", err)
	}
	if u.OpenConns() != 0 || u.Dials() != 1 {
		t.Errorf("%d open, %d dialled", u.OpenConns(), u.Dials())
	}
	u.FailDials(1, Err(1040, "08004", "Too many connections"))
	if _, err := u.Dial(ctx); err == nil {
		t.Error("dial did not fail")
	}
	if _, err := u.Dial(ctx); err != nil {
		t.Error(err)
	}
}

// TestRuleArmedByItsAction: a statement matched while a rule is being set
// (by another goroutine: a reaper) is not counted, so Nth(1) is the first
// match after the action is set, not one before it.
func TestRuleArmedByItsAction(t *testing.T) {
	u := NewUpstream()
	r := u.On("^SELECT 1$")
	u.On("^SELECT 1$").Rows(Row("one"))
	c, _ := u.Dial(context.Background())
	ctx := context.Background()
	var hooked []string
	for _, set := range []func(){func() {}, func() { r.Nth(1) }, func() { r.Before(func(string) { hooked = append(hooked, "x") }) }} {
		set()
		if _, err := c.Query(ctx, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	if len(hooked) != 1 {
		t.Errorf("hook ran %d times on the first match after the rule was armed, want 1", len(hooked))
	}
}

func flatten(rows [][]string) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r...)
	}
	return out
}

// TestLocks: GET_LOCK nests for its holder, waits for another's, and
// locks die with their connection.
func TestLocks(t *testing.T) {
	u := NewUpstream()
	ctx := context.Background()
	a, _ := u.Dial(ctx)
	b, _ := u.Dial(ctx)
	get := func(c *FakeSide, sql string) string {
		rows, err := c.Query(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		return flatten(cellsOf(rows))[0]
	}
	for _, step := range []struct {
		c        *FakeSide
		sql, got string
	}{
		{a, "SELECT GET_LOCK('k', 0)", "1"},
		{a, "SELECT GET_LOCK('k', 0)", "1"},
		{b, "SELECT GET_LOCK('k', 0)", "0"},
		{b, "SELECT RELEASE_LOCK('k')", "0"},
		{a, "SELECT RELEASE_LOCK('k')", "1"},
		{b, "SELECT GET_LOCK('k', 0)", "0"}, // still held once
		{a, "SELECT RELEASE_LOCK('k')", "1"},
		{a, "SELECT RELEASE_LOCK('k')", "NULL"},
		{b, "SELECT GET_LOCK('k', 0)", "1"},
	} {
		if got := get(step.c, step.sql); got != step.got {
			t.Errorf("%d: %s = %s, want %s", step.c.ID(), step.sql, got, step.got)
		}
	}
	// a waits for b's lock, which b's connection closing releases.
	waiting := make(chan struct{})
	u.On(`^SELECT GET_LOCK\('k', 60\)$`).Before(func(string) { close(waiting) })
	done := make(chan string)
	go func() { done <- get(a, "SELECT GET_LOCK('k', 60)") }()
	<-waiting
	b.Close()
	select {
	case got := <-done:
		if got != "1" {
			t.Errorf("waited GET_LOCK = %s", got)
		}
	case <-time.After(testkit.WaitLimit):
		t.Fatal("GET_LOCK still waiting after its holder closed")
	}
}
