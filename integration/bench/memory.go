package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// memLoad is an answer the memory test streams through each path: a large
// result set of many ~1 KB rows, or one result set of a single large row.
type memLoad struct {
	name string // "result" or "row", for the report
	// rows is the number of rows of the result set (the row load: 1).
	rows int
	// rowBytes is the size of the one value of the row load (0 for the
	// result load, whose rows are seq and 1000 bytes).
	rowBytes int
}

// resultPad is the bytes of REPEAT in each row of the result load.
const resultPad = 1000

func resultLoad(rows int) memLoad { return memLoad{name: "result", rows: rows} }

func rowLoad(bytes int) memLoad { return memLoad{name: "row", rows: 1, rowBytes: bytes} }

// count is the REPEAT count of the load's statement.
func (l memLoad) count() int {
	if l.rowBytes > 0 {
		return l.rowBytes
	}
	return resultPad
}

// statement is the load's SQL. The sandbox's statement also reads
// sbtest1, which the sandbox has forked, so it is planned and rewritten to
// read the fork; its rows come from a recursive CTE, as the proxy refuses
// the Sequence engine's seq_1_to_N in a sandbox (no fork of it could be
// kept there). The values are the same: seq 1…rows and resultPad bytes.
// param puts a ? in place of the REPEAT count, to be bound to args.
func (l memLoad) statement(sandbox, param bool) (string, []any) {
	n, args := fmt.Sprint(l.count()), []any(nil)
	if param {
		n, args = "?", []any{l.count()}
	}
	switch {
	case l.rowBytes > 0 && sandbox:
		return "SELECT REPEAT('x', " + n + ") FROM sbtest1 WHERE id = 1", args
	case l.rowBytes > 0:
		return "SELECT REPEAT('x', " + n + ")", args
	case sandbox:
		return fmt.Sprintf("WITH RECURSIVE s (seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM s WHERE seq < %d) "+
			"SELECT s.seq, REPEAT('x', %s) FROM s JOIN sbtest1 t ON t.id = 1", l.rows, n), args
	}
	return fmt.Sprintf("SELECT seq, REPEAT('x', %s) FROM seq_1_to_%d", n, l.rows), args
}

// memForm is how a path sends the load's statement.
type memForm int

const (
	// formSingle: one COM_QUERY holding the statement (text rows).
	formSingle memForm = iota
	// formMulti: one COM_QUERY `SANDBOX STATUS; statement; SANDBOX
	// STATUS`, which the proxy splits and answers part by part.
	formMulti
	// formPrepared: COM_STMT_PREPARE and COM_STMT_EXECUTE with the count
	// bound to a ? (binary rows).
	formPrepared
)

func (f memForm) String() string {
	switch f {
	case formMulti:
		return "multi-statement with SANDBOX STATUS"
	case formPrepared:
		return "prepared statement"
	}
	return "single statement"
}

// multiAround wraps a statement into the multi-statement input of
// formMulti.
func multiAround(stmt string) string { return "SANDBOX STATUS; " + stmt + "; SANDBOX STATUS" }

// memPath is one way through a target that the memory test streams along.
type memPath struct {
	target  sbTarget
	sandbox bool // through the sandbox-mode proxy: statements read sbtest1's fork
	form    memForm
}

func (p memPath) name() string {
	if p.sandbox && p.target.name != "sandbox" {
		return p.target.name + ", the sandbox's statement (on production tables)"
	}
	return p.target.name + ", " + p.form.String()
}

// judged reports whether the RSS target applies: the path goes through the
// proxy (passthrough or sandbox mode).
func (p memPath) judged() bool { return p.target.name == "proxy" || p.target.name == "sandbox" }

// memPaths are the paths every load is streamed along: direct (with the
// sandbox's statement too) and the relay for reference, the passthrough
// proxy, and the sandbox-mode proxy in each form. targets are run's
// direct, relay, proxy and sandbox.
func memPaths(targets []sbTarget) []memPath {
	var paths []memPath
	for _, t := range targets {
		if t.name != "sandbox" {
			paths = append(paths, memPath{target: t})
			if t.name == "direct" {
				paths = append(paths, memPath{target: t, sandbox: true})
			}
			continue
		}
		for _, f := range []memForm{formSingle, formMulti, formPrepared} {
			paths = append(paths, memPath{target: t, sandbox: true, form: f})
		}
	}
	return paths
}

