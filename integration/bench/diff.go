package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/sqlrows"
)

// The diff benchmark (-diff, -diff-only): SANDBOX DIFF and EXPORT of a
// sandbox's fork of a large production table, with change capture (hidden
// triggers writing each changed row's fork-time image to a side table) and
// without it (a whole-table compare). See docs/BENCHMARKS.md, "Diff,
// export, promote (issue 15)".
//
// Rows of diffbench.sbtest1 (R = -diff-rows) the benchmark changes:
//
//	ids 1 … 0.4N                 updated in the sandbox (k = k + 1)
//	ids R/2+1 … R/2+0.3N         deleted in the sandbox
//	0.3N new rows                inserted in the sandbox (ids R+1 …)
//	ids 1, 2, R/2+1              updated in production too (3 conflicts)
//	id R-1 updated, id R deleted in production only (drift no capture
//	                             DIFF shows; a whole-table compare does)
//	ids R/5+1 … R/5+bulk         the bulk UPDATE, in sandboxes of their own
//
// N is 100 in the main scenario, then grows along -diff-sweep.

const (
	diffDB    = "diffbench"
	diffTable = "sbtest1"
	// diffMain is the main scenario's changed rows: 40 UPDATE, 30 INSERT,
	// 30 DELETE, each by its own statement.
	diffMain = 100
	// diffConflicts are the rows the sandbox changed that production
	// changed too (ids 1, 2 and R/2+1).
	diffConflicts = 3
	// maxDiffAnswer is the proxy's bound on the rows of one DIFF answer
	// (session.maxDiffRows).
	maxDiffAnswer = 200000
)

// checkDiffSizes checks that the sweep and the bulk UPDATE fit the table's
// id ranges above.
func checkDiffSizes(o options) error {
	if !o.diff && !o.diffOnly {
		return nil
	}
	r := o.diffRows
	if r < 10000 {
		return errors.New("-diff-rows must be at least 10000")
	}
	if o.diffSweep[0] != diffMain {
		return fmt.Errorf("-diff-sweep must start with %d (the main scenario)", diffMain)
	}
	for i, n := range o.diffSweep {
		if n%10 != 0 || i > 0 && n <= o.diffSweep[i-1] {
			return errors.New("-diff-sweep must be ascending multiples of 10")
		}
	}
	nmax := o.diffSweep[len(o.diffSweep)-1]
	if nmax > maxDiffAnswer || 4*nmax/10 > r/4 {
		return fmt.Errorf("-diff-sweep: at most %d changed rows, and 0.4 × its largest at most -diff-rows / 4", maxDiffAnswer)
	}
	if o.diffBulkRows < 1 || r/5+o.diffBulkRows > r-2 {
		return errors.New("-diff-bulk-rows must be between 1 and 0.8 × -diff-rows - 2")
	}
	return nil
}

// cmdResult is one statement's timings.
type cmdResult struct {
	stmt string
	runs []time.Duration
	rows int // rows of its answer (the last run's)
}

func (c cmdResult) median() time.Duration { return medianDur(c.runs) }
func (c cmdResult) p95() time.Duration    { return pctDur(c.runs, 95) }

// run runs c's statement once through s, recording its time and its
// answer's rows.
func (c *cmdResult) run(ctx context.Context, s *sandboxConn) error {
	rows, d, err := s.query(ctx, c.stmt)
	if err != nil {
		return err
	}
	c.runs, c.rows = append(c.runs, d), len(rows)
	return nil
}

