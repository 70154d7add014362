package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
)

// The fork-storm benchmark (issue 27, "forks cheap in number"): -storm
// clients connect through a transparent-mode proxy, each its own anonymous
// sandbox, and at one moment each writes a row into a small table (a fork
// of it) and reads the table back. Before that, a few forks one after the
// other are counted on the upstream: statements (the Com_ counters, which
// also count the statements of an anonymous block), client commands
// (Questions) and round trips (the general log's entries), each less the
// same clients' second write and read, which fork nothing.

// stormOptions are the fork-storm benchmark's flags.
type stormOptions struct {
	only     bool
	clients  int
	rows     int           // rows of the small table
	count    int           // forks counted one after the other
	answer   time.Duration // the target: every client answered within it
	side     int           // --side-connections of the proxy (0: its default)
	queue    time.Duration // --fork-queue-timeout of the proxy (0: its default)
	connects int           // connections opened at once while connecting the clients
	logFile  string        // the counted forks' general log is written here
}

func stormFlags(o *stormOptions) {
	flag.BoolVar(&o.only, "storm-only", false, "run only the fork-storm benchmark (issue 27): -storm-clients clients each fork a small table at once")
	flag.IntVar(&o.clients, "storm-clients", 1500, "clients of the fork storm, each its own sandbox")
	flag.IntVar(&o.rows, "storm-rows", 100, "rows of the small table every client forks")
	flag.IntVar(&o.count, "storm-count", 20, "forks made one after the other, their upstream statements counted")
	flag.DurationVar(&o.answer, "storm-answer", 60*time.Second, "the target: every client answered within this")
	flag.IntVar(&o.side, "storm-side-connections", 0, "the proxy's --side-connections (0: its default)")
	flag.DurationVar(&o.queue, "storm-fork-queue-timeout", 0, "the proxy's --fork-queue-timeout (0: its default)")
	flag.IntVar(&o.connects, "storm-connects", 100, "client connections opened at once before the storm")
	flag.StringVar(&o.logFile, "storm-log", "", "write the counted forks' general log (thread, command, statement) to this file")
}

// stormMariaDBArgs are the throwaway MariaDB's settings for the storm:
// room for every client and the proxy's side connections, and open tables
// for every fork and its capture table.
func stormMariaDBArgs(o stormOptions) []string {
	return []string{"--innodb-buffer-pool-size=256M",
		fmt.Sprintf("--max-connections=%d", o.clients+200),
		fmt.Sprintf("--open-files-limit=%d", 4*o.clients+4000),
		fmt.Sprintf("--table-open-cache=%d", 3*o.clients+1000),
		fmt.Sprintf("--table-definition-cache=%d", 3*o.clients+1000),
		"--thread-cache-size=256", "--back-log=1000"}
}

// counts are upstream counters: statements (Com_), client commands
// (Questions) and round trips (general log entries).
type counts struct{ stmts, questions, trips float64 }

func (a counts) minus(b counts) counts {
	return counts{a.stmts - b.stmts, a.questions - b.questions, a.trips - b.trips}
}

func (a counts) per(n int) counts {
	f := float64(n)
	return counts{a.stmts / f, a.questions / f, a.trips / f}
}

// stormResult is the fork-storm benchmark's outcome.
type stormResult struct {
	opts      stormOptions
	proxyArgs []string
	perFork   counts   // upstream work per fork, one after the other
	kinds     []string // the statements of the counted forks, by kind, per fork
	// The storm.
	connected  time.Duration   // opening every client
	wall       time.Duration   // first write sent until the last answer
	forksDone  int             // clients whose write succeeded
	answered   int             // clients answered (either way) within opts.answer
	wrong      int             // clients whose read did not show the table plus its row
	errs       map[string]int  // by MySQL error code (or the Go error's text)
	latencies  []time.Duration // of each client's write and read
	stormCount counts          // upstream work during the storm, per client
}

