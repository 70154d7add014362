package integration

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Red team of rt32: a lazy fork's staging table fills without its plain
// secondary keys, which one ALTER TABLE … ADD KEY builds after the copy
// (dd21049: forker/deferkeys.go, forker/seal.go, forker/fill.go,
// sandbox/forking/lazy.go runFill). Each test compares the sandbox's
// answers with those of a copy made at the fork (<db>_ref, reached
// directly, made by the same statements), as rt27/rt29 do.

// rt32AutoInc strips AUTO_INCREMENT=N (SHOW CREATE TABLE may differ there).
var rt32AutoInc = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// rt32Ask runs q on c and describes the answer: rows (queries), affected
// rows and insert id (other statements), or the error code and message.
func rt32Ask(ctx context.Context, c *sql.Conn, q string) string {
	upper := strings.ToUpper(strings.TrimSpace(q))
	if strings.HasPrefix(upper, "SHOW INDEX") || strings.HasPrefix(upper, "SHOW KEYS") {
		return rt32Columns(ctx, c, q, func(col string) bool { return col != "Table" && col != "Cardinality" })
	}
	if strings.HasPrefix(upper, "EXPLAIN") {
		return rt32Columns(ctx, c, q, func(col string) bool { return col == "possible_keys" || col == "key" || col == "table" })
	}
	for _, p := range []string{"SELECT", "SHOW", "EXPLAIN", "WITH", "SANDBOX", "CHECKSUM", "DESC"} {
		if strings.HasPrefix(upper, p) {
			rows, err := c.QueryContext(ctx, q)
			return rt32AutoInc.ReplaceAllString(describeRows(rows, err), "")
		}
	}
	return runBoth(ctx, c, q)
}

// rt32Columns is q's answer, only the columns keep keeps: SHOW INDEX
// without its Table and Cardinality (the copy's statistics are sampled at
// other times), EXPLAIN's keys.
func rt32Columns(ctx context.Context, c *sql.Conn, q string, keep func(string) bool) string {
	rows, err := c.QueryContext(ctx, q)
	if err != nil {
		return "error " + mysqlErr(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		_ = rows.Scan(ptrs...)
		var kept []string
		for i, v := range vals {
			if keep(cols[i]) {
				kept = append(kept, cols[i]+"="+fmt.Sprint(v))
			}
		}
		out = append(out, strings.Join(kept, " "))
	}
	return strings.Join(out, ";")
}

// rt32Same runs each statement on sb, then on ref, and reports every
// answer that differs (ref's database name told back as sb's). A statement
// the sandbox has not answered in 3 s has h's fills run at full speed.
func rt32Same(t *testing.T, h *proxyHandle, sb, ref *sql.Conn, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	for _, q := range stmts {
		lift := liftAfter(h, 3*time.Second)
		got := rt32Ask(ctx, sb, q)
		close(lift)
		want := strings.ReplaceAll(strings.ReplaceAll(rt32Ask(ctx, ref, q), "_ref`", "`"), "_ref.", ".")
		want = strings.ReplaceAll(want, "_ref ", " ")
		if got != want {
			t.Errorf("%q:\n sandbox: %s\n    copy: %s", q, got, want)
		}
	}
}

// rt32Whole lets h's fills run at full speed and waits (1 min at most)
// until table (db.name) is no longer filling in sb's sandbox; a table
// still filling then is logged with its state (a failed fill stays so:
// the statements after say how).
func rt32Whole(t *testing.T, h *proxyHandle, sb *sql.Conn, table string) {
	t.Helper()
	h.setFillRate(0)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		state := tableStateOf(t, sb, table)
		if !strings.HasPrefix(state, "filling") || strings.Contains(state, "failed") {
			return
		}
	}
	t.Logf("%s still filling after a minute: %s", table, tableStateOf(t, sb, table))
}

// rt32Meta are the statements that show a table's definition and keys:
// they must answer as on the copy once the fork is whole.
func rt32Meta(db, table string) []string {
	return []string{
		"SHOW CREATE TABLE " + table,
		"SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, COLLATION, SUB_PART, NULLABLE, INDEX_TYPE, COMMENT, INDEX_COMMENT, IGNORED, NON_UNIQUE, PACKED " +
			"FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table + "' ORDER BY INDEX_NAME, SEQ_IN_INDEX",
		"SHOW INDEX FROM " + table,
		"SHOW KEYS FROM " + table + " WHERE Key_name <> 'PRIMARY'",
		"SELECT COUNT(*), COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = '" + table + "'",
	}
}

// TestRT32VirtualKeyWarnings: production holds rows whose indexed VIRTUAL
// column computes with a warning (a division by zero, a value longer than
// the column, a zero date), as rows written under a non-strict sql_mode
// are. A copy (INSERT … SELECT, as the proxy's whole copy and the fill's
// function write it, under the fill's non-strict modes) takes them; the
// deferred keys' ALTER TABLE … ADD KEY computes the column again, under
// the fill's modes, as the copy did (it ran in the side connection's
// strict sql_mode and failed: the fill failed, and every statement that
// needed the whole table was refused).
func TestRT32VirtualKeyWarnings(t *testing.T) {
	h, root := rt27Env(t, 0)
	sb, ref := rt27Pair(t, h, root, "rt32vw", []string{
		"SET SESSION sql_mode = ''",
		"CREATE TABLE dz (id INT PRIMARY KEY, a INT, b INT, v INT AS (a / b) VIRTUAL, KEY kv (v))",
		"INSERT INTO dz (id, a, b) SELECT seq, seq, seq % 100 FROM seq_1_to_20000",
		"CREATE TABLE tr (id INT PRIMARY KEY, s VARCHAR(20), w VARCHAR(3) AS (s) VIRTUAL, KEY kw (w))",
		"INSERT INTO tr (id, s) SELECT seq, IF(seq % 1000 = 0, CONCAT('long', seq), 'ok') FROM seq_1_to_20000",
		"CREATE TABLE zd (id INT PRIMARY KEY, d DATE, dv DATE AS (d + INTERVAL 1 DAY) VIRTUAL, KEY kd (dv))",
		"INSERT INTO zd (id, d) SELECT seq, IF(seq % 1000 = 0, '0000-00-00', '2020-01-01' + INTERVAL seq % 300 DAY) FROM seq_1_to_20000",
		"CREATE TABLE small (id INT PRIMARY KEY, v INT)",
		"INSERT INTO small VALUES (1, 1)",
	})
	for _, tb := range []string{"dz", "tr", "zd"} {
		t.Run(tb, func(t *testing.T) {
			rt32Same(t, h, sb, ref, "DELETE FROM "+tb+" WHERE id = 1")
			rt32Whole(t, h, sb, "rt32vw."+tb)
			rt32Same(t, h, sb, ref,
				"SELECT COUNT(*), SUM(id) FROM "+tb,
				"SHOW CREATE TABLE "+tb,
			)
			// The error's advice: SANDBOX RESET FOR the table, and again.
			mustExecC(t, sb, "SANDBOX RESET FOR "+tb)
			if state := tableStateOf(t, sb, "rt32vw."+tb); state != "" {
				t.Logf("%s after SANDBOX RESET FOR it: %q", tb, state)
			}
			mustExecC(t, ref, "INSERT INTO "+tb+" (id, "+map[string]string{"dz": "a, b", "tr": "s", "zd": "d"}[tb]+") SELECT id, "+
				map[string]string{"dz": "a, b", "tr": "s", "zd": "d"}[tb]+" FROM rt32vw."+tb+" WHERE id = 1")
			rt32Same(t, h, sb, ref, "DELETE FROM "+tb+" WHERE id = 1")
			rt32Whole(t, h, sb, "rt32vw."+tb)
			rt32Same(t, h, sb, ref, "SELECT COUNT(*), SUM(id) FROM "+tb)
			// Another table's statements after this one's fill failed.
			rt32Same(t, h, sb, ref, "SELECT COUNT(*) FROM small")
		})
	}
}