// streamResult is one pass of a load along a path.
type streamResult struct {
	path        memPath
	load        memLoad
	streamQuery string // as sent (with ? for a prepared statement)
	rows, bytes int64  // of the load's result set
	extraBytes  int64  // of the other results (SANDBOX STATUS)
	results     int    // result sets read
	elapsed     time.Duration
	rssBaseKB   int64 // hop's VmRSS just before the query
	rssPeakKB   int64 // highest VmRSS sampled every 50ms during the stream
	rssSamples  int
	hwmKB       int64 // hop's VmHWM (lifetime peak RSS) after the stream
	sampledHop  bool
	sampleErrs  int
}

func (r streamResult) mbps() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.bytes) / 1e6 / r.elapsed.Seconds()
}

// measureMemory streams each load along each path in turn.
func measureMemory(ctx context.Context, loads []memLoad, paths []memPath, user, password string, maxPacket int) ([]streamResult, error) {
	var out []streamResult
	for _, l := range loads {
		for _, p := range paths {
			res, err := streamThrough(ctx, p, l, user, password, maxPacket)
			if err != nil {
				return out, err
			}
			logStream(res)
			out = append(out, res)
		}
	}
	return out, nil
}

func logStream(r streamResult) {
	line := fmt.Sprintf("memory: %s via %s: %.0f MB in %s = %.0f MB/s", r.load.name, r.path.name(),
		float64(r.bytes)/1e6, r.elapsed.Round(time.Millisecond), r.mbps())
	if r.sampledHop {
		line += fmt.Sprintf(", RSS %.1f MiB before, peak %.1f MiB (%d samples)",
			kbToMiB(r.rssBaseKB), kbToMiB(r.rssPeakKB), r.rssSamples)
	}
	logf("%s", line)
}

// openPathConn opens one connection for p: database sbtest, the target's
// login, multiStatements for formMulti, server-side prepared statements
// (interpolateParams off, the driver's default) and maxAllowedPacket
// raised to maxPacket.
func openPathConn(ctx context.Context, p memPath, user, password string, maxPacket int) (*sql.DB, *sql.Conn, error) {
	if p.target.user != "" {
		user = p.target.user
	}
	db, err := openMySQL(p.target.addr, user, password, "sbtest", func(c *mysql.Config) {
		c.MultiStatements = p.form == formMulti
		c.InterpolateParams = false
		c.MaxAllowedPacket = maxPacket
	})
	if err != nil {
		return nil, nil, err
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("%s: connecting: %w", p.name(), err)
	}
	return db, conn, nil
}

// streamThrough reads the whole answer to l's statement along p with
// go-sql-driver over one connection, discarding the rows and counting the
// column bytes, while sampling the hop process's VmRSS.
func streamThrough(ctx context.Context, p memPath, l memLoad, user, password string, maxPacket int) (streamResult, error) {
	res := streamResult{path: p, load: l}
	stmt, args := l.statement(p.sandbox, p.form == formPrepared)
	if p.form == formMulti {
		stmt = multiAround(stmt)
	}
	res.streamQuery = stmt
	db, conn, err := openPathConn(ctx, p, user, password, maxPacket)
	if err != nil {
		return res, err
	}
	defer db.Close()
	defer conn.Close()

	var sampler *rssSampler
	if p.target.proc != nil {
		if sampler, err = startRSSSampler(p.target.proc.pid()); err != nil {
			return res, fmt.Errorf("%s: %w", p.name(), err)
		}
		res.sampledHop = true
	}
	t0 := time.Now()
	err = readAnswer(ctx, conn, &res, stmt, args)
	res.elapsed = time.Since(t0)
	if sampler != nil {
		s := sampler.stop()
		res.rssBaseKB, res.rssPeakKB, res.rssSamples, res.sampleErrs, res.hwmKB = s.baseKB, s.peakKB, s.samples, s.errors, s.hwmKB
	}
	if err != nil {
		return res, fmt.Errorf("%s: streaming %q: %w", p.name(), stmt, err)
	}
	return res, checkStream(res)
}