// measureStorm runs the fork-storm benchmark against e's MariaDB.
func measureStorm(ctx context.Context, o stormOptions, e env) (*stormResult, error) {
	r := &stormResult{opts: o, errs: map[string]int{}}
	q := []string{"DROP DATABASE IF EXISTS storm", "CREATE DATABASE storm",
		"CREATE TABLE storm.t (id INT PRIMARY KEY, v INT NOT NULL, note VARCHAR(40))",
		fmt.Sprintf("INSERT INTO storm.t SELECT seq, seq, CONCAT('row ', seq) FROM storm.seq_1_to_%d", o.rows)}
	if err := execDirect(ctx, e.direct, q...); err != nil {
		return nil, err
	}
	if o.side > 0 {
		r.proxyArgs = append(r.proxyArgs, fmt.Sprintf("--side-connections=%d", o.side))
	}
	if o.queue > 0 {
		r.proxyArgs = append(r.proxyArgs, "--fork-queue-timeout="+o.queue.String())
	}
	p, addr, logPath, err := startProxy(ctx, e.proxyBin, e.tmp, e.db.Addr, e.db.User, e.db.Password, "storm", "transparent", r.proxyArgs...)
	if err != nil {
		return nil, err
	}
	defer p.stop(30 * time.Second)
	if err := r.countForks(ctx, o, e, addr); err != nil {
		return nil, withExit(err, proxyProc{p, logPath})
	}
	if err := r.storm(ctx, o, e, addr); err != nil {
		return nil, withExit(err, proxyProc{p, logPath})
	}
	return r, nil
}

// stormClient is one client: its own pool of one connection, held.
type stormClient struct {
	db *sql.DB
	c  *sql.Conn
}

func (c stormClient) close() {
	if c.c != nil {
		_ = c.c.Close()
	}
	_ = c.db.Close()
}

// openClients opens n clients through addr, at most at once at a time.
func openClients(ctx context.Context, e env, addr string, n, atOnce int) ([]stormClient, error) {
	out := make([]stormClient, n)
	errs := make([]error, n)
	sem := make(chan struct{}, max(atOnce, 1))
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			db, err := openMySQL(addr, e.db.User, e.db.Password, "storm")
			if err != nil {
				errs[i] = err
				return
			}
			out[i].db = db
			out[i].c, errs[i] = db.Conn(ctx)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, c := range out {
			if c.db != nil {
				c.close()
			}
		}
		return nil, fmt.Errorf("open %d clients through the proxy: %w", n, err)
	}
	return out, nil
}

func closeClients(cs []stormClient) {
	for _, c := range cs {
		c.close()
	}
}

// writeRead is a client's work: a row written (the fork) and the table
// counted; wrong when the count is not the table's plus the client's rows.
func writeRead(ctx context.Context, c *sql.Conn, id, want int) (wrong bool, err error) {
	if _, err := c.ExecContext(ctx, fmt.Sprintf("INSERT INTO t VALUES (%d, %d, 'sandbox')", id, id)); err != nil {
		return false, err
	}
	var n int
	if err := c.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil {
		return false, err
	}
	return n != want, nil
}