// TestRT32AutoIncrementPlainKey: an AUTO_INCREMENT column that is not the
// primary key needs a key of its own; when that is a plain KEY, it stays
// on the staging table with the keys before it (dropping it failed, 1075,
// and the first write, which a copy takes, was refused).
func TestRT32AutoIncrementPlainKey(t *testing.T) {
	h, root := rt27Env(t, 0)
	sb, ref := rt27Pair(t, h, root, "rt32ai", []string{
		"CREATE TABLE t (code VARCHAR(12) PRIMARY KEY, id INT AUTO_INCREMENT, v INT, KEY kid (id))",
		"INSERT INTO t (code, v) SELECT CONCAT('c', seq), seq FROM seq_1_to_20000",
		"CREATE TABLE t2 (code VARCHAR(12) PRIMARY KEY, id BIGINT UNSIGNED AUTO_INCREMENT, v INT, KEY kid (id, v), KEY kv (v))",
		"INSERT INTO t2 (code, v) SELECT CONCAT('c', seq), seq FROM seq_1_to_20000",
	})
	rt32Same(t, h, sb, ref,
		"UPDATE t SET v = -1 WHERE code = 'c7'",
		"INSERT INTO t (code, v) VALUES ('new', 1)",
		"SELECT code, id, v FROM t WHERE code IN ('c7', 'new') ORDER BY code",
		"UPDATE t2 SET v = -1 WHERE code = 'c7'",
		"INSERT INTO t2 (code, v) VALUES ('new', 1)",
		"SELECT code, id, v FROM t2 WHERE code IN ('c7', 'new') ORDER BY code",
	)
	rt32Whole(t, h, sb, "rt32ai.t")
	rt32Whole(t, h, sb, "rt32ai.t2")
	rt32Same(t, h, sb, ref, "SELECT COUNT(*), SUM(id), MAX(id) FROM t", "SHOW CREATE TABLE t", "SELECT COUNT(*), SUM(id) FROM t2", "SHOW CREATE TABLE t2")
}

// TestRT32ApplicationPeriod: a table with an application-time period
// (PERIOD FOR p (s, e)), whose SHOW CREATE TABLE has a PERIOD FOR line that
// tabledef does not read: the staging table keeps its keys (deferKeys
// failed on it, and the first write, which a copy takes, was refused).
func TestRT32ApplicationPeriod(t *testing.T) {
	h, root := rt27Env(t, 0)
	sb, ref := rt27Pair(t, h, root, "rt32per", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, s DATE NOT NULL, e DATE NOT NULL, v INT, KEY kv (v), PERIOD FOR p (s, e))",
		"INSERT INTO t (id, s, e, v) SELECT seq, '2020-01-01', '2030-01-01', seq FROM seq_1_to_20000",
		"CREATE TABLE nokeys (id INT PRIMARY KEY, s DATE NOT NULL, e DATE NOT NULL, v INT, PERIOD FOR p (s, e))",
		"INSERT INTO nokeys (id, s, e, v) SELECT seq, '2020-01-01', '2030-01-01', seq FROM seq_1_to_20000",
	})
	rt32Same(t, h, sb, ref,
		"UPDATE t SET v = -1 WHERE id = 7",
		"SELECT id, v FROM t WHERE id = 7",
		"UPDATE nokeys SET v = -1 WHERE id = 7",
		"SELECT id, v FROM nokeys WHERE id = 7",
	)
	rt32Whole(t, h, sb, "rt32per.t")
	rt32Same(t, h, sb, ref, "SELECT COUNT(*), SUM(v) FROM t", "SHOW CREATE TABLE t", "SELECT COUNT(*), SUM(v) FROM nokeys")
}