// readAnswer runs stmt on conn and reads every result set of its answer,
// counting into res the rows and bytes of the load's result set (the one
// with the load's columns) and the bytes of the others.
func readAnswer(ctx context.Context, conn *sql.Conn, res *streamResult, stmt string, args []any) error {
	rs, err := conn.QueryContext(ctx, stmt, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	wantCols := 2
	if res.load.rowBytes > 0 {
		wantCols = 1
	}
	for {
		cols, err := rs.Columns()
		if err != nil {
			return fmt.Errorf("result %d: %w", res.results+1, err)
		}
		res.results++
		rows, bytes, err := drainResult(rs, len(cols))
		if err != nil {
			return fmt.Errorf("result %d: %w", res.results, err)
		}
		if len(cols) == wantCols {
			res.rows, res.bytes = res.rows+rows, res.bytes+bytes
		} else {
			res.extraBytes += bytes
		}
		if !rs.NextResultSet() {
			return rs.Err()
		}
	}
}

// drainResult reads the rows of rs's current result set, of n columns,
// into reused buffers and returns how many rows and column bytes it held.
func drainResult(rs *sql.Rows, n int) (rows, bytes int64, err error) {
	vals := make([]sql.RawBytes, n)
	dest := make([]any, n)
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rs.Next() {
		if err := rs.Scan(dest...); err != nil {
			return rows, bytes, err
		}
		rows++
		for _, v := range vals {
			bytes += int64(len(v))
		}
	}
	return rows, bytes, rs.Err()
}

// checkStream verifies a stream read the whole load, and the right number
// of result sets for its form.
func checkStream(r streamResult) error {
	wantResults := 1
	if r.path.form == formMulti {
		wantResults = 3
	}
	switch {
	case r.results != wantResults:
		return fmt.Errorf("%s: %d result sets, want %d", r.path.name(), r.results, wantResults)
	case r.rows != int64(r.load.rows):
		return fmt.Errorf("%s: streamed %d rows, want %d", r.path.name(), r.rows, r.load.rows)
	case r.load.rowBytes > 0 && r.bytes != int64(r.load.rowBytes):
		// REPEAT gives NULL (and a warning) past max_allowed_packet.
		return fmt.Errorf("%s: the row held %d bytes, want %d (max_allowed_packet too small?)", r.path.name(), r.bytes, r.load.rowBytes)
	}
	return nil
}

// rssSampler samples a process's VmRSS every 50 ms.
type rssSampler struct {
	pid  int
	done chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	s    rssStats
}

// rssStats is what an rssSampler saw.
type rssStats struct {
	baseKB, peakKB int64 // VmRSS at the start; highest VmRSS sampled
	samples        int
	errors         int   // samples that failed
	hwmKB          int64 // VmHWM at the end (lifetime peak)
}

// startRSSSampler reads pid's VmRSS now and then every 50 ms until stop.
func startRSSSampler(pid int) (*rssSampler, error) {
	base, err := procStatusKB(pid, "VmRSS")
	if err != nil {
		return nil, fmt.Errorf("reading VmRSS of %d: %w", pid, err)
	}
	r := &rssSampler{pid: pid, done: make(chan struct{}), s: rssStats{baseKB: base, peakKB: base}}
	r.wg.Add(1)
	go r.loop()
	return r, nil
}

func (r *rssSampler) loop() {
	defer r.wg.Done()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.done:
			return
		case <-tick.C:
		}
		r.sample()
	}
}

func (r *rssSampler) sample() {
	kb, err := procStatusKB(r.pid, "VmRSS")
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.s.errors++
		return
	}
	r.s.samples++
	r.s.peakKB = max(r.s.peakKB, kb)
}

// stop ends the sampling, takes one last sample and VmHWM, and returns
// what was seen.
func (r *rssSampler) stop() rssStats {
	close(r.done)
	r.wg.Wait()
	r.sample()
	r.s.hwmKB, _ = procStatusKB(r.pid, "VmHWM")
	return r.s
}

// statementsLegend describes, for the report, the statements each path
// sends for l.
func statementsLegend(l memLoad) string {
	plain, _ := l.statement(false, false)
	sb, _ := l.statement(true, false)
	ps, _ := l.statement(true, true)
	return strings.Join([]string{
		"direct, relay, proxy: `" + plain + "`",
		"sandbox, single statement (and direct, the sandbox's statement): `" + sb + "`",
		"sandbox, multi-statement: `" + multiAround(sb) + "`",
		fmt.Sprintf("sandbox, prepared statement: `%s` with ? = %d", ps, l.count()),
	}, "; ")
}
