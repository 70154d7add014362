package integration

import (
	"context"
	"maps"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sysbenchStats are the counters of a sysbench run's "SQL statistics".
type sysbenchStats struct {
	transactions, queries, ignoredErrors, reconnects int64
}

var sysbenchLine = regexp.MustCompile(`(?m)^\s+(transactions|queries|ignored errors|reconnects):\s+(\d+)\s+\(`)

func parseSysbench(t *testing.T, out string) sysbenchStats {
	t.Helper()
	var s sysbenchStats
	counters := map[string]*int64{"transactions": &s.transactions, "queries": &s.queries,
		"ignored errors": &s.ignoredErrors, "reconnects": &s.reconnects}
	seen := map[string]bool{}
	for _, m := range sysbenchLine.FindAllStringSubmatch(out, -1) {
		n, err := strconv.ParseInt(m[2], 10, 64)
		if err != nil {
			t.Fatalf("sysbench %s: %v", m[1], err)
		}
		seen[m[1]] = true
		*counters[m[1]] = n
	}
	for _, k := range slices.Sorted(maps.Keys(counters)) {
		if !seen[k] {
			t.Fatalf("sysbench output has no %q line:\n%s", k, out)
		}
	}
	return s
}

// sysbenchDB is a database sysbench's oltp_read_write workload makes
// (prepare), runs on (run) and drops (cleanup).
type sysbenchDB struct {
	bin          string // the sysbench binary
	name         string // --mysql-db
	tables, rows int    // --tables, --table-size
	timeout      time.Duration
}

// run runs the workload's command cmd with extra arguments, logging in at
// addr as user, and returns sysbench's output; the test fails when
// sysbench does, or reports a failure (FATAL, ALERT).
func (s sysbenchDB) run(t *testing.T, addr, user, password, cmd string, extra ...string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"oltp_read_write", "--db-driver=mysql", "--mysql-host=" + host, "--mysql-port=" + port,
		"--mysql-user=" + user, "--mysql-password=" + password, "--mysql-db=" + s.name, "--mysql-ssl=off",
		"--tables=" + strconv.Itoa(s.tables), "--table-size=" + strconv.Itoa(s.rows)}
	args = append(append(args, extra...), cmd)
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("sysbench %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	for _, bad := range []string{"FATAL", "ALERT"} {
		if strings.Contains(string(out), bad) {
			t.Fatalf("sysbench %s reported a failure (%s):\n%s", cmd, bad, out)
		}
	}
	return string(out)
}

// TestSysbenchThroughProxy runs sysbench oltp_read_write through a proxy of
// its own, with server-side prepared statements and with the text protocol.
func TestSysbenchThroughProxy(t *testing.T) {
	db, _ := env(t)
	bin := requireTool(t, "sysbench")
	p := startTestProxy(t, db.Addr, db, nil)

	direct := openDB(t, directDSN(db, ""))
	if _, err := direct.Exec("DROP DATABASE IF EXISTS sbtest"); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Exec("CREATE DATABASE sbtest"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = direct.Exec("DROP DATABASE IF EXISTS sbtest") })

	sb := sysbenchDB{bin: bin, name: "sbtest", tables: 2, rows: 2000, timeout: 3 * time.Minute}
	metric := func(cmd string) float64 {
		return p.metric(t, "sqlfork_commands_total", map[string]string{"command": cmd})
	}

	queriesBefore := metric("query")
	sb.run(t, p.addr, db.User, db.Password, "prepare")
	// prepare creates and fills the tables with COM_QUERY.
	if d := metric("query") - queriesBefore; d < 2 {
		t.Fatalf("sqlfork_commands_total{command=\"query\"} grew by %v during prepare", d)
	}
	var rows int
	if err := direct.QueryRow("SELECT (SELECT COUNT(*) FROM sbtest.sbtest1) + (SELECT COUNT(*) FROM sbtest.sbtest2)").Scan(&rows); err != nil || rows != 4000 {
		t.Fatalf("after prepare: %d rows, %v", rows, err)
	}

	// oltp_read_write's default mix deletes, re-inserts and updates random
	// rows from 4 threads, so InnoDB deadlocks (1213) happen now and then,
	// directly as through the proxy; sysbench rolls back and retries them.
	// Only 1213 is ignorable here: any other error (lock wait timeout, lost
	// connection...) aborts sysbench and fails the test. The "no-conflict"
	// runs update one row per transaction and nothing else, which cannot
	// deadlock, so there every error counts.
	noConflict := []string{"--delete_inserts=0", "--index_updates=0", "--non_index_updates=1"}
	for _, tc := range []struct {
		name     string
		psMode   string
		protoCmd string // command that must carry the statements
		secs     int
		strict   bool // no error of any kind is acceptable
		extra    []string
	}{
		{"prepared", "auto", "stmt_execute", 8, false, nil},
		{"text", "disable", "query", 8, false, nil},
		{"prepared-no-conflict", "auto", "stmt_execute", 3, true, noConflict},
		{"text-no-conflict", "disable", "query", 3, true, noConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ignore := "--mysql-ignore-errors=1213"
			if tc.strict {
				ignore = "--mysql-ignore-errors=0" // no real error has code 0
			}
			protoBefore := metric(tc.protoCmd)
			args := append([]string{"--threads=4", "--time=" + strconv.Itoa(tc.secs), "--report-interval=0",
				"--db-ps-mode=" + tc.psMode, ignore}, tc.extra...)
			out := sb.run(t, p.addr, db.User, db.Password, "run", args...)
			s := parseSysbench(t, out)
			t.Logf("%s: %d transactions, %d queries, %d ignored errors, %d reconnects",
				tc.name, s.transactions, s.queries, s.ignoredErrors, s.reconnects)
			if s.transactions <= 0 || s.queries <= 0 {
				t.Fatalf("no work done:\n%s", out)
			}
			if s.reconnects != 0 {
				t.Fatalf("%d reconnects; want 0:\n%s", s.reconnects, out)
			}
			if tc.strict && s.ignoredErrors != 0 {
				t.Fatalf("%d errors in a workload that cannot conflict; want 0:\n%s", s.ignoredErrors, out)
			}
			if !tc.strict && s.ignoredErrors*100 > s.transactions {
				t.Fatalf("%d deadlocks in %d transactions (over 1%%):\n%s", s.ignoredErrors, s.transactions, out)
			}
			// Every transaction runs at least 15 statements, carried by
			// protoCmd: COM_QUERY with --db-ps-mode=disable, else
			// COM_STMT_EXECUTE (sysbench prepares even BEGIN and COMMIT).
			if d := metric(tc.protoCmd) - protoBefore; d < float64(s.transactions)*10 {
				t.Fatalf("sqlfork_commands_total{command=%q} grew by %v for %d transactions", tc.protoCmd, d, s.transactions)
			}
		})
	}

	// The data must still be consistent: oltp_read_write deletes and
	// re-inserts rows but keeps the count.
	if err := direct.QueryRow("SELECT (SELECT COUNT(*) FROM sbtest.sbtest1) + (SELECT COUNT(*) FROM sbtest.sbtest2)").Scan(&rows); err != nil || rows != 4000 {
		t.Fatalf("after runs: %d rows, %v", rows, err)
	}
	sb.run(t, p.addr, db.User, db.Password, "cleanup")
	var tables int
	if err := direct.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'sbtest'").Scan(&tables); err != nil || tables != 0 {
		t.Fatalf("after cleanup: %d tables left, %v", tables, err)
	}
}