// rt32Shapes are tables whose plain keys are of many forms: names with
// backquotes, commas, parentheses, a line end, unicode, 64 characters;
// comments with quotes, backslashes, line ends; prefixes on latin1,
// binary, utf8mb4, TEXT and BLOB columns; DESC parts; IGNORED keys; keys
// on VIRTUAL and PERSISTENT generated columns and JSON-derived ones; on
// ENUM, SET, BIT; USING HASH/BTREE; KEY_BLOCK_SIZE; many keys; plain keys
// declared before and between UNIQUE ones; a key equal to a prefix of
// another; duplicates of another key; invisible columns; a CHECK; a long
// UNIQUE (hash) key beside plain ones; compressed tables.
var rt32Shapes = []struct{ name, ddl, fill string }{
	{"names", "CREATE TABLE names (id INT PRIMARY KEY, a INT, b VARCHAR(40), c INT, KEY `we``ird, (n)` (a), KEY `nl\n KEY x (a)` (b), " +
		"KEY `ü名前` (c), KEY `a23456789012345678901234567890123456789012345678901234567890123` (a, b), KEY ```` (c, a))",
		"INSERT INTO names SELECT seq, seq % 97, CONCAT('b', seq % 501), seq % 13 FROM seq_1_to_8000"},
	{"comments", "CREATE TABLE comments (id INT PRIMARY KEY, a INT, b VARCHAR(40), KEY ka (a) COMMENT 'it''s, \"q\"\\nnl \\\\ back) (', " +
		"KEY kb (b(5)) COMMENT '', KEY kc (a, b) COMMENT 'é ü 名', KEY `kd` (b) COMMENT 'KEY `x` (a), ')",
		"INSERT INTO comments SELECT seq, seq % 97, CONCAT('b', seq % 501) FROM seq_1_to_8000"},
	{"prefixes", "CREATE TABLE prefixes (id INT PRIMARY KEY, a VARCHAR(100) CHARACTER SET latin1, b VARBINARY(100), c VARCHAR(100) CHARACTER SET utf8mb4, " +
		"d TEXT, e BLOB, f VARCHAR(30) COLLATE utf8mb4_bin, g CHAR(5) CHARACTER SET ascii, KEY (a(10)), KEY (b(7)), KEY (c(9)), KEY (d(20)), KEY (e(3)), " +
		"KEY (f), KEY (g), KEY pc (c(3), a(2)))",
		"INSERT INTO prefixes SELECT seq, CONCAT('caf', CHAR(0xE9 USING latin1), seq % 300), CONCAT(CHAR(seq % 256), X'FF00', seq), " +
			"CONCAT('é名', seq % 77), REPEAT('t', seq % 50), CONCAT(X'00FF', seq), CONCAT('F', seq % 10), CONCAT('g', seq % 9) FROM seq_1_to_8000"},
	{"descign", "CREATE TABLE descign (id INT PRIMARY KEY, a INT, b INT, KEY kd (a DESC, b), KEY kd2 (b DESC), KEY ki (a) IGNORED, " +
		"KEY ki2 (b) COMMENT 'x' IGNORED, KEY kd3 (a DESC, b DESC, id DESC))",
		"INSERT INTO descign SELECT seq, seq % 97, seq % 31 FROM seq_1_to_8000"},
	{"gens", "CREATE TABLE gens (id INT PRIMARY KEY, a INT, j JSON, v INT AS (a * 2) VIRTUAL, p INT AS (a + 1) PERSISTENT, " +
		"jv VARCHAR(20) AS (JSON_VALUE(j, '$.k')) VIRTUAL, js VARCHAR(20) AS (JSON_UNQUOTE(JSON_EXTRACT(j, '$.s'))) STORED, " +
		"KEY (v), KEY (p), KEY (jv), KEY (v, p), KEY (js(4)), KEY vj (jv, a))",
		"INSERT INTO gens (id, a, j) SELECT seq, seq % 97, JSON_OBJECT('k', seq % 50, 's', CONCAT('s', seq % 7)) FROM seq_1_to_8000"},
	{"types", "CREATE TABLE types (id INT PRIMARY KEY, e ENUM('a','b','c'), s SET('x','y','z'), bt BIT(3), u BIGINT UNSIGNED, d DATETIME(6), " +
		"ts TIMESTAMP(3) NULL, f DOUBLE, dc DECIMAL(30,10), uu UUID, ip INET6, KEY (e), KEY (s), KEY (bt), KEY (u), KEY (d), KEY (ts), KEY (f), " +
		"KEY (dc), KEY (uu), KEY (ip), KEY es (e, s, bt))",
		"INSERT INTO types SELECT seq, ELT(1 + seq % 3, 'a', 'b', 'c'), ELT(1 + seq % 3, 'x', 'x,y', 'z'), seq % 8, 18446744073709551615 - seq, " +
			"'2020-01-01' + INTERVAL seq SECOND, FROM_UNIXTIME(1600000000 + seq), seq / 7, seq / 3, CONCAT('6ccd780c-baba-1026-9564-', LPAD(HEX(seq), 12, '0')), CONCAT('::', HEX(seq)) FROM seq_1_to_8000"},
	{"algos", "CREATE TABLE algos (id INT PRIMARY KEY, a INT, b INT, KEY kh (a) USING HASH, KEY kb (b) USING BTREE, KEY kbs (a, b) KEY_BLOCK_SIZE=4)",
		"INSERT INTO algos SELECT seq, seq % 97, seq % 31 FROM seq_1_to_8000"},
	{"mixed", "CREATE TABLE mixed (id INT PRIMARY KEY, a INT, b INT, c INT NOT NULL, t TEXT, KEY k1 (a), UNIQUE KEY u1 (b), KEY k2 (c), " +
		"UNIQUE KEY u2 (c, a), KEY k3 (a, b), KEY k4 (a), UNIQUE KEY ut (t), KEY k5 (c, a, b), KEY k6 (c))",
		"INSERT INTO mixed SELECT seq, seq % 97, seq, seq, CONCAT('t', seq) FROM seq_1_to_8000"},
	{"many", "CREATE TABLE many (id INT PRIMARY KEY, c1 INT, c2 INT, c3 INT, c4 INT, c5 INT, c6 INT, c7 INT, c8 INT, KEY (c1), KEY (c2), KEY (c3), " +
		"KEY (c4), KEY (c5), KEY (c6), KEY (c7), KEY (c8), KEY (c1, c2), KEY (c2, c3), KEY (c3, c4), KEY (c4, c5), KEY (c5, c6), KEY (c6, c7), " +
		"KEY (c7, c8), KEY (c8, c1), KEY (c1, c2, c3, c4, c5, c6, c7, c8))",
		"INSERT INTO many SELECT seq, seq % 2, seq % 3, seq % 5, seq % 7, seq % 11, seq % 13, seq % 17, seq % 19 FROM seq_1_to_8000"},
	{"compressed", "CREATE TABLE compressed (id INT PRIMARY KEY, a INT, b INT, KEY ka (a) KEY_BLOCK_SIZE=4, KEY kb (b)) ROW_FORMAT=COMPRESSED KEY_BLOCK_SIZE=8",
		"INSERT INTO compressed SELECT seq, seq % 97, seq % 31 FROM seq_1_to_8000"},
	{"invis", "CREATE TABLE invis (id INT PRIMARY KEY, a INT, b INT INVISIBLE, KEY kb (b), KEY kab (a, b), CONSTRAINT ch CHECK (a >= 0)) " +
		"COMMENT 'table, (comment)' STATS_PERSISTENT=1 STATS_SAMPLE_PAGES=7 PAGE_COMPRESSED=1",
		"INSERT INTO invis (id, a, b) SELECT seq, seq % 97, seq % 31 FROM seq_1_to_8000"},
	{"pkcomment", "CREATE TABLE pkcomment (id BIGINT UNSIGNED NOT NULL, a INT NULL, b INT NOT NULL, KEY ka (a), PRIMARY KEY (id) COMMENT 'pk', " +
		"UNIQUE KEY ua (a), KEY kb (b), UNIQUE KEY ub (b))",
		"INSERT INTO pkcomment SELECT seq, seq, seq FROM seq_1_to_8000"},
	{"strpk", "CREATE TABLE strpk (code VARCHAR(20) NOT NULL PRIMARY KEY, a INT, b VARCHAR(10), KEY ka (a), KEY kb (b, a))",
		"INSERT INTO strpk SELECT CONCAT('code', seq), seq % 97, CONCAT('b', seq % 10) FROM seq_1_to_8000"},
	{"uniqnn", "CREATE TABLE uniqnn (x INT, k INT NOT NULL, a INT, UNIQUE KEY uk (k), KEY ka (a), KEY kx (x))",
		"INSERT INTO uniqnn SELECT seq % 10, seq, seq % 97 FROM seq_1_to_8000"},
}

// TestRT32KeyShapes: each shape is forked lazily by a write, changed by a
// few statements, then, once whole, its definition, its keys
// (information_schema.STATISTICS, SHOW INDEX), the keys EXPLAIN sees and
// its rows are the copy's.
func TestRT32KeyShapes(t *testing.T) {
	h, root := rt27Env(t, 0)
	var setup []string
	for _, s := range rt32Shapes {
		setup = append(setup, s.ddl, s.fill)
	}
	sb, ref := rt27Pair(t, h, root, "rt32ks", setup)
	for _, s := range rt32Shapes {
		t.Run(s.name, func(t *testing.T) {
			first := "DELETE FROM " + s.name + " ORDER BY 1 LIMIT 1"
			switch s.name {
			case "strpk":
				first = "DELETE FROM strpk WHERE code = 'code7'"
			case "uniqnn":
				first = "DELETE FROM uniqnn WHERE k = 7"
			default:
				first = "DELETE FROM " + s.name + " WHERE id = 7"
			}
			rt32Same(t, h, sb, ref, first)
			rt32Whole(t, h, sb, "rt32ks."+s.name)
			stmts := append(rt32Meta("rt32ks", s.name),
				"SELECT COUNT(*) FROM "+s.name,
				"CHECKSUM TABLE "+s.name,
			)
			rt32Same(t, h, sb, ref, stmts...)
		})
	}
	rt32Same(t, h, sb, ref,
		"EXPLAIN SELECT a FROM names WHERE a = 5",
		"EXPLAIN SELECT id FROM descign WHERE a = 5 ORDER BY a DESC, b",
		"EXPLAIN SELECT id FROM descign IGNORE INDEX (kd, kd3) WHERE a = 5",
		"EXPLAIN SELECT id FROM gens WHERE v = 10",
		"EXPLAIN SELECT id FROM gens WHERE jv = '3'",
		"EXPLAIN SELECT id FROM many WHERE c5 = 3 AND c6 = 4",
		"EXPLAIN SELECT id FROM prefixes WHERE c LIKE 'é名1%'",
		"EXPLAIN SELECT id FROM types WHERE e = 'b' AND s = 'z'",
		"EXPLAIN SELECT a FROM mixed WHERE c = 5",
		"EXPLAIN SELECT a FROM strpk WHERE b = 'b3'",
		"EXPLAIN SELECT k FROM uniqnn WHERE a = 3",
		"SELECT id, a FROM names FORCE INDEX (`we``ird, (n)`) WHERE a = 5 ORDER BY id LIMIT 3",
		"SELECT id FROM descign FORCE INDEX (kd) WHERE a BETWEEN 3 AND 4 ORDER BY a DESC, b LIMIT 5",
	)
}