// upstreamCounts reads the counters on mon: the Com_ counters' sum, Questions,
// and the general log's entries other than mon's own.
func upstreamCounts(ctx context.Context, mon *sql.Conn) (counts, error) {
	var c counts
	rows, err := mon.QueryContext(ctx, "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS "+
		"WHERE VARIABLE_NAME LIKE 'COM\\_%' OR VARIABLE_NAME = 'QUESTIONS'")
	if err != nil {
		return c, err
	}
	for rows.Next() {
		var name string
		var v float64
		if err := rows.Scan(&name, &v); err != nil {
			rows.Close()
			return c, err
		}
		switch {
		case name == "QUESTIONS":
			c.questions = v
		case name != "COM_STMT_CLOSE" && name != "COM_STMT_RESET" && name != "COM_ADMIN_COMMANDS":
			c.stmts += v
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return c, err
	}
	err = mon.QueryRowContext(ctx, "SELECT COUNT(*) FROM mysql.general_log WHERE thread_id <> CONNECTION_ID() "+
		"AND command_type NOT IN ('Connect', 'Quit')").Scan(&c.trips)
	return c, err
}

// countedRun runs each client's write and read (ids from base) one after
// the other with the general log on, and returns the upstream's counts.
func countedRun(ctx context.Context, mon *sql.Conn, cs []stormClient, base, want int) (counts, error) {
	if _, err := mon.ExecContext(ctx, "TRUNCATE mysql.general_log"); err != nil {
		return counts{}, err
	}
	before, err := upstreamCounts(ctx, mon)
	if err != nil {
		return counts{}, err
	}
	if _, err := mon.ExecContext(ctx, "SET GLOBAL general_log = 1"); err != nil {
		return counts{}, err
	}
	for i, c := range cs {
		wrong, err := writeRead(ctx, c.c, base+i, want)
		if err == nil && wrong {
			err = errors.New("the sandbox's table is not production's plus its row")
		}
		if err != nil {
			return counts{}, err
		}
	}
	if _, err := mon.ExecContext(ctx, "SET GLOBAL general_log = 0"); err != nil {
		return counts{}, err
	}
	after, err := upstreamCounts(ctx, mon)
	return after.minus(before), err
}

// countForks makes o.count forks one after the other, then has the same
// clients write and read again (no fork), and records the difference per
// fork, and the statements the forks sent by kind.
func (r *stormResult) countForks(ctx context.Context, o stormOptions, e env, addr string) error {
	cs, err := openClients(ctx, e, addr, o.count, o.connects)
	if err != nil {
		return err
	}
	defer closeClients(cs)
	mon, err := e.direct.Conn(ctx)
	if err != nil {
		return err
	}
	defer mon.Close()
	if _, err := mon.ExecContext(ctx, "SET GLOBAL log_output = 'TABLE'"); err != nil {
		return err
	}
	forks, err := countedRun(ctx, mon, cs, 1000, o.rows+1)
	if err != nil {
		return fmt.Errorf("counted forks: %w", err)
	}
	if r.kinds, err = statementKinds(ctx, mon, o.count, o.logFile); err != nil {
		return err
	}
	again, err := countedRun(ctx, mon, cs, 100000, o.rows+2)
	if err != nil {
		return fmt.Errorf("counted writes without a fork: %w", err)
	}
	r.perFork = forks.minus(again).per(o.count)
	logf("storm: per fork %.1f statements, %.1f client commands, %.1f round trips", r.perFork.stmts, r.perFork.questions, r.perFork.trips)
	return nil
}

// statementKinds lists the general log's entries (the last counted run's)
// by kind: their first words, up to a name or literal, per fork.
// With logFile, the entries are written there too.
func statementKinds(ctx context.Context, mon *sql.Conn, forks int, logFile string) ([]string, error) {
	rows, err := mon.QueryContext(ctx, "SELECT thread_id, command_type, CONVERT(argument USING utf8mb4) FROM mysql.general_log "+
		"WHERE thread_id <> CONNECTION_ID() AND command_type NOT IN ('Connect', 'Quit') ORDER BY event_time")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	by := map[string]int{}
	var log strings.Builder
	for rows.Next() {
		var thread int64
		var cmd, arg string
		if err := rows.Scan(&thread, &cmd, &arg); err != nil {
			return nil, err
		}
		by[cmd+": "+statementKind(arg)]++
		fmt.Fprintf(&log, "%d\t%s\t%s\n", thread, cmd, arg)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if logFile != "" {
		if err := os.WriteFile(logFile, []byte(log.String()), 0o644); err != nil {
			return nil, err
		}
	}
	var out []string
	for k, n := range by {
		out = append(out, fmt.Sprintf("%.1f × %s", float64(n)/float64(forks), k))
	}
	sort.Slice(out, func(i, j int) bool { return by[kindOf(out[i])] > by[kindOf(out[j])] })
	return out, nil
}

func kindOf(s string) string { _, k, _ := strings.Cut(s, " × "); return k }

// statementKind is the first words of q, up to a name, literal or
// parenthesis.
func statementKind(q string) string {
	var words []string
	for _, w := range strings.Fields(q) {
		if strings.ContainsAny(w[:1], "`'\"(@0123456789") || len(words) == 4 {
			break
		}
		w, call := strings.CutSuffix(w, "(")
		if i := strings.IndexByte(w, '('); i >= 0 {
			w, call = w[:i], true
		}
		words = append(words, strings.ToUpper(w))
		if call {
			break
		}
	}
	return strings.Join(words, " ")
}

// storm opens o.clients clients, then has each write and read at once.
func (r *stormResult) storm(ctx context.Context, o stormOptions, e env, addr string) error {
	t0 := time.Now()
	cs, err := openClients(ctx, e, addr, o.clients, o.connects)
	if err != nil {
		return err
	}
	defer closeClients(cs)
	r.connected = time.Since(t0)
	logf("storm: %d clients connected in %s", o.clients, r.connected.Round(time.Millisecond))
	mon, err := e.direct.Conn(ctx)
	if err != nil {
		return err
	}
	defer mon.Close()
	before, err := upstreamCounts(ctx, mon)
	if err != nil {
		return err
	}
	r.latencies = make([]time.Duration, len(cs))
	errs := make([]error, len(cs))
	wrong := make([]bool, len(cs))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			t := time.Now()
			wrong[i], errs[i] = writeRead(ctx, c.c, 1000+i, o.rows+1)
			r.latencies[i] = time.Since(t)
		}()
	}
	t1 := time.Now()
	close(start)
	wg.Wait()
	r.wall = time.Since(t1)
	after, err := upstreamCounts(ctx, mon)
	if err != nil {
		return err
	}
	r.stormCount = after.minus(before).per(o.clients)
	r.tally(errs, wrong)
	logf("storm: %d clients: %d forks in %s (%.1f/s), %d answered within %s, errors %v, wrong reads %d",
		o.clients, r.forksDone, r.wall.Round(time.Millisecond), r.forksPerSecond(), r.answered, o.answer, r.errs, r.wrong)
	return nil
}