// pctDur is the p-th percentile of ds by nearest rank (of 20 runs, p95 is
// the 19th fastest).
func pctDur(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// sweepResult is DIFF SUMMARY and DIFF at one number of changed rows.
type sweepResult struct {
	changed          int
	sideRows         int64 // rows of the capture's side table
	summary, detail  cmdResult
	growth           time.Duration // the statements that brought the sandbox here
	growthStatements []string
}

// diffResult is what the diff benchmark measured.
type diffResult struct {
	opts  options
	bytes int64 // DATA_LENGTH + INDEX_LENGTH of the production table
	load  time.Duration
	// firstForkOn and firstForkOff are the main scenario's forks, each its
	// proxy's first; changes its 100 changes through the capture-on proxy.
	firstForkOn, firstForkOff, changes time.Duration
	// main: SUMMARY, DIFF, DIFF FOR, EXPORT of the main scenario (capture
	// on); fallback: DIFF SUMMARY of the same changes, capture off.
	main     []cmdResult
	fallback cmdResult
	sweep    []sweepResult
	// Per capture setting: forks of the table, the bulk UPDATE in the new
	// fork and the same UPDATE again.
	forkOn, forkOff   []time.Duration
	bulkOn, bulkOff   []time.Duration
	againOn, againOff []time.Duration
	checks            []string
	sideRowsMain      int64
	proxyArgsOff      string
	summaryOn         string // the main scenario's DIFF SUMMARY row, capture on
	summaryOff        string // and off
}

// sandboxConn is one client connection through a sandbox-mode proxy: its
// anonymous sandbox lives as long as the connection, or until SANDBOX
// DISCARD (which puts the connection in a new one).
type sandboxConn struct {
	pool *sql.DB
	c    *sql.Conn
}

func openSandbox(ctx context.Context, addr, user, password string) (*sandboxConn, error) {
	pool, err := openMySQL(addr, user, password, diffDB)
	if err != nil {
		return nil, err
	}
	c, err := pool.Conn(ctx)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &sandboxConn{pool: pool, c: c}, nil
}

func (s *sandboxConn) close() {
	s.c.Close()
	s.pool.Close()
}

// exec runs q and returns how long it took and the rows it affected.
func (s *sandboxConn) exec(ctx context.Context, q string) (time.Duration, int64, error) {
	t0 := time.Now()
	r, err := s.c.ExecContext(ctx, q)
	d := time.Since(t0)
	if err != nil {
		return d, 0, fmt.Errorf("%.120s: %w", q, err)
	}
	n, _ := r.RowsAffected()
	return d, n, nil
}

// execAll runs qs in order, stopping at the first error.
func (s *sandboxConn) execAll(ctx context.Context, qs []string) error {
	for _, q := range qs {
		if _, _, err := s.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

// query runs q and reads its whole answer (NULL as nil); the time
// includes reading it.
func (s *sandboxConn) query(ctx context.Context, q string) ([][]*string, time.Duration, error) {
	t0 := time.Now()
	rows, err := s.c.QueryContext(ctx, q)
	if err != nil {
		return nil, time.Since(t0), fmt.Errorf("%s: %w", q, err)
	}
	out, err := sqlrows.Text(rows)
	if err != nil {
		return nil, time.Since(t0), fmt.Errorf("%s: %w", q, err)
	}
	return out, time.Since(t0), nil
}

func deref(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

// measureDiff runs the diff benchmark.
func measureDiff(ctx context.Context, o options, e env) (*diffResult, error) {
	db := e.db
	res := &diffResult{opts: o, proxyArgsOff: "--diff-capture=false"}
	on, onAddr, onLog, err := startProxy(ctx, e.proxyBin, e.tmp, db.Addr, db.User, db.Password, "diff-capture-on", "transparent")
	if err != nil {
		return nil, err
	}
	defer on.stop(10 * time.Second)
	off, offAddr, offLog, err := startProxy(ctx, e.proxyBin, e.tmp, db.Addr, db.User, db.Password, "diff-capture-off", "transparent", res.proxyArgsOff)
	if err != nil {
		return nil, err
	}
	defer off.stop(10 * time.Second)
	logf("diff: sandbox-mode proxies, capture on (pid %d) on %s, capture off (pid %d) on %s", on.pid(), onAddr, off.pid(), offAddr)
	proxyErr := func(err error) error { return withExit(err, proxyProc{on, onLog}, proxyProc{off, offLog}) }
	if err := loadDiffTable(ctx, e, res); err != nil {
		return nil, err
	}
	if err := diffMainScenario(ctx, o, e, res, onAddr, offAddr); err != nil {
		return nil, proxyErr(err)
	}
	if err := diffCaptureCost(ctx, o, e, res, onAddr, offAddr); err != nil {
		return nil, proxyErr(err)
	}
	if on.exited() || off.exited() {
		return nil, proxyErr(errors.New("a proxy exited during the diff benchmark"))
	}
	if _, err := e.direct.ExecContext(ctx, "DROP DATABASE "+diffDB); err != nil {
		return nil, err
	}
	return res, nil
}

// loadDiffTable creates diffbench.sbtest1 with -diff-rows rows shaped like
// sysbench's (c: ten groups of 11 digits; pad: five), from MariaDB's
// Sequence engine, and its index on k after the rows.
func loadDiffTable(ctx context.Context, e env, res *diffResult) error {
	r := res.opts.diffRows
	digits := func(groups int) string {
		g := make([]string, groups)
		for i := range g {
			g[i] = "LPAD(FLOOR(RAND() * 100000000000), 11, '0')"
		}
		return "CONCAT_WS('-', " + strings.Join(g, ", ") + ")"
	}
	logf("diff: loading %s.%s with %d rows", diffDB, diffTable, r)
	t0 := time.Now()
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + diffDB,
		"CREATE DATABASE " + diffDB,
		"CREATE TABLE " + diffDB + "." + diffTable + " (id INT NOT NULL AUTO_INCREMENT, k INT NOT NULL DEFAULT 0, " +
			"c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', PRIMARY KEY (id)) ENGINE=InnoDB",
		fmt.Sprintf("INSERT INTO %s.%s (id, k, c, pad) SELECT seq, FLOOR(1 + RAND() * %d), %s, %s FROM %s.seq_1_to_%d",
			diffDB, diffTable, r, digits(10), digits(5), diffDB, r),
		"ALTER TABLE " + diffDB + "." + diffTable + " ADD INDEX k_1 (k)",
		"ANALYZE TABLE " + diffDB + "." + diffTable,
	} {
		if _, err := e.direct.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%.100s: %w", q, err)
		}
	}
	res.load = time.Since(t0)
	if err := e.direct.QueryRowContext(ctx, "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "+
		"WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", diffDB, diffTable).Scan(&res.bytes); err != nil {
		return err
	}
	logf("diff: loaded in %s (%.1f MB)", res.load.Round(time.Millisecond), float64(res.bytes)/1e6)
	return nil
}

// fork is the sandbox's first write of the table: its fork, timed.
func fork(ctx context.Context, s *sandboxConn) (time.Duration, error) {
	d, _, err := s.exec(ctx, "UPDATE "+diffTable+" SET k = k WHERE id = 0")
	return d, err
}

// mainChanges are the main scenario's statements: 40 UPDATE by key, 30
// INSERT, 30 DELETE by key, and an UPDATE that changes nothing (which
// fires the capture, and must not show).
func mainChanges(r int) []string {
	var out []string
	for id := 1; id <= 40; id++ {
		out = append(out, fmt.Sprintf("UPDATE %s SET k = k + 1 WHERE id = %d", diffTable, id))
	}
	for i := 1; i <= 30; i++ {
		out = append(out, fmt.Sprintf("INSERT INTO %s (k, c, pad) VALUES (%d, '%011d-sandbox', 'inserted in the sandbox')", diffTable, i, i))
	}
	for id := r/2 + 1; id <= r/2+30; id++ {
		out = append(out, fmt.Sprintf("DELETE FROM %s WHERE id = %d", diffTable, id))
	}
	return append(out, fmt.Sprintf("UPDATE %s SET k = k WHERE id = 41", diffTable))
}

// driftStatements change 5 rows of production directly: two rows and a
// row the sandbox deleted (conflicts), and two rows it left (no conflict).
func driftStatements(r int) []string {
	t := diffDB + "." + diffTable
	return []string{
		fmt.Sprintf("UPDATE %s SET pad = 'changed in production' WHERE id IN (1, 2, %d, %d)", t, r/2+1, r-1),
		fmt.Sprintf("DELETE FROM %s WHERE id = %d", t, r),
	}
}

// growStatements bring the sandbox from from changed rows to to, in the
// same proportions, by ranges of keys.
func growStatements(r, from, to int) []string {
	u0, u1 := 4*from/10, 4*to/10
	d0, d1 := r/2+3*from/10, r/2+3*to/10
	ins := 3*to/10 - 3*from/10
	return []string{
		fmt.Sprintf("UPDATE %s SET k = k + 1 WHERE id BETWEEN %d AND %d", diffTable, u0+1, u1),
		fmt.Sprintf("INSERT INTO %s (k, c, pad) SELECT k, c, pad FROM %s WHERE id BETWEEN %d AND %d", diffTable, diffTable, r/4+1, r/4+ins),
		fmt.Sprintf("DELETE FROM %s WHERE id BETWEEN %d AND %d", diffTable, d0+1, d1),
	}
}

// summaryCounts checks a DIFF SUMMARY answer: one row, for the table,
// with these counts and method.
func summaryCounts(rows [][]*string, ins, upd, del, conflicts int, method string) (string, error) {
	if len(rows) != 1 {
		return "", fmt.Errorf("DIFF SUMMARY: %d rows, want 1", len(rows))
	}
	r := rows[0]
	if len(r) != 9 {
		return "", fmt.Errorf("DIFF SUMMARY: %d columns, want 9", len(r))
	}
	got := make([]string, len(r))
	for i, v := range r {
		got[i] = deref(v)
	}
	line := strings.Join(got, " | ")
	want := []string{diffDB + "." + diffTable, "forked", strconv.Itoa(ins), strconv.Itoa(upd), strconv.Itoa(del), strconv.Itoa(conflicts), "primary", method}
	if !slices.Equal(got[:8], want) {
		return line, fmt.Errorf("DIFF SUMMARY: got %q, want %q", line, strings.Join(want, " | "))
	}
	return line, nil
}

// detailCounts checks a DIFF answer: as many rows of each op as want.
func detailCounts(rows [][]*string, want map[string]int) error {
	got := map[string]int{}
	for _, r := range rows {
		if len(r) != 6 {
			return fmt.Errorf("DIFF: %d columns, want 6", len(r))
		}
		if deref(r[0]) != diffDB+"."+diffTable {
			return fmt.Errorf("DIFF: a row of table %s", deref(r[0]))
		}
		op := deref(r[1])
		got[op]++
		if err := checkDetailRow(op, r[2:]); err != nil {
			return fmt.Errorf("DIFF: %s at key %s: %w", op, deref(r[2]), err)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("DIFF: ops %v, want %v", got, want)
	}
	for op, n := range want {
		if got[op] != n {
			return fmt.Errorf("DIFF: ops %v, want %v", got, want)
		}
	}
	return nil
}

// checkDetailRow checks one DIFF row's key, before, after and production
// JSON against what the benchmark did: an update (k + 1) has both images,
// an insert only after, a delete only before; a conflict also has
// production's row, as the drift left it.
func checkDetailRow(op string, v []*string) error {
	var objs [4]map[string]any // the key, the images before and after, production's row
	for i := range objs {
		if v[i] == nil {
			continue
		}
		if err := json.Unmarshal([]byte(*v[i]), &objs[i]); err != nil {
			return fmt.Errorf("column %d: %w", i+3, err)
		}
	}
	key, before, after, prod := objs[0], objs[1], objs[2], objs[3]
	if key == nil || key["id"] == nil {
		return errors.New("no key")
	}
	if (op == "conflict") != (prod != nil) {
		return errors.New("production's row where there is no conflict, or none where there is")
	}
	if prod != nil && prod["pad"] != "changed in production" {
		return fmt.Errorf("production's row %v is not the drift's", prod)
	}
	switch {
	case before != nil && after != nil: // an update
		if op != "update" && op != "conflict" {
			return errors.New("both images")
		}
		bk, ok := before["k"].(float64)
		if !ok || after["k"] != bk+1 || after["c"] != before["c"] || after["pad"] != before["pad"] || after["id"] != key["id"] {
			return fmt.Errorf("before %v, after %v: not k + 1", before, after)
		}
	case after != nil:
		if op != "insert" {
			return errors.New("only the image after")
		}
	case before != nil:
		if op != "delete" && op != "conflict" {
			return errors.New("only the image before")
		}
		if before["id"] != key["id"] {
			return errors.New("the image before is not the key's")
		}
	default:
		return errors.New("no image")
	}
	return nil
}

// exportCounts checks the main scenario's SANDBOX EXPORT: the header, a
// note about the conflicts, one INSERT of the 30 new rows, 40 UPDATE and
// one DELETE of 30 keys.
func exportCounts(rows [][]*string) error {
	kinds := map[string]int{}
	for _, r := range rows {
		s := deref(r[0])
		switch {
		case strings.HasPrefix(s, "SET "):
			kinds["SET"]++
		case strings.HasPrefix(s, "-- "):
			kinds["note"]++
			if !strings.Contains(s, fmt.Sprintf("%d rows changed in production", diffConflicts)) {
				return fmt.Errorf("EXPORT: unexpected note %q", s)
			}
		case strings.HasPrefix(s, "INSERT INTO "):
			kinds["INSERT"]++
			if n := strings.Count(s, "-sandbox'"); n != 30 {
				return fmt.Errorf("EXPORT: the INSERT has %d new rows, want 30", n)
			}
		case strings.HasPrefix(s, "UPDATE "):
			kinds["UPDATE"]++
		case strings.HasPrefix(s, "DELETE FROM "):
			kinds["DELETE"]++
			if n := strings.Count(s, ",") + 1; n != 30 {
				return fmt.Errorf("EXPORT: the DELETE has %d keys, want 30", n)
			}
		default:
			return fmt.Errorf("EXPORT: unexpected statement %.80q", s)
		}
	}
	want := map[string]int{"SET": 3, "note": 1, "INSERT": 1, "UPDATE": 40, "DELETE": 1}
	if len(rows) != 46 || len(kinds) != len(want) {
		return fmt.Errorf("EXPORT: %d statements %v, want 46 %v", len(rows), kinds, want)
	}
	for k, n := range want {
		if kinds[k] != n {
			return fmt.Errorf("EXPORT: statements %v, want %v", kinds, want)
		}
	}
	return nil
}

// sideRows counts the rows of the capture side table of the fork of
// diffbench.sbtest1 the capture-on proxy made (read from the registry on
// the direct connection).
func sideRows(ctx context.Context, e env) (int64, error) {
	var sdb, stbl string
	err := e.direct.QueryRowContext(ctx, "SELECT side_db, side_tbl FROM _sqlfork_meta.captures WHERE db = ? AND tbl = ? AND state = 'rows'",
		diffDB, diffTable).Scan(&sdb, &stbl)
	if err != nil {
		return 0, fmt.Errorf("find the capture side table: %w", err)
	}
	var n int64
	err = e.direct.QueryRowContext(ctx, "SELECT COUNT(*) FROM `"+sdb+"`.`"+stbl+"`").Scan(&n)
	return n, err
}

// diffMainScenario: forks with capture on and off, the 100 changes in
// both, production's drift, the checks, then the four statements with
// capture on, DIFF SUMMARY with capture off, and the sweep.
func diffMainScenario(ctx context.Context, o options, e env, res *diffResult, onAddr, offAddr string) error {
	sOn, err := openSandbox(ctx, onAddr, e.db.User, e.db.Password)
	if err != nil {
		return err
	}
	defer sOn.close()
	sOff, err := openSandbox(ctx, offAddr, e.db.User, e.db.Password)
	if err != nil {
		return err
	}
	defer sOff.close()
	if err := diffMainChanges(ctx, o, e, res, sOn, sOff); err != nil {
		return err
	}
	if err := checkMainAnswers(ctx, o, res, sOn, sOff); err != nil {
		return err
	}
	if err := timeMainDiffs(ctx, o, res, sOn, sOff); err != nil {
		return err
	}
	if err := diffSweep(ctx, o, e, res, sOn); err != nil {
		return err
	}
	_, _, err = sOn.exec(ctx, "SANDBOX DISCARD")
	return err
}

// The statements the diff benchmark times.
const (
	diffSummaryStmt = "SANDBOX DIFF SUMMARY"
	diffDetailStmt  = "SANDBOX DIFF"
	diffForStmt     = "SANDBOX DIFF FOR " + diffDB + "." + diffTable
	diffExportStmt  = "SANDBOX EXPORT"
)

// diffMainChanges forks the table in both sandboxes (each its proxy's
// first fork, timed), makes the main scenario's changes in both (timed
// with capture on), production's drift, and counts the side table's rows.
func diffMainChanges(ctx context.Context, o options, e env, res *diffResult, sOn, sOff *sandboxConn) error {
	r := o.diffRows
	var err error
	if res.firstForkOn, err = fork(ctx, sOn); err != nil {
		return fmt.Errorf("fork, capture on: %w", err)
	}
	if res.firstForkOff, err = fork(ctx, sOff); err != nil {
		return fmt.Errorf("fork, capture off: %w", err)
	}
	logf("diff: forked %d rows: capture on %s, capture off %s (each its proxy's first fork)", r,
		res.firstForkOn.Round(time.Millisecond), res.firstForkOff.Round(time.Millisecond))
	t0 := time.Now()
	if err := sOn.execAll(ctx, mainChanges(r)); err != nil {
		return err
	}
	res.changes = time.Since(t0)
	if err := sOff.execAll(ctx, mainChanges(r)); err != nil {
		return err
	}
	if err := execDirect(ctx, e.direct, driftStatements(r)...); err != nil {
		return err
	}
	if res.sideRowsMain, err = sideRows(ctx, e); err != nil {
		return err
	}
	logf("diff: 100 changes (+1 no-op UPDATE) in each sandbox, 5 rows changed in production; side table %d rows", res.sideRowsMain)
	return nil
}

// checkMainAnswers checks the main scenario's answers once before they are
// timed: DIFF SUMMARY, DIFF, DIFF FOR and EXPORT with capture on, DIFF
// SUMMARY with capture off; res.checks says what they showed.
func checkMainAnswers(ctx context.Context, o options, res *diffResult, sOn, sOff *sandboxConn) error {
	rows, _, err := sOn.query(ctx, diffSummaryStmt)
	if err != nil {
		return err
	}
	if res.summaryOn, err = summaryCounts(rows, 30, 40, 30, diffConflicts, "capture"); err != nil {
		return err
	}
	detailWant := map[string]int{"insert": 30, "update": 40 - 2, "delete": 30 - 1, "conflict": diffConflicts}
	for _, q := range []string{diffDetailStmt, diffForStmt} {
		if rows, _, err = sOn.query(ctx, q); err != nil {
			return err
		}
		if err := detailCounts(rows, detailWant); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	if rows, _, err = sOn.query(ctx, diffExportStmt); err != nil {
		return err
	}
	if err := exportCounts(rows); err != nil {
		return err
	}
	// Without capture the whole table is compared with production now: it
	// also shows production's own changes, reversed (id R-1 updated, id R
	// "inserted"), and has no conflicts.
	if rows, _, err = sOff.query(ctx, diffSummaryStmt); err != nil {
		return err
	}
	if res.summaryOff, err = summaryCounts(rows, 31, 41, 30, 0, "compare"); err != nil {
		return fmt.Errorf("capture off: %w", err)
	}
	res.checks = append(res.checks,
		"DIFF SUMMARY (capture): `"+res.summaryOn+"`",
		fmt.Sprintf("DIFF and DIFF FOR: 100 rows: %d insert, %d update, %d delete, %d conflict (ids 1, 2 and %d, each with production's row)",
			detailWant["insert"], detailWant["update"], detailWant["delete"], detailWant["conflict"], o.diffRows/2+1),
		"EXPORT: 46 statements: 3 SET, a note on the 3 conflicts, 1 INSERT … ON DUPLICATE KEY UPDATE of the 30 new rows, 40 UPDATE, 1 DELETE of 30 keys",
		"DIFF SUMMARY (capture off, whole-table compare): `"+res.summaryOff+"` (production's own 2 changes show, reversed)",
	)
	return nil
}

// timeMainDiffs times the main scenario's four statements with capture on
// (-diff-runs each) and DIFF SUMMARY with capture off
// (-diff-fallback-runs), then discards the capture-off sandbox.
func timeMainDiffs(ctx context.Context, o options, res *diffResult, sOn, sOff *sandboxConn) error {
	cmds := []string{diffSummaryStmt, diffDetailStmt, diffForStmt, diffExportStmt}
	res.main = make([]cmdResult, len(cmds))
	for i, q := range cmds {
		res.main[i].stmt = q
	}
	logf("diff: %d runs of %s (capture on)", o.diffRuns, strings.Join(cmds, ", "))
	for range o.diffRuns {
		for i := range res.main {
			if err := res.main[i].run(ctx, sOn); err != nil {
				return err
			}
		}
	}
	for _, c := range res.main {
		logf("diff: %-45s median %8s  p95 %8s  (%d rows)", c.stmt, fmtMs(c.median()), fmtMs(c.p95()), c.rows)
	}
	res.fallback.stmt = diffSummaryStmt
	logf("diff: %d runs of %s (capture off: whole-table compare)", o.diffFallbackRuns, diffSummaryStmt)
	for range o.diffFallbackRuns {
		if err := res.fallback.run(ctx, sOff); err != nil {
			return err
		}
	}
	logf("diff: capture off %s median %s  p95 %s", diffSummaryStmt, fmtMs(res.fallback.median()), fmtMs(res.fallback.p95()))
	_, _, err := sOff.exec(ctx, "SANDBOX DISCARD")
	return err
}

// diffSweep is the sweep: the main scenario is its first step; the
// sandbox then grows by ranges of keys to each -diff-sweep size.
func diffSweep(ctx context.Context, o options, e env, res *diffResult, sOn *sandboxConn) error {
	res.sweep = append(res.sweep, sweepResult{changed: diffMain, sideRows: res.sideRowsMain, summary: res.main[0], detail: res.main[1]})
	prev := diffMain
	for _, n := range o.diffSweep[1:] {
		sw, err := sweepStep(ctx, o, e, res, sOn, prev, n)
		if err != nil {
			return err
		}
		res.sweep = append(res.sweep, sw)
		prev = n
	}
	return nil
}

// sweepStep grows the sandbox's changes from prev rows to n, checks DIFF
// SUMMARY and DIFF there (checkSweep) and times them (-diff-runs each).
func sweepStep(ctx context.Context, o options, e env, res *diffResult, sOn *sandboxConn, prev, n int) (sweepResult, error) {
	sw := sweepResult{changed: n, summary: cmdResult{stmt: diffSummaryStmt}, detail: cmdResult{stmt: diffDetailStmt}}
	sw.growthStatements = growStatements(o.diffRows, prev, n)
	t0 := time.Now()
	if err := sOn.execAll(ctx, sw.growthStatements); err != nil {
		return sw, err
	}
	sw.growth = time.Since(t0)
	var err error
	if sw.sideRows, err = sideRows(ctx, e); err != nil {
		return sw, err
	}
	line, err := checkSweep(ctx, sOn, n)
	if err != nil {
		return sw, err
	}
	res.checks = append(res.checks, fmt.Sprintf("%d changed rows: DIFF SUMMARY `%s`; DIFF %d rows of the same ops", n, line, n))
	logf("diff: %d changed rows (grown in %s, side table %d rows): %d runs of DIFF SUMMARY and DIFF", n,
		sw.growth.Round(time.Millisecond), sw.sideRows, o.diffRuns)
	for range o.diffRuns {
		if err := sw.summary.run(ctx, sOn); err != nil {
			return sw, err
		}
		if err := sw.detail.run(ctx, sOn); err != nil {
			return sw, err
		}
	}
	logf("diff: %d changed rows: SUMMARY median %s p95 %s; DIFF median %s p95 %s", n,
		fmtMs(sw.summary.median()), fmtMs(sw.summary.p95()), fmtMs(sw.detail.median()), fmtMs(sw.detail.p95()))
	return sw, nil
}

// checkSweep checks DIFF SUMMARY and DIFF of n changed rows (3/10
// inserted, 4/10 updated, 3/10 deleted): DIFF SUMMARY's line.
func checkSweep(ctx context.Context, sOn *sandboxConn, n int) (string, error) {
	ins, upd, del := 3*n/10, 4*n/10, 3*n/10
	rows, _, err := sOn.query(ctx, diffSummaryStmt)
	if err != nil {
		return "", err
	}
	line, err := summaryCounts(rows, ins, upd, del, diffConflicts, "capture")
	if err != nil {
		return "", fmt.Errorf("%d changed rows: %w", n, err)
	}
	if rows, _, err = sOn.query(ctx, diffDetailStmt); err != nil {
		return "", err
	}
	if err := detailCounts(rows, map[string]int{"insert": ins, "update": upd - 2, "delete": del - 1, "conflict": diffConflicts}); err != nil {
		return "", fmt.Errorf("%d changed rows: %w", n, err)
	}
	return line, nil
}

// diffCaptureCost measures what capture costs a sandbox's writes: -diff-reps
// times for each setting (alternating which goes first), a new sandbox
// forks the table, runs the bulk UPDATE and the same UPDATE again, and is
// discarded.
func diffCaptureCost(ctx context.Context, o options, e env, res *diffResult, onAddr, offAddr string) error {
	lo := o.diffRows/5 + 1
	bulk := fmt.Sprintf("UPDATE %s SET k = k + 1 WHERE id BETWEEN %d AND %d", diffTable, lo, lo+o.diffBulkRows-1)
	for rep := 0; rep < o.diffReps; rep++ {
		settings := []bool{true, false}
		if rep%2 == 1 {
			settings = []bool{false, true}
		}
		for _, capture := range settings {
			addr, name := onAddr, "on"
			if !capture {
				addr, name = offAddr, "off"
			}
			s, err := openSandbox(ctx, addr, e.db.User, e.db.Password)
			if err != nil {
				return err
			}
			err = func() error {
				defer s.close()
				f, err := fork(ctx, s)
				if err != nil {
					return fmt.Errorf("fork, capture %s: %w", name, err)
				}
				b, n, err := s.exec(ctx, bulk)
				if err != nil {
					return err
				}
				if n != int64(o.diffBulkRows) {
					return fmt.Errorf("the bulk UPDATE changed %d rows, want %d", n, o.diffBulkRows)
				}
				a, n, err := s.exec(ctx, bulk)
				if err != nil {
					return err
				}
				if n != int64(o.diffBulkRows) {
					return fmt.Errorf("the bulk UPDATE, again, changed %d rows, want %d", n, o.diffBulkRows)
				}
				if capture {
					res.forkOn, res.bulkOn, res.againOn = append(res.forkOn, f), append(res.bulkOn, b), append(res.againOn, a)
					if rep == 0 {
						rows, _, err := s.query(ctx, "SANDBOX DIFF SUMMARY")
						if err != nil {
							return err
						}
						line, err := summaryCounts(rows, 0, o.diffBulkRows, 0, 0, "capture")
						if err != nil {
							return fmt.Errorf("after the bulk UPDATE: %w", err)
						}
						res.checks = append(res.checks, "after the bulk UPDATE (twice), capture on: DIFF SUMMARY `"+line+"`")
					}
				} else {
					res.forkOff, res.bulkOff, res.againOff = append(res.forkOff, f), append(res.bulkOff, b), append(res.againOff, a)
				}
				logf("diff: capture %-3s rep %d: fork %s, bulk UPDATE of %d rows %s, again %s", name, rep+1,
					f.Round(time.Millisecond), o.diffBulkRows, b.Round(time.Millisecond), a.Round(time.Millisecond))
				_, _, err = s.exec(ctx, "SANDBOX DISCARD")
				return err
			}()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// fmtMs is d in milliseconds, with two decimals below 10 ms.
func fmtMs(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.2f s", ms/1000)
}