// rt32BigSetup is a table r of 100,000 rows with a unique key and plain
// keys enough that their build after the copy takes a while.
var rt32BigSetup = []string{
	"CREATE TABLE r (id INT PRIMARY KEY, u VARCHAR(40) NOT NULL, a INT, b VARCHAR(60), c VARCHAR(60), d INT, " +
		"UNIQUE KEY uu (u), KEY ka (a), KEY kb (b), KEY kc (c), KEY kab (a, b), KEY kcb (c, b), KEY kd (d), KEY kdc (d, c))",
	"INSERT INTO r SELECT seq, CONCAT('u', seq), seq % 101, MD5(seq), SHA1(seq), seq % 7 FROM seq_1_to_100000",
	"CREATE TABLE small (id INT PRIMARY KEY, v INT)",
	"INSERT INTO small VALUES (1, 1), (2, 2)",
}

// rt32Building watches root's process list for the ALTER TABLE that builds
// a staging table's keys: building says whether one was seen since the
// last call of seen; stop ends the watch.
type rt32Building struct {
	mu   chan struct{}
	hits int
	seen bool
	stop chan struct{}
}

func rt32WatchBuild(t *testing.T, root *sql.DB) *rt32Building {
	b := &rt32Building{mu: make(chan struct{}, 1), stop: make(chan struct{})}
	b.mu <- struct{}{}
	go func() {
		for {
			select {
			case <-b.stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			var n int
			if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE 'ALTER TABLE `\\_sqlfork%` ADD KEY%'").Scan(&n); err != nil {
				continue
			}
			if n > 0 {
				<-b.mu
				b.seen = true
				b.hits++
				b.mu <- struct{}{}
			}
		}
	}()
	t.Cleanup(func() { close(b.stop) })
	return b
}

// take says whether the build was seen since the last take.
func (b *rt32Building) take() bool {
	<-b.mu
	defer func() { b.mu <- struct{}{} }()
	s := b.seen
	b.seen = false
	return s
}

// rt32Point is the i-th point statement on r for key k (and another key
// k2): reads, writes and duplicate-key errors by the primary and the
// unique key.
func rt32Point(i, k, k2 int) string { return rt32PointAt(i, k, k2, 0) }

// rt32PointAt is rt32Point whose new keys start at base (connections of
// one sandbox each have their own).
func rt32PointAt(i, k, k2, base int) string {
	i += base
	switch i % 12 {
	case 0:
		return fmt.Sprintf("SELECT * FROM r WHERE id = %d", k)
	case 1:
		return fmt.Sprintf("SELECT id, a, d FROM r WHERE u = 'u%d'", k)
	case 2:
		return fmt.Sprintf("UPDATE r SET d = %d WHERE id = %d", -i, k)
	case 3:
		return fmt.Sprintf("DELETE FROM r WHERE u = 'u%d'", k)
	case 4:
		return fmt.Sprintf("INSERT INTO r (id, u, a, b, c, d) VALUES (%d, 'new%d', 1, 'b', 'c', %d)", 200000+i, i, i)
	case 5:
		return fmt.Sprintf("INSERT INTO r (id, u, a) VALUES (%d, 'dupu%d', 1)", k, i)
	case 6:
		return fmt.Sprintf("INSERT INTO r (id, u, a) VALUES (%d, 'u%d', 1)", 300000+i, k2)
	case 7:
		return fmt.Sprintf("REPLACE INTO r (id, u, a, b) VALUES (%d, 'u%d', 2, 'rep')", k, k2)
	case 8:
		return fmt.Sprintf("INSERT INTO r (id, u, a) VALUES (%d, 'odku%d', 3) ON DUPLICATE KEY UPDATE a = a + 1000, c = 'odku'", k, i)
	case 9:
		return fmt.Sprintf("UPDATE r SET c = 'two' WHERE id IN (%d, %d)", k, k2)
	case 10:
		return fmt.Sprintf("SELECT id, u, a, b, c, d FROM r WHERE id IN (%d, %d) ORDER BY id", k, k2)
	default:
		return fmt.Sprintf("UPDATE r SET a = a + %d WHERE u = 'u%d'", i, k2)
	}
}

// TestRT32BuildWindowPoint: point statements by the primary and the unique
// key, one after another, from the fork until the fork is whole: during the
// copy, while the keys are built (the ALTER TABLE seen in the process
// list) and at the swap. Every answer is the copy's, and so is the table.
func TestRT32BuildWindowPoint(t *testing.T) {
	h, root := rt27Env(t, 0)
	sb, ref := rt27Pair(t, h, root, "rt32bw", rt32BigSetup)
	build := rt32WatchBuild(t, root)
	ctx := context.Background()
	rt32Same(t, h, sb, ref, "UPDATE r SET d = -1 WHERE id = 1")
	during, n := 0, 0
	for i := 0; lazyFilling(t, sb, "rt32bw.r") && i < 20000; i++ {
		k, k2 := 2+(i*7919)%99990, 2+(i*104729)%99990
		q := rt32Point(i, k, k2)
		start := time.Now()
		got := rt32Ask(ctx, sb, q)
		if build.take() {
			during++
		}
		if took := time.Since(start); took > 200*time.Millisecond {
			t.Logf("statement %d %q took %s (build seen %d times so far)", i, q, took, build.hits)
		}
		want := rt32Ask(ctx, ref, q)
		n++
		if got != want {
			t.Errorf("statement %d %q (keys being built: %v):\n sandbox: %s\n    copy: %s", i, q, build.hits > 0, got, want)
		}
	}
	t.Logf("%d statements while r filled, %d of them while its keys were built (build seen %d times)", n, during, build.hits)
	rt32Whole(t, h, sb, "rt32bw.r")
	rt32Same(t, h, sb, ref, append(rt32Meta("rt32bw", "r"), "SELECT COUNT(*), SUM(id), SUM(d), SUM(a) FROM r", "CHECKSUM TABLE r",
		"EXPLAIN SELECT id FROM r WHERE a = 5 AND b = 'x'", "EXPLAIN SELECT id FROM r WHERE c = 'x'", "EXPLAIN SELECT id FROM r WHERE d = 3")...)
}