// tally counts the storm's outcomes.
func (r *stormResult) tally(errs []error, wrong []bool) {
	for i, err := range errs {
		if r.latencies[i] <= r.opts.answer {
			r.answered++
		}
		var me *mysql.MySQLError
		switch {
		case err == nil:
			r.forksDone++
			if wrong[i] {
				r.wrong++
			}
		case errors.As(err, &me):
			r.errs[fmt.Sprintf("%d", me.Number)]++
		default:
			r.errs[err.Error()]++
		}
	}
}

func (r *stormResult) forksPerSecond() float64 {
	if r.wall <= 0 {
		return 0
	}
	return float64(r.forksDone) / r.wall.Seconds()
}

// stormSection is the report's part for the fork storm.
func stormSection(r *stormResult) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	o := r.opts
	p("### Many forks at once (issue 27)\n\n")
	p("- Proxy: `serve --mode=transparent %s`\n", strings.Join(r.proxyArgs, " "))
	p("- Table: storm.t, %d rows; each client `INSERT INTO t VALUES (…)` (a fork) then `SELECT COUNT(*) FROM t`\n\n", o.rows)
	p("| per fork (%d one after the other) | statements | client commands | round trips |\n|---|---|---|---|\n", o.count)
	p("| upstream, less the same write and read without a fork | %.1f | %.1f | %.1f |\n\n", r.perFork.stmts, r.perFork.questions, r.perFork.trips)
	p("| clients | connected in | answered within %s | forks done | errors | wrong reads | all answered after | forks per second | answer p50 / p95 / max | upstream statements per client |\n", o.answer)
	p("|---|---|---|---|---|---|---|---|---|---|\n")
	s := slices.Clone(r.latencies)
	slices.Sort(s)
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }
	p("| %d | %s | %d | %d | %s | %d | %s | %.1f | %s / %s / %s | %.1f |\n\n", o.clients, sec(r.connected), r.answered, r.forksDone,
		fmtErrs(r.errs), r.wrong, sec(r.wall), r.forksPerSecond(), sec(pct(s, 0.5)), sec(pct(s, 0.95)), sec(s[len(s)-1]), r.stormCount.stmts)
	p("Statements of the counted forks, per fork (general log entries, the clients' own included):\n\n")
	for _, k := range r.kinds {
		p("- %s\n", k)
	}
	return b.String()
}

func fmtErrs(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for k, n := range m {
		parts = append(parts, fmt.Sprintf("%s × %d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
