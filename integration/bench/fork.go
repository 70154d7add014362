package main

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
)

// forkResult is the fork time of one table size: the proxy's copy strategy
// (a first write through a sandbox-mode proxy, so the fork plus a no-op
// UPDATE) next to the same copy run by hand on a direct connection.
type forkResult struct {
	rows   int
	linked bool // sbtest1 has a child table of as many rows, joined by a foreign key

	bytes     int64 // DATA_LENGTH + INDEX_LENGTH of the source
	proxy     time.Duration
	hand      time.Duration
	reps      int
	proxyRuns []time.Duration
	handRuns  []time.Duration
}

func medianDur(ds []time.Duration) time.Duration {
	fs := make([]float64, len(ds))
	for i, d := range ds {
		fs[i] = float64(d)
	}
	return time.Duration(median(fs))
}

// measureFork prepares forkbench.sbtest1 with rows rows, then reps times
// forks it through the sandbox-mode proxy (each time in a new anonymous
// sandbox, discarded when its connection closes) and copies it by hand.
// linked adds forkbench.child, as many rows each referencing one of
// sbtest1's by a foreign key: the proxy forks both, and links the copies.
func measureFork(ctx context.Context, sb sbConfig, db *testdb.Server, direct *sql.DB, sbAddr string, rows, reps int, linked bool) (forkResult, error) {
	res := forkResult{rows: rows, reps: reps, linked: linked}
	if err := execDirect(ctx, direct, "DROP DATABASE IF EXISTS forkbench", "CREATE DATABASE forkbench"); err != nil {
		return res, err
	}
	defer func() { _, _ = direct.ExecContext(context.WithoutCancel(ctx), "DROP DATABASE IF EXISTS forkbench") }()
	hand, cleanup, err := prepareForkTables(ctx, sb, db, direct, rows, linked)
	if err != nil {
		return res, err
	}
	if _, err := direct.ExecContext(ctx, "ANALYZE TABLE forkbench.sbtest1"); err != nil {
		return res, err
	}
	if err := direct.QueryRowContext(ctx, "SELECT DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES "+
		"WHERE TABLE_SCHEMA = 'forkbench' AND TABLE_NAME = 'sbtest1'").Scan(&res.bytes); err != nil {
		return res, err
	}
	for i := 0; i < reps; i++ {
		h, err := forkByHand(ctx, direct, hand, cleanup)
		if err != nil {
			return res, err
		}
		res.handRuns = append(res.handRuns, h)
		d, err := forkThroughProxy(ctx, sbAddr, db)
		if err != nil {
			return res, err
		}
		res.proxyRuns = append(res.proxyRuns, d)
		logf("fork: %d rows (linked %v): proxy %s, by hand %s", rows, linked, d.Round(time.Millisecond), res.handRuns[i].Round(time.Millisecond))
		// The discarded sandbox's schema is dropped as the connection
		// closes; give it a moment so drops do not overlap the next copy.
		time.Sleep(500 * time.Millisecond)
	}
	res.proxy, res.hand = medianDur(res.proxyRuns), medianDur(res.handRuns)
	return res, nil
}

// prepareForkTables fills forkbench.sbtest1 with rows rows (sysbench
// prepare) and, linked, forkbench.child referencing it: the statements
// that copy them by hand, and those that drop the copies.
func prepareForkTables(ctx context.Context, sb sbConfig, db *testdb.Server, direct *sql.DB, rows int, linked bool) (hand, cleanup []string, err error) {
	fb := sb
	fb.tables, fb.tableSize, fb.db = 1, rows, "forkbench"
	args, err := fb.args("oltp_read_only", db.Addr, "prepare")
	if err != nil {
		return nil, nil, err
	}
	logf("fork: preparing forkbench.sbtest1 with %d rows", rows)
	if _, err := fb.sysbench(ctx, 30*time.Minute, args); err != nil {
		return nil, nil, err
	}
	hand = []string{"CREATE TABLE forkbench.hand LIKE forkbench.sbtest1",
		"INSERT INTO forkbench.hand SELECT * FROM forkbench.sbtest1"}
	cleanup = []string{"DROP TABLE forkbench.hand"}
	if !linked {
		return hand, cleanup, nil
	}
	if err := execDirect(ctx, direct,
		"CREATE TABLE forkbench.child (id INT PRIMARY KEY, sb_id INT NOT NULL, CONSTRAINT fk_sb FOREIGN KEY (sb_id) REFERENCES forkbench.sbtest1 (id))",
		"INSERT INTO forkbench.child SELECT id, id FROM forkbench.sbtest1",
		"ANALYZE TABLE forkbench.child",
	); err != nil {
		return nil, nil, err
	}
	hand = append(hand, "CREATE TABLE forkbench.hand_child LIKE forkbench.child",
		"INSERT INTO forkbench.hand_child SELECT * FROM forkbench.child",
		"SET STATEMENT foreign_key_checks = 0 FOR ALTER TABLE forkbench.hand_child ADD CONSTRAINT fk_hand "+
			"FOREIGN KEY (sb_id) REFERENCES forkbench.hand (id)")
	cleanup = []string{"DROP TABLE forkbench.hand_child", "DROP TABLE forkbench.hand"}
	return hand, cleanup, nil
}

// forkByHand runs hand, the statements the copy strategy runs, timed, then
// cleanup.
func forkByHand(ctx context.Context, direct *sql.DB, hand, cleanup []string) (time.Duration, error) {
	t0 := time.Now()
	if err := execDirect(ctx, direct, hand...); err != nil {
		return 0, err
	}
	d := time.Since(t0)
	for _, q := range cleanup {
		if _, err := direct.ExecContext(ctx, q); err != nil {
			return 0, err
		}
	}
	return d, nil
}

// forkThroughProxy times the first write of forkbench.sbtest1 through the
// sandbox-mode proxy on sbAddr: a new connection is a new sandbox; its
// first write forks the table.
func forkThroughProxy(ctx context.Context, sbAddr string, db *testdb.Server) (time.Duration, error) {
	p, err := openMySQL(sbAddr, db.User, db.Password, "forkbench")
	if err != nil {
		return 0, err
	}
	c, err := p.Conn(ctx)
	if err != nil {
		p.Close()
		return 0, err
	}
	t0 := time.Now()
	_, err = c.ExecContext(ctx, "UPDATE sbtest1 SET k = k WHERE id = 0")
	d := time.Since(t0)
	c.Close()
	p.Close()
	if err != nil {
		return 0, fmt.Errorf("fork through the proxy: %w", err)
	}
	return d, nil
}

// execDirect runs qs in order on db, stopping at the first error, which
// names its statement.
func execDirect(ctx context.Context, db *sql.DB, qs ...string) error {
	for _, q := range qs {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

func fmtRate(n float64, d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return strconv.FormatFloat(n/d.Seconds(), 'f', 0, 64)
}