// rt32Waiting says whether the fill of the sandbox called name has copied
// everything and its end waits for a transaction.
func rt32Waiting(t *testing.T, h *proxyHandle, name string) bool {
	t.Helper()
	sb, err := h.srv.Admin().Show(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range sb.Tables {
		if tb.Fill != nil && tb.Fill.Waiting {
			return true
		}
	}
	return false
}

// rt32WaitFilled waits (2 min at most) until the fill of the sandbox
// called name has copied everything and its end waits for a transaction
// (the admin API's "waiting"), lifting h's fill rate.
func rt32WaitFilled(t *testing.T, h *proxyHandle, name string) {
	t.Helper()
	h.setFillRate(0)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sb, err := h.srv.Admin().Show(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range sb.Tables {
			if tb.Fill != nil && tb.Fill.Waiting {
				return
			}
		}
	}
	t.Fatalf("the fill of %s never waited for a transaction", name)
}

// TestRT32BuildWindowTransaction: transactions (REPEATABLE READ with and
// without a read view, READ COMMITTED) that copied rows up hold the fill
// while its copy ends, its snapshot commits and its keys are built
// (SANDBOX STATUS says the end waits for them); their statements then copy
// rows up from the sealed staging table, by the primary and the unique
// key, with duplicate-key errors; then the transaction commits (or rolls
// back) and the fork is the copy's.
func TestRT32BuildWindowTransaction(t *testing.T) {
	for _, tc := range []struct{ name, iso, begin, end string }{
		{"rr", "REPEATABLE READ", "BEGIN", "COMMIT"},
		{"rrview", "REPEATABLE READ", "START TRANSACTION WITH CONSISTENT SNAPSHOT", "COMMIT"},
		{"rc", "READ COMMITTED", "BEGIN", "COMMIT"},
		{"rollback", "REPEATABLE READ", "BEGIN", "ROLLBACK"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, root := rt27Env(t, 20000)
			db := "rt32bt" + tc.name
			sb, ref := rt27Pair(t, h, root, db, rt32BigSetup, "SET SESSION TRANSACTION ISOLATION LEVEL "+tc.iso)
			mustExecC(t, sb, "SANDBOX CREATE "+db)
			rt32Same(t, h, sb, ref, "UPDATE r SET d = -1 WHERE id = 1")
			if !lazyFilling(t, sb, db+".r") {
				t.Fatal("r is not filling")
			}
			rt32Same(t, h, sb, ref,
				tc.begin,
				"SELECT * FROM small",
				"UPDATE r SET d = -2 WHERE id = 99000",
				"SELECT id, u, d FROM r WHERE u = 'u99001'",
				"DELETE FROM r WHERE id = 99002",
			)
			// Statements in the transaction from the end of the copy to
			// the end of the key build.
			build := rt32WatchBuild(t, root)
			h.setFillRate(0)
			during, n := 0, 0
			for i := 0; !rt32Waiting(t, h, db) && i < 5000; i++ {
				q := rt32Point(i, 30000+(i*7919)%60000, 30000+(i*104729)%60000)
				got := rt32Ask(context.Background(), sb, q)
				if build.take() {
					during++
				}
				n++
				if want := rt32Ask(context.Background(), ref, q); got != want {
					t.Errorf("in the transaction, statement %d %q:\n sandbox: %s\n    copy: %s", i, q, got, want)
				}
			}
			t.Logf("%d statements in the transaction until the fill waited for it, %d of them while the keys were built", n, during)
			rt32WaitFilled(t, h, db)
			var stmts []string
			for i := 0; i < 24; i++ {
				stmts = append(stmts, rt32Point(i, 50000+i*13, 60000+i*17))
			}
			stmts = append(stmts,
				"SELECT id, u, d FROM r WHERE id IN (99000, 99001, 99002) ORDER BY id",
				"INSERT INTO r (id, u, a) VALUES (400000, 'u99003', 1)",
				"SELECT COUNT(*), SUM(d) FROM r",
				tc.end,
				"SELECT COUNT(*), SUM(id), SUM(d), SUM(a) FROM r",
				"CHECKSUM TABLE r",
			)
			rt32Same(t, h, sb, ref, stmts...)
			rt32Whole(t, h, sb, db+".r")
			rt32Same(t, h, sb, ref, rt32Meta(db, "r")...)
		})
	}
}

// rt32MidSetup is rt32BigSetup's r of 30,000 rows.
var rt32MidSetup = []string{
	"CREATE TABLE r (id INT PRIMARY KEY, u VARCHAR(40) NOT NULL, a INT, b VARCHAR(60), c VARCHAR(60), d INT, " +
		"UNIQUE KEY uu (u), KEY ka (a), KEY kb (b), KEY kc (c), KEY kab (a, b), KEY kcb (c, b), KEY kd (d), KEY kdc (d, c))",
	"INSERT INTO r SELECT seq, CONCAT('u', seq), seq % 101, MD5(seq), SHA1(seq), seq % 7 FROM seq_1_to_30000",
	"CREATE TABLE small (id INT PRIMARY KEY, v INT)",
	"INSERT INTO small VALUES (1, 1), (2, 2)",
}

var rt32Digest = regexp.MustCompile(`\b[0-9a-f]{16,64}\b`)

// rt32Norm is an answer with database names (lazy's and whole's) made one,
// and hex digests masked.
func rt32Norm(s, db string) string {
	return rt32Digest.ReplaceAllString(strings.ReplaceAll(s, db, "DB"), "DIGEST")
}

// TestRT32ReviewAgainstWholeCopy: the same statements in a sandbox whose
// fork of r is lazy (keys deferred) and in one whose fork is a whole copy
// (another proxy, lazy forks off), each over its own identical production
// database: SANDBOX DIFF (issued while the fill and the key build run),
// EXPORT, PROMOTE DRY RUN and PROMOTE answer alike, and production ends
// alike. Sandbox DDL on r (ADD/DROP/RENAME INDEX) issued during the fill
// waits for it and is in the review as on the copy.
func TestRT32ReviewAgainstWholeCopy(t *testing.T) {
	h, root := rt27Env(t, 20000)
	hw := startTestProxy(t, h.db.Addr, h.db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows = "transparent", 0
	})
	rt27Databases(t, root, "rt32rl", rt32MidSetup)
	rt27Databases(t, root, "rt32rw", rt32MidSetup)
	lazy := conn(t, openDB(t, h.dsn("rt32rl")))
	whole := conn(t, openDB(t, hw.dsn("rt32rw")))
	lazy2 := conn(t, openDB(t, h.dsn("rt32rl")))
	t.Cleanup(func() {
		_, _ = lazy.ExecContext(context.Background(), "SANDBOX DISCARD rt32rl_box")
		_, _ = whole.ExecContext(context.Background(), "SANDBOX DISCARD rt32rw_box")
	})
	ctx := context.Background()
	// The review must begin while r's fill runs: on a busy machine the
	// first write can take longer than a fill of 30,000 rows at 20,000 rows
	// a second, so a fill that ended first is tried again, slower.
	first := "UPDATE r SET d = -1 WHERE id = 1"
	var lazyFirst string
	for _, rate := range []int64{20000, 3000, 500} {
		h.setFillRate(rate)
		mustExecC(t, lazy, "SANDBOX CREATE rt32rl_box")
		if lazyFirst = rt32Norm(rt32Ask(ctx, lazy, first), "rt32rl"); lazyFilling(t, lazy, "rt32rl.r") {
			break
		}
		mustExecC(t, lazy, "SANDBOX DISCARD rt32rl_box")
		lazyFirst = ""
	}
	if lazyFirst == "" {
		t.Fatal("r's fill ended before the first write's answer, at 500 rows a second too")
	}
	h.setFillRate(20000)
	mustExecC(t, lazy2, "SANDBOX ATTACH rt32rl_box")
	mustExecC(t, whole, "SANDBOX CREATE rt32rw_box")
	if want := rt32Norm(rt32Ask(ctx, whole, first), "rt32rw"); lazyFirst != want {
		t.Errorf("%q:\n lazy: %s\nwhole: %s", first, lazyFirst, want)
	}
	same := func(stmts ...string) {
		t.Helper()
		for _, q := range stmts {
			lift := liftAfter(h, 3*time.Second)
			got := rt32Norm(rt32Ask(ctx, lazy, q), "rt32rl")
			close(lift)
			want := rt32Norm(rt32Ask(ctx, whole, q), "rt32rw")
			if got != want {
				t.Errorf("%q:\n lazy: %s\nwhole: %s", q, got, want)
			}
		}
	}
	var stmts []string
	for i := 0; i < 36; i++ {
		stmts = append(stmts, rt32Point(i, 20000+i*31, 25000+i*37))
	}
	same(stmts...)
	// A DIFF from the sandbox's other connection while the fill and the
	// key build run: it waits for the fork to be whole.
	diff := make(chan string, 1)
	go func() { diff <- rt32Norm(rt32Ask(ctx, lazy2, "SANDBOX DIFF"), "rt32rl") }()
	same(
		"ALTER TABLE r ADD INDEX kn (d, a), DROP INDEX kc, RENAME INDEX kb TO kb2",
		"SHOW CREATE TABLE r",
		"UPDATE r SET b = 'after ddl' WHERE id = 12345",
	)
	if got, want := <-diff, rt32Norm(rt32Ask(ctx, whole, "SANDBOX DIFF"), "rt32rw"); got != want {
		// The DIFF may have run before or after the ALTER: compare with
		// the whole copy's DIFF after it only when it saw the ALTER.
		if strings.Contains(got, "kn") {
			t.Errorf("SANDBOX DIFF during the fill:\n lazy: %s\nwhole: %s", got, want)
		}
	}
	same(rt32Meta("", "r")...)
	if d := rt32Ask(ctx, lazy, "SANDBOX DIFF"); !strings.Contains(d, "`kn`") || !strings.Contains(d, "after ddl") {
		t.Errorf("SANDBOX DIFF lacks the ALTER or the change after it: %s", d)
	}
	same("SANDBOX DIFF", "SANDBOX DIFF SUMMARY", "SANDBOX EXPORT", "SANDBOX PROMOTE DRY RUN", "SANDBOX PROMOTE")
	for _, q := range []string{"SHOW CREATE TABLE %s.r", "CHECKSUM TABLE %s.r", "SELECT COUNT(*), SUM(d), SUM(a) FROM %s.r"} {
		got := rt32Norm(rt32Rows(t, root, fmt.Sprintf(q, "rt32rl")), "rt32rl")
		want := rt32Norm(rt32Rows(t, root, fmt.Sprintf(q, "rt32rw")), "rt32rw")
		if got != want {
			t.Errorf("production after PROMOTE, %q:\n lazy: %s\nwhole: %s", q, got, want)
		}
	}
}

