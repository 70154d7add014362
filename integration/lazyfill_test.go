package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/integration/sqlrows"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// sqlConn is a forker.OwnedConn over one database/sql connection.
type sqlConn struct{ c *sql.Conn }

func (s sqlConn) Exec(ctx context.Context, q string) (uint64, error) {
	r, err := s.c.ExecContext(ctx, q)
	if err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return uint64(n), nil
}

func (s sqlConn) Query(ctx context.Context, q string) ([][]*string, error) {
	rows, err := s.c.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	return sqlrows.Text(rows)
}

func (s sqlConn) Close() error { return s.c.Close() }

func ownConn(t *testing.T, db *sql.DB) sqlConn {
	t.Helper()
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return sqlConn{c}
}

// TestLazyFillExact fills a lazy fork while production changes and the
// sandbox copies rows up and changes them: the finished fork holds
// exactly a copy made at the fork with the sandbox's statements applied,
// and the capture side table holds the sandbox's changes only.
func TestLazyFillExact(t *testing.T) {
	server, _ := env(t)
	ctx := context.Background()
	db := openDB(t, server.DSN(""))
	for _, q := range []string{
		"DROP DATABASE IF EXISTS lz_prod", "DROP DATABASE IF EXISTS lz_sb", "DROP DATABASE IF EXISTS lz_side",
		"CREATE DATABASE lz_prod", "CREATE DATABASE lz_sb", "CREATE DATABASE lz_side",
		"CREATE TABLE lz_prod.t (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) COLLATE utf8mb4_bin, f FLOAT, d DOUBLE, " +
			"b VARBINARY(8), ts TIMESTAMP(3) NULL, l VARCHAR(10) CHARACTER SET latin1, u INT NULL UNIQUE, g INT AS (id * 2) VIRTUAL)",
		"INSERT INTO lz_prod.t (id, name, f, d, b, ts, l, u) SELECT seq, CONCAT('n', seq, '\\'\"`'), seq / 7, seq / 3, UNHEX(HEX(seq)), " +
			"FROM_UNIXTIME(1600000000 + seq + 0.125), CONCAT('é', seq), IF(seq % 2, seq, NULL) FROM lz_prod.seq_1_to_20000",
		"CREATE TABLE lz_side.expected LIKE lz_prod.t",
		"INSERT INTO lz_side.expected (id, name, f, d, b, ts, l, u) SELECT id, name, f, d, b, ts, l, u FROM lz_prod.t",
	} {
		mustExecC(t, db, q)
	}
	src := sqlname.Table{DB: "lz_prod", Name: "t"}
	c := ownConn(t, db)
	shape, err := forker.ReadShape(ctx, c, src)
	if err != nil {
		t.Fatal(err)
	}
	if why := forker.LazyOK(shape); why != "" {
		t.Fatalf("LazyOK: %s", why)
	}
	cp := forker.Capture{Fork: sqlname.Table{DB: "lz_sb", Name: "t"}, Side: sqlname.Table{DB: "lz_side", Name: "c_t"},
		Trigger: "lzcap", Marker: "sqlfork_existed", Shape: shape}
	l := forker.Lazy{Src: src, Capture: cp, Staging: sqlname.Table{DB: "lz_side", Name: "f_t"}, Fn: sqlname.Table{DB: "lz_side", Name: "fill_t"}}
	mustExecC(t, db, "CREATE TABLE lz_sb.t LIKE lz_prod.t")
	if err := forker.PrepareLazy(ctx, c, l); err != nil {
		t.Fatal(err)
	}
	if err := forker.InstallCapture(ctx, c, cp, false); err != nil {
		t.Fatal(err)
	}
	f, autoInc, err := forker.StartFill(ctx, ownConn(t, db), ownConn(t, db), l, 20000)
	if err != nil {
		t.Fatal(err)
	}
	if autoInc != "20001" {
		t.Errorf("AUTO_INCREMENT after the snapshot: %q, want 20001", autoInc)
	}
	mustExecC(t, db, "ALTER TABLE lz_sb.t AUTO_INCREMENT = "+autoInc)
	// Production changes after the snapshot: the fork never sees them.
	for _, q := range []string{
		"UPDATE lz_prod.t SET name = 'after' WHERE id IN (1, 15000, 15001)", "DELETE FROM lz_prod.t WHERE id IN (2, 3)",
		"INSERT INTO lz_prod.t (id, name) VALUES (30000, 'prod new')",
	} {
		mustExecC(t, db, q)
	}
	// The sandbox's statements, each after the copy-up of what it touches,
	// on the fork and on the expected copy alike.
	steps := []lazyStep{
		{"`id` = 15000", nil, "UPDATE %s SET name = 'sb', f = f + 1 WHERE id = 15000"},
		{"`id` = 15001", []string{"15001"}, "SELECT * FROM %s WHERE id = 15001"},
		{"`id` = 3", []string{"3"}, "DELETE FROM %s WHERE id = 3"},
		{"`id` = 40000 OR `u` = 7", nil, "INSERT INTO %s (id, name, u) VALUES (40000, 'new', 8)"},
		{"`id` = 15000", []string{"15000"}, "UPDATE %s SET name = 'sb2' WHERE id = 15000"},
		{"`id` IN (5, 6)", []string{"5", "6"}, "REPLACE INTO %s (id, name) VALUES (5, 'replaced')"},
		{"`id` = 3", []string{"3"}, "INSERT INTO %s (id, name) VALUES (3, 'again')"},
		{"", nil, "INSERT INTO %s (name) VALUES ('auto')"},
	}
	w := ownConn(t, db)
	run := func(steps []lazyStep) {
		t.Helper()
		for _, s := range steps {
			if s.where != "" {
				if _, err := f.CopyUp(ctx, s.where, s.keys, nil); err != nil {
					t.Fatalf("copy up %s: %v", s.where, err)
				}
			}
			for _, tb := range []string{"lz_sb.t", "lz_side.expected"} {
				if _, err := w.Exec(ctx, fmt.Sprintf(s.stmt, tb)); err != nil {
					t.Fatalf("%s: %v", fmt.Sprintf(s.stmt, tb), err)
				}
			}
		}
	}
	run(steps)
	go f.Run(ctx)
	<-f.Done()
	if p := f.Progress(); p.Err != nil || p.Filled != 20000 {
		t.Fatalf("fill: %+v", p)
	}
	// The staging table holds the whole snapshot now, not committed: the
	// copy-ups of keys read it there (the values of the snapshot, not
	// production's), but for keys past its end.
	run([]lazyStep{
		{"`id` = 1", []string{"1"}, "UPDATE %s SET f = f * 2 WHERE id = 1"},
		{"`id` = 2", []string{"2"}, "INSERT INTO %s (id, name) VALUES (2, 'dup') ON DUPLICATE KEY UPDATE name = CONCAT(name, '+')"},
		{"`id` = 15000 OR `id` = 14999", []string{"15000", "14999"}, "DELETE FROM %s WHERE id IN (15000, 14999)"},
		{"`id` = 30000", []string{"30000"}, "INSERT INTO %s (id, name) VALUES (30000, 'sb new')"},
		{"`id` = 19999 OR `id` = 20005", []string{"19999", "20005"}, "UPDATE %s SET name = 'both' WHERE id IN (19999, 20005)"},
	})
	if p := f.Progress(); p.UpStaged != 3 || p.UpSnapshot != 7 {
		t.Errorf("copy-ups from the staging table %d, from the snapshot %d; want 3 and 7", p.UpStaged, p.UpSnapshot)
	}
	if err := f.Finish(ctx, c); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, q := range []string{
		"SELECT COUNT(*) FROM (SELECT id, name, f, d, b, ts, l, u, g FROM lz_sb.t EXCEPT SELECT id, name, f, d, b, ts, l, u, g FROM lz_side.expected) x",
		"SELECT COUNT(*) FROM (SELECT id, name, f, d, b, ts, l, u, g FROM lz_side.expected EXCEPT SELECT id, name, f, d, b, ts, l, u, g FROM lz_sb.t) x",
	} {
		wantString(t, db, q, "0", "got: %s")
	}
	wantString(t, db, "SELECT COUNT(*) FROM lz_sb.t", "20001", "got: %s")
	// The side table: the first image of each key the sandbox changed.
	wantString(t, db, "SELECT GROUP_CONCAT(id, ':', sqlfork_existed, ':', COALESCE(name, '-') ORDER BY id) FROM lz_side.c_t",
		"1:1:n1'\"`,2:1:n2'\"`,3:1:n3'\"`,5:1:n5'\"`,14999:1:n14999'\"`,15000:1:n15000'\"`,19999:1:n19999'\"`,30000:0:-,40000:0:-,40001:0:-",
		"side table: %s")
	// Capture goes on after the swap.
	mustExecC(t, db, "UPDATE lz_sb.t SET name = 'later' WHERE id = 7")
	wantString(t, db, "SELECT COUNT(*) FROM lz_side.c_t WHERE id = 7 AND sqlfork_existed = 1", "1", "got: %s")
	wantString(t, db, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'lz_side' AND TABLE_NAME LIKE 'f\\_t%'", "0", "got: %s")
	wantString(t, db, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = 'lz_side'", "0", "got: %s")
	wantString(t, db, "SELECT name FROM lz_prod.t WHERE id = 15000", "after", "got: %s")
}

// lazyStep is a statement of TestLazyFillExact, after the copy-up of the
// rows where selects (keys: their key values, or nil).
type lazyStep struct {
	where string
	keys  []string
	stmt  string
}
