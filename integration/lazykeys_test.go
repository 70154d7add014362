package integration

import (
	"context"
	"database/sql"
	"regexp"
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// TestLazyFillDeferredKeys fills lazy forks whose tables have plain
// secondary keys of many forms: the staging table is filled without them
// (checked while the fill runs), they are built after the copy (Seal),
// copy-ups read the sealed staging table as the snapshot, and the fork
// ends with the rows, and exactly the definition, of a copy. A table with
// a FULLTEXT key keeps its keys during the fill (a rebuild could reorder
// them).
func TestLazyFillDeferredKeys(t *testing.T) {
	server, _ := env(t)
	db := openDB(t, server.DSN(""))
	for _, q := range []string{
		"DROP DATABASE IF EXISTS lk_prod", "DROP DATABASE IF EXISTS lk_sb", "DROP DATABASE IF EXISTS lk_side", "DROP DATABASE IF EXISTS lk_exp",
		"CREATE DATABASE lk_prod", "CREATE DATABASE lk_sb", "CREATE DATABASE lk_side", "CREATE DATABASE lk_exp",
		"CREATE TABLE lk_prod.k1 (id INT PRIMARY KEY, a INT, b VARCHAR(40), c INT NOT NULL, `we``ird, (key)` INT, v INT AS (a + c) VIRTUAL, " +
			"UNIQUE KEY ub (b), KEY ka (a), KEY `k,bc` (b(10), c DESC) COMMENT 'x, (y)', KEY kv (v), KEY kign (c) IGNORED, " +
			"UNIQUE KEY uc (c, a), KEY kw (`we``ird, (key)`, a))",
		"CREATE TABLE lk_prod.k2 (id INT PRIMARY KEY, txt TEXT, a INT, KEY ka (a), FULLTEXT KEY ft (txt))",
		"CREATE TABLE lk_prod.k3 (id BIGINT PRIMARY KEY, a INT, UNIQUE KEY ua (a))",
	} {
		mustExecC(t, db, q)
	}
	mustExecC(t, db, "INSERT INTO lk_prod.k1 (id, a, b, c, `we``ird, (key)`) SELECT seq, seq % 97, CONCAT('b', seq), seq, seq % 5 FROM lk_prod.seq_1_to_6000")
	mustExecC(t, db, "INSERT INTO lk_prod.k2 SELECT seq, CONCAT('word', seq), seq % 13 FROM lk_prod.seq_1_to_3000")
	mustExecC(t, db, "INSERT INTO lk_prod.k3 SELECT seq, seq FROM lk_prod.seq_1_to_3000")
	for _, c := range []struct {
		table, columns string
		deferred       []string // the keys the staging table lacks while it fills
	}{
		{"k1", "id, a, b, c, `we``ird, (key)`", []string{"ka", "k,bc", "kv", "kign", "kw"}},
		{"k2", "id, txt, a", nil},
		{"k3", "id, a", nil},
	} {
		t.Run(c.table, func(t *testing.T) { lazyFillKeys(t, db, c.table, c.columns, c.deferred) })
	}
}

// lazyFillKeys fills the lazy fork lk_sb.T of lk_prod.T and checks it
// against lk_exp.T, a copy made at the fork (TestLazyFillDeferredKeys).
func lazyFillKeys(t *testing.T, db *sql.DB, table, columns string, deferred []string) {
	ctx := context.Background()
	mustExecC(t, db, "CREATE TABLE lk_exp."+table+" LIKE lk_prod."+table)
	mustExecC(t, db, "INSERT INTO lk_exp."+table+" ("+columns+") SELECT "+columns+" FROM lk_prod."+table)
	src := sqlname.Table{DB: "lk_prod", Name: table}
	c := ownConn(t, db)
	shape, err := forker.ReadShape(ctx, c, src)
	if err != nil {
		t.Fatal(err)
	}
	cp := forker.Capture{Fork: sqlname.Table{DB: "lk_sb", Name: table}, Side: sqlname.Table{DB: "lk_side", Name: "c_" + table},
		Trigger: "lkcap" + table, Marker: "sqlfork_existed", Shape: shape}
	l := forker.Lazy{Src: src, Capture: cp, Staging: sqlname.Table{DB: "lk_side", Name: "f_" + table},
		Fn: sqlname.Table{DB: "lk_side", Name: "fill_" + table}, Up: sqlname.Table{DB: "lk_side", Name: "up_" + table}}
	mustExecC(t, db, "CREATE TABLE lk_sb."+table+" LIKE lk_prod."+table)
	if err := forker.PrepareLazy(ctx, c, l); err != nil {
		t.Fatal(err)
	}
	if err := forker.InstallCapture(ctx, c, cp, false); err != nil {
		t.Fatal(err)
	}
	f, _, err := forker.StartFill(ctx, ownConn(t, db), ownConn(t, db), l, 6000)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	staging := keyNames(t, db, "lk_side", "f_"+table)
	for _, k := range keyNames(t, db, "lk_prod", table) {
		if slices.Contains(deferred, k) == slices.Contains(staging, k) {
			t.Errorf("key %q during the fill: the staging table has %q, want every key but %q", k, staging, deferred)
		}
	}
	// Production changes after the snapshot: neither the fill nor the
	// copy-ups after the seal see them.
	mustExecC(t, db, "UPDATE lk_prod."+table+" SET a = -id WHERE id IN (10, 20, 2000)")
	go f.Run(ctx)
	<-f.Done()
	if err := f.Seal(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, up := range []struct {
		where string
		keys  []string
	}{{"`id` = 10", []string{"10"}}, {"`a` = 7 AND `id` < 200", nil}, {"`id` = 2000", nil}} {
		if _, err := f.CopyUp(ctx, up.where, up.keys, nil); err != nil {
			t.Fatalf("copy up %s after the seal: %v", up.where, err)
		}
	}
	wantString(t, db, "SELECT COUNT(*) FROM lk_sb."+table+" s JOIN lk_exp."+table+" e USING (id) WHERE NOT (s.a <=> e.a) OR s.a < 0",
		"0", "rows copied up after the seal not as of the fork: %s")
	wantString(t, db, "SELECT COUNT(*) FROM lk_sb."+table+" WHERE id IN (10, 2000)", "2", "rows copied up after the seal: %s")
	for _, tb := range []string{"lk_sb.", "lk_exp."} {
		mustExecC(t, db, "UPDATE "+tb+table+" SET a = a + 100000 WHERE id = 10")
	}
	if err := f.Finish(ctx, c); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM (SELECT * FROM lk_sb." + table + " EXCEPT SELECT * FROM lk_exp." + table + ") x",
		"SELECT COUNT(*) FROM (SELECT * FROM lk_exp." + table + " EXCEPT SELECT * FROM lk_sb." + table + ") x",
	} {
		wantString(t, db, q, "0", "rows differing from a copy's: %s")
	}
	if got, want := createText(t, db, "lk_sb", table), createText(t, db, "lk_exp", table); got != want {
		t.Errorf("the fork's definition after the fill:\n%s\nwant (a copy's):\n%s", got, want)
	}
}

// keyNames are the keys of schema.table.
func keyNames(t *testing.T, db *sql.DB, schema, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT DISTINCT INDEX_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", schema, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

var autoIncrementOption = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// createText is SHOW CREATE TABLE's text of schema.table, AUTO_INCREMENT left out.
func createText(t *testing.T, db *sql.DB, schema, table string) string {
	t.Helper()
	var name, text string
	if err := db.QueryRow("SHOW CREATE TABLE "+schema+"."+table).Scan(&name, &text); err != nil {
		t.Fatal(err)
	}
	return autoIncrementOption.ReplaceAllString(text, "")
}