// rt32Rows is q's rows on db, described.
func rt32Rows(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	return rt32AutoInc.ReplaceAllString(describeRows(rows, err), "")
}

// rt32AtBuild lifts h's fill rate and returns once the key build of a
// fill is seen in the process list (false when the fill ended without it
// being seen, within 2 minutes).
func rt32AtBuild(t *testing.T, h *proxyHandle, build *rt32Building) bool {
	t.Helper()
	build.take()
	h.setFillRate(0)
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if build.take() {
			return true
		}
	}
	return false
}

// TestRT32ResetDuringBuild: SANDBOX RESET (from the sandbox's other
// connection) while the fork's keys are built, a statement of the first
// connection waiting for the fill: the statement answers as before or
// after the reset; after it the table is production's; a write forks it
// lazily again (the same staging table name) and the new fork fills whole,
// with the copy's keys and rows.
func TestRT32ResetDuringBuild(t *testing.T) {
	for _, how := range []string{"reset", "reset for", "discard"} {
		t.Run(strings.ReplaceAll(how, " ", "_"), func(t *testing.T) {
			h, root := rt27Env(t, 20000)
			db := "rt32rs" + strings.ReplaceAll(how, " ", "")
			sb, ref := rt27Pair(t, h, root, db, rt32BigSetup)
			other := conn(t, openDB(t, h.dsn(db)))
			name := db + "_box"
			mustExecC(t, sb, "SANDBOX CREATE "+name)
			mustExecC(t, other, "SANDBOX ATTACH "+name)
			build := rt32WatchBuild(t, root)
			mustExecC(t, sb, "UPDATE r SET d = -1 WHERE id = 1")
			waiting := make(chan string, 1)
			go func() { waiting <- rt32Ask(context.Background(), sb, "SELECT COUNT(*), SUM(d) FROM r") }()
			if !rt32AtBuild(t, h, build) {
				t.Log("the key build was not seen: acting after the fill")
			}
			switch how {
			case "reset":
				mustExecC(t, other, "SANDBOX RESET")
			case "reset for":
				mustExecC(t, other, "SANDBOX RESET FOR r")
			case "discard":
				mustExecC(t, other, "SANDBOX DISCARD "+name)
			}
			got := <-waiting
			before := rt32Ask(context.Background(), ref, "SELECT COUNT(*), SUM(d) FROM r")
			after := queryRows2(t, root, "SELECT COUNT(*), SUM(d) FROM "+db+".r")
			if got != before && got != after && !(how == "discard" && strings.HasPrefix(got, "error")) {
				t.Errorf("the statement waiting for the fill: %s, want %s (before the %s) or %s (after)", got, before, how, after)
			}
			if how == "discard" {
				sb = conn(t, openDB(t, h.dsn(db)))
				mustExecC(t, sb, "SANDBOX CREATE "+name+"2")
			}
			// Production again, then a new lazy fork.
			mustExecC(t, ref, "UPDATE r SET d = 1 WHERE id = 1")
			rt32Same(t, h, sb, ref,
				"SELECT id, d FROM r WHERE id = 1",
				"UPDATE r SET d = -5 WHERE id = 2",
				"SELECT id, u, d FROM r WHERE u = 'u3'",
			)
			rt32Whole(t, h, sb, db+".r")
			rt32Same(t, h, sb, ref, append(rt32Meta(db, "r"), "SELECT COUNT(*), SUM(id), SUM(d) FROM r", "CHECKSUM TABLE r")...)
			// A discard whose drop met the key build's lock leaves the
			// schema to the reaper (every 10 s here).
			testkit.Eventually(t, "no staging table left", func() bool {
				return queryRows2(t, root, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA LIKE '\\_sqlfork%' AND TABLE_NAME LIKE '%\\_keys'") == "[{0 true}]"
			})
		})
	}
}

// queryRows2 is q's rows on db, described as rt32Ask does.
func queryRows2(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	rows, err := db.Query(q)
	return describeRows(rows, err)
}

// TestRT32ShutdownDuringBuild: the proxy stops while a kept sandbox's fork
// builds its keys; the next process fills it again (a new snapshot: the
// untouched rows are production's as of then, unchanged here) and the fork
// ends with the copy's rows, definition and keys.
func TestRT32ShutdownDuringBuild(t *testing.T) {
	h, root := rt27Env(t, 20000)
	sb, ref := rt27Pair(t, h, root, "rt32sd", rt32BigSetup)
	mustExecC(t, sb, "SANDBOX CREATE rt32sd_box")
	mustExecC(t, sb, "SANDBOX KEEP")
	build := rt32WatchBuild(t, root)
	rt32Same(t, h, sb, ref, "UPDATE r SET d = -1 WHERE id = 1", "DELETE FROM r WHERE u = 'u2'", "INSERT INTO r (id, u) VALUES (500000, 'n1')")
	if !rt32AtBuild(t, h, build) {
		t.Log("the key build was not seen: stopping after the fill")
	}
	_ = sb.Close()
	h.stop()
	h2 := startTestProxy(t, h.db.Addr, h.db, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows = "transparent", 1
	})
	sb2 := conn(t, openDB(t, h2.dsn("rt32sd")))
	mustExecC(t, sb2, "SANDBOX ATTACH rt32sd_box")
	t.Cleanup(func() { _, _ = sb2.ExecContext(context.Background(), "SANDBOX DISCARD rt32sd_box") })
	rt32Same(t, h2, sb2, ref, "SELECT id, d FROM r WHERE id IN (1, 2, 500000) ORDER BY id", "SELECT COUNT(*), SUM(id), SUM(d) FROM r", "CHECKSUM TABLE r")
	rt32Whole(t, h2, sb2, "rt32sd.r")
	rt32Same(t, h2, sb2, ref, rt32Meta("rt32sd", "r")...)
	rt32Same(t, h2, sb2, ref, "EXPLAIN SELECT id FROM r WHERE a = 5 AND b = 'x'", "EXPLAIN SELECT id FROM r WHERE d = 3")
}

// TestRT32KillDuringBuild: KILL QUERY of a statement waiting for the fill
// while the keys are built ends it with 1317; the fill goes on and the
// fork ends as the copy.
func TestRT32KillDuringBuild(t *testing.T) {
	h, root := rt27Env(t, 20000)
	sb, ref := rt27Pair(t, h, root, "rt32kl", rt32BigSetup)
	killer := conn(t, openDB(t, h.dsn("rt32kl")))
	build := rt32WatchBuild(t, root)
	rt32Same(t, h, sb, ref, "UPDATE r SET d = -1 WHERE id = 1")
	var id string
	if err := sb.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan string, 1)
	go func() { waiting <- rt32Ask(context.Background(), sb, "SELECT COUNT(*), SUM(d) FROM r") }()
	if !rt32AtBuild(t, h, build) {
		t.Log("the key build was not seen")
	}
	if _, err := killer.ExecContext(context.Background(), "KILL QUERY "+id); err != nil {
		t.Errorf("KILL QUERY: %s", mysqlErr(err))
	}
	got := <-waiting
	t.Logf("the killed statement: %s", got)
	rt32Same(t, h, sb, ref, "UPDATE r SET d = -2 WHERE id = 2", "SELECT COUNT(*), SUM(d) FROM r")
	rt32Whole(t, h, sb, "rt32kl.r")
	rt32Same(t, h, sb, ref, rt32Meta("rt32kl", "r")...)
}

// rt32Loop runs point statements on keys lo..hi-1 (new keys from base) on
// sb and ref until table is whole in sb's sandbox (or n statements), and
// reports each answer that differs; it says how many ran, and how many
// while keys were built.
func rt32Loop(t *testing.T, sb, ref *sql.Conn, build *rt32Building, table string, lo, hi, base, n int) (ran, during int) {
	ctx := context.Background()
	for i := 0; i < n && lazyFilling(t, sb, table); i++ {
		k, k2 := lo+(i*7919)%(hi-lo), lo+(i*104729)%(hi-lo)
		q := rt32PointAt(i, k, k2, base)
		got := rt32Ask(ctx, sb, q)
		if build != nil && build.take() {
			during++
		}
		ran++
		if want := rt32Ask(ctx, ref, q); got != want {
			t.Errorf("statement %d %q:\n sandbox: %s\n    copy: %s", i, q, got, want)
		}
	}
	return ran, during
}

// TestRT32SharedSandboxBuild: two connections of one named sandbox run
// point statements, each on keys of its own, from the fork until the fork
// is whole (through the key build); each answer is the copy's, and so is
// the whole table at the end.
func TestRT32SharedSandboxBuild(t *testing.T) {
	h, root := rt27Env(t, 30000)
	a, refA := rt27Pair(t, h, root, "rt32sh", rt32BigSetup)
	b := conn(t, openDB(t, h.dsn("rt32sh")))
	refB := conn(t, openDB(t, directDSN(h.db, "rt32sh_ref")))
	mustExecC(t, a, "SANDBOX CREATE rt32sh_box")
	mustExecC(t, b, "SANDBOX ATTACH rt32sh_box")
	t.Cleanup(func() { _, _ = a.ExecContext(context.Background(), "SANDBOX DISCARD rt32sh_box") })
	rt32Same(t, h, a, refA, "UPDATE r SET d = -1 WHERE id = 1")
	build := rt32WatchBuild(t, root)
	done := make(chan [2]int, 1)
	go func() {
		r, d := rt32Loop(t, b, refB, nil, "rt32sh.r", 60000, 99000, 5000, 20000)
		done <- [2]int{r, d}
	}()
	time.Sleep(time.Second)
	h.setFillRate(0)
	ran, during := rt32Loop(t, a, refA, build, "rt32sh.r", 10000, 50000, 0, 20000)
	other := <-done
	t.Logf("a: %d statements (%d while keys were built), b: %d statements", ran, during, other[0])
	rt32Whole(t, h, a, "rt32sh.r")
	rt32Same(t, h, a, refA, append(rt32Meta("rt32sh", "r"), "SELECT COUNT(*), SUM(id), SUM(d), SUM(a) FROM r", "CHECKSUM TABLE r")...)
	rt32Same(t, h, b, refB, "SELECT COUNT(*), SUM(id), SUM(d), SUM(a) FROM r")
}

// rt32ReadOnlyEnv is a proxy whose upstream account may only read
// production (and do anything in the proxy's own _sqlfork databases),
// forking every table lazily at rate; clients log in as that account.
func rt32ReadOnlyEnv(t *testing.T, rate int64) (*proxyHandle, *sql.DB, func(db string) string) {
	t.Helper()
	server, _ := env(t)
	root := openDB(t, server.DSN(""))
	for _, q := range []string{
		"DROP USER IF EXISTS 'rt32ro'@'%'",
		"CREATE USER 'rt32ro'@'%' IDENTIFIED BY '" + sandboxPassword + "'",
		"GRANT SELECT, SHOW VIEW ON *.* TO 'rt32ro'@'%'",
		"GRANT ALL PRIVILEGES ON `\\_sqlfork%`.* TO 'rt32ro'@'%'",
	} {
		mustExecC(t, root, q)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP USER IF EXISTS 'rt32ro'@'%'") })
	h := startTestProxy(t, server.Addr, server, func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, rate
		c.UpstreamUser, c.UpstreamPassword = "rt32ro", sandboxPassword
	})
	return h, root, func(db string) string { return h.userDSN("rt32ro", db) }
}

// TestRT32ReadOnlyAccount: with an upstream account that may only read
// production, the key shapes and the build window answer as the copy.
func TestRT32ReadOnlyAccount(t *testing.T) {
	h, root, dsn := rt32ReadOnlyEnv(t, 20000)
	setup := append([]string{}, rt32BigSetup...)
	for _, s := range rt32Shapes[:6] {
		setup = append(setup, s.ddl, s.fill)
	}
	rt27Databases(t, root, "rt32ro", setup)
	sb := conn(t, openDB(t, dsn("rt32ro")))
	ref := conn(t, openDB(t, directDSN(h.db, "rt32ro_ref")))
	build := rt32WatchBuild(t, root)
	rt32Same(t, h, sb, ref, "UPDATE r SET d = -1 WHERE id = 1")
	if !lazyFilling(t, sb, "rt32ro.r") {
		t.Fatalf("r is not filling: %q; lazy forks %v, status %v", tableStateOf(t, sb, "rt32ro.r"),
			h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy"}), rowsOf(t, sb, "SANDBOX STATUS"))
	}
	h.setFillRate(0)
	ran, during := rt32Loop(t, sb, ref, build, "rt32ro.r", 10000, 90000, 0, 20000)
	t.Logf("%d statements, %d while keys were built", ran, during)
	rt32Whole(t, h, sb, "rt32ro.r")
	rt32Same(t, h, sb, ref, append(rt32Meta("rt32ro", "r"), "SELECT COUNT(*), SUM(id), SUM(d), SUM(a) FROM r", "CHECKSUM TABLE r")...)
	for _, s := range rt32Shapes[:6] {
		first := "DELETE FROM " + s.name + " WHERE id = 7"
		rt32Same(t, h, sb, ref, first)
		rt32Whole(t, h, sb, "rt32ro."+s.name)
		rt32Same(t, h, sb, ref, append(rt32Meta("rt32ro", s.name), "CHECKSUM TABLE "+s.name)...)
	}
}

// TestRT32LinkedAndKept: tables whose keys are not deferred (FULLTEXT
// beside plain keys, partitions) or that fork whole (a parent and a child
// of a foreign key, one with a trigger): each answers as the copy, keys
// and rows.
func TestRT32LinkedAndKept(t *testing.T) {
	h, root := rt27Env(t, 0)
	sb, ref := rt27Pair(t, h, root, "rt32lk", []string{
		"CREATE TABLE ft (id INT PRIMARY KEY, txt TEXT, a INT, KEY ka (a), FULLTEXT KEY ftx (txt), KEY kb (a, id))",
		"INSERT INTO ft SELECT seq, CONCAT('word', seq % 50), seq % 13 FROM seq_1_to_20000",
		"CREATE TABLE part (id INT PRIMARY KEY, a INT, b INT, KEY ka (a), KEY kb (b DESC)) PARTITION BY HASH (id) PARTITIONS 4",
		"INSERT INTO part SELECT seq, seq % 13, seq % 7 FROM seq_1_to_20000",
		"CREATE TABLE parent (id INT PRIMARY KEY, code INT NOT NULL, a INT, KEY kc (code), KEY ka (a))",
		"INSERT INTO parent SELECT seq, seq, seq % 13 FROM seq_1_to_20000",
		"CREATE TABLE child (id INT PRIMARY KEY, pcode INT, a INT, KEY ka (a), CONSTRAINT fkc FOREIGN KEY (pcode) REFERENCES parent (code))",
		"INSERT INTO child SELECT seq, seq, seq % 13 FROM seq_1_to_20000",
		"CREATE TABLE trg (id INT PRIMARY KEY, a INT, n INT DEFAULT 0, KEY ka (a))",
		"INSERT INTO trg SELECT seq, seq % 13, 0 FROM seq_1_to_20000",
		"CREATE TRIGGER trg_bu BEFORE UPDATE ON trg FOR EACH ROW SET NEW.n = OLD.n + 1",
		"CREATE TABLE sp (id INT PRIMARY KEY, g POINT NOT NULL, a INT, KEY ka (a), SPATIAL KEY sg (g), KEY kb (a, id))",
		"INSERT INTO sp SELECT seq, POINT(seq % 100, seq % 37), seq % 13 FROM seq_1_to_20000",
	})
	for _, tb := range []string{"ft", "part", "parent", "child", "trg", "sp"} {
		rt32Same(t, h, sb, ref, "UPDATE "+tb+" SET a = a + 100 WHERE id = 5")
		rt32Whole(t, h, sb, "rt32lk."+tb)
		rt32Same(t, h, sb, ref, append(rt32Meta("rt32lk", tb), "SELECT COUNT(*), SUM(a) FROM "+tb, "CHECKSUM TABLE "+tb)...)
	}
	rt32Same(t, h, sb, ref,
		"SELECT COUNT(*) FROM ft WHERE MATCH (txt) AGAINST ('word7')",
		"INSERT INTO child (id, pcode, a) VALUES (30000, 999999, 1)",
		"UPDATE trg SET a = 1 WHERE id = 5",
		"SELECT n FROM trg WHERE id = 5",
	)
}

// TestRT32QuoteShowCreateOff: a server whose global sql_quote_show_create
// is OFF writes SHOW CREATE TABLE without back quotes on connections that
// do not set it: the proxy's side connections set it ON for themselves
// (before, tabledef could not read the definition, deferKeys failed, and
// the first write of every table forked lazily was refused, where a copy
// works).
func TestRT32QuoteShowCreateOff(t *testing.T) {
	server, _ := env(t)
	t.Cleanup(func() {
		db, err := sql.Open("mysql", server.DSN(""))
		if err == nil {
			if _, err = db.Exec("SET GLOBAL sql_quote_show_create = ON"); err != nil {
				t.Errorf("set sql_quote_show_create back: %v", err)
			}
			db.Close()
		}
	})
	mustExecC(t, openDB(t, server.DSN("")), "SET GLOBAL sql_quote_show_create = OFF")
	h, root := rt27Env(t, 0)
	sb, ref := rt27Pair(t, h, root, "rt32qs", []string{
		"CREATE TABLE t (id INT PRIMARY KEY, a INT, KEY ka (a))",
		"INSERT INTO t SELECT seq, seq % 13 FROM seq_1_to_20000",
	})
	rt32Same(t, h, sb, ref, "UPDATE t SET a = -1 WHERE id = 5", "SELECT id, a FROM t WHERE id = 5")
	rt32Whole(t, h, sb, "rt32qs.t")
	rt32Same(t, h, sb, ref, "SELECT COUNT(*), SUM(a) FROM t")
}

// TestRT32IndexHintsAndMetaDuringFill: while r fills (its staging table
// without its plain keys), statements naming r's plain keys in index
// hints, and the statements that show its keys, answer as the copy.
func TestRT32IndexHintsAndMetaDuringFill(t *testing.T) {
	h, root := rt27Env(t, 2000)
	sb, ref := rt27Pair(t, h, root, "rt32ih", rt32MidSetup)
	rt32Same(t, h, sb, ref, "UPDATE r SET d = -1 WHERE id = 1")
	if !lazyFilling(t, sb, "rt32ih.r") {
		t.Fatal("r is not filling")
	}
	stmts := append(rt32Meta("rt32ih", "r"),
		"SELECT id, a, d FROM r FORCE INDEX (ka) WHERE id = 5",
		"SELECT id, a, d FROM r USE INDEX (kab, kcb) WHERE u = 'u6'",
		"SELECT id, a, d FROM r IGNORE INDEX (uu, PRIMARY) WHERE id = 7",
		"UPDATE r FORCE INDEX (kd) SET d = 100 WHERE id = 8",
		"DELETE FROM r USE INDEX (kdc) WHERE u = 'u9'",
		"SELECT id, a, d FROM r FORCE INDEX (nosuch) WHERE id = 10",
		"SELECT id FROM r FORCE INDEX FOR ORDER BY (kc) WHERE id IN (11, 12) ORDER BY c",
		"SELECT id, d FROM r WHERE id IN (5, 6, 7, 8, 9) ORDER BY id",
	)
	rt32Same(t, h, sb, ref, stmts...)
	if !lazyFilling(t, sb, "rt32ih.r") {
		t.Log("r was whole before the last statement")
	}
	rt32Whole(t, h, sb, "rt32ih.r")
	rt32Same(t, h, sb, ref, append(rt32Meta("rt32ih", "r"), "CHECKSUM TABLE r")...)
}

// TestRT32StatusDiffDuringBuild: SANDBOX STATUS and SANDBOX DIFF SUMMARY
// from the sandbox's other connection while the keys are built: STATUS
// answers (the table still filling), DIFF waits for the fork to be whole
// and shows exactly the sandbox's changes.
func TestRT32StatusDiffDuringBuild(t *testing.T) {
	h, root := rt27Env(t, 20000)
	rt27Databases(t, root, "rt32sdb", rt32BigSetup)
	a := conn(t, openDB(t, h.dsn("rt32sdb")))
	b := conn(t, openDB(t, h.dsn("rt32sdb")))
	mustExecC(t, a, "SANDBOX CREATE rt32sdb_box")
	mustExecC(t, b, "SANDBOX ATTACH rt32sdb_box")
	t.Cleanup(func() { _, _ = a.ExecContext(context.Background(), "SANDBOX DISCARD rt32sdb_box") })
	build := rt32WatchBuild(t, root)
	for _, q := range []string{"UPDATE r SET d = -1 WHERE id = 1", "DELETE FROM r WHERE u = 'u2'", "INSERT INTO r (id, u) VALUES (500000, 'n1')"} {
		mustExecC(t, a, q)
	}
	if !rt32AtBuild(t, h, build) {
		t.Log("the key build was not seen")
	}
	state := tableStateOf(t, b, "rt32sdb.r")
	t.Logf("r during the key build: %q", state)
	rows := rowsOf(t, b, "SANDBOX DIFF SUMMARY")
	if len(rows) != 1 || strings.Join(rows[0][2:5], "/") != "1/1/1" {
		t.Errorf("DIFF SUMMARY during the key build: %v, want 1 inserted, 1 updated, 1 deleted", rows)
	}
	if lazyFilling(t, b, "rt32sdb.r") {
		t.Error("DIFF answered while r still filled")
	}
	got := rt32Ask(context.Background(), b, "SANDBOX DIFF")
	for _, want := range []string{"500000", "-1"} {
		if !strings.Contains(got, want) {
			t.Errorf("SANDBOX DIFF lacks %q: %s", want, got)
		}
	}
}
