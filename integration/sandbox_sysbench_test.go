package integration

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestSandboxSysbench runs sysbench oltp_read_write through a transparent
// proxy whose upstream account may only SELECT production: all threads
// share one sandbox (user-name tag), the tables are forked on first write,
// production checksums stay the same, and the sandbox sees its changes.
func TestSandboxSysbench(t *testing.T) {
	bin := requireTool(t, "sysbench")
	db, h := sandboxProxy(t, "transparent", nil)
	root := openDB(t, db.DSN(""))
	readOnlyDatabase(t, root, "sbsand")
	sb := sysbenchDB{bin: bin, name: "sbsand", tables: 2, rows: 2000, timeout: 3 * time.Minute}
	sb.run(t, db.Addr, db.User, db.Password, "prepare")
	before := checksum(t, db, "sbsand.sbtest1") + checksum(t, db, "sbsand.sbtest2")

	// Transparent mode's default: each connection in a sandbox of its own,
	// forked on its first write, inside sysbench's transactions (which are
	// restarted past the fork) — no error of any kind is acceptable.
	for _, ps := range []string{"disable", "auto"} {
		t.Run("per-connection-"+ps, func(t *testing.T) {
			out := sb.run(t, h.addr, sandboxUser, sandboxPassword, "run",
				"--threads=4", "--time=3", "--report-interval=0", "--db-ps-mode="+ps, "--mysql-ignore-errors=0")
			s := parseSysbench(t, out)
			t.Logf("per-connection sandboxes, ps-mode %s: %d transactions, %d queries, %d errors", ps, s.transactions, s.queries, s.ignoredErrors)
			if s.transactions == 0 || s.ignoredErrors != 0 {
				t.Errorf("transactions %d, errors %d", s.transactions, s.ignoredErrors)
			}
		})
	}
	forksBefore := h.srv.Sandboxes().Forks()
	// A connection holds the sandbox for the whole test (an unkept sandbox
	// goes with its last connection), and forks both tables up front, so
	// the runs below share a warm sandbox (TestSandboxSysbenchSharedFromFresh
	// starts from a fresh one).
	holder := conn(t, openDB(t, h.userDSN(sandboxUser+"+sysbench", "sbsand")))
	mustExecC(t, holder, "UPDATE sbtest1 SET k = k WHERE id = 0")
	mustExecC(t, holder, "UPDATE sbtest2 SET k = k WHERE id = 0")
	noConflict := []string{"--delete_inserts=0", "--index_updates=0", "--non_index_updates=1"}
	for _, tc := range []struct {
		name, ps string
		strict   bool
		extra    []string
	}{
		{"prepared", "auto", false, nil},
		{"text", "disable", false, nil},
		{"prepared-no-conflict", "auto", true, noConflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ignore := "--mysql-ignore-errors=1213" // deadlocks happen directly too; sysbench retries them
			if tc.strict {
				ignore = "--mysql-ignore-errors=0"
			}
			out := sb.run(t, h.addr, sandboxUser+"+sysbench", sandboxPassword, "run",
				append([]string{"--threads=4", "--time=4", "--report-interval=0", "--db-ps-mode=" + tc.ps, ignore}, tc.extra...)...)
			s := parseSysbench(t, out)
			t.Logf("%s: %d transactions, %d queries, %d ignored errors", tc.name, s.transactions, s.queries, s.ignoredErrors)
			if s.transactions == 0 {
				t.Fatalf("no transactions:\n%s", out)
			}
			if tc.strict && s.ignoredErrors != 0 {
				t.Errorf("%d errors in a run that cannot conflict", s.ignoredErrors)
			}
		})
	}
	if after := checksum(t, db, "sbsand.sbtest1") + checksum(t, db, "sbsand.sbtest2"); after != before {
		t.Errorf("production checksums changed: %s -> %s", before, after)
	}
	if n := h.srv.Sandboxes().Forks() - forksBefore; n != 2 {
		t.Errorf("%d forks, want 2 (one per table, shared by every thread and run)", n)
	}
	// The sandbox sees its own changes: the sum of k differs from production.
	prod := queryString(t, root, "SELECT SUM(k) + SUM(LENGTH(c)) FROM sbsand.sbtest1")
	mine := queryString(t, holder, "SELECT SUM(k) + SUM(LENGTH(c)) FROM sbtest1")
	if prod == mine {
		t.Errorf("the sandbox reads production's data (%s): its writes are not visible", prod)
	}
}

// TestSandboxSysbenchSharedFromFresh runs sysbench oltp_read_write with 16
// threads through one named sandbox from a fresh start, with the text
// protocol and with server-side prepared statements: every table is forked
// by the first transaction that writes it (or prepares a write of it)
// while the other threads' transactions are open. Every error is counted
// (--mysql-ignore-errors=all, sysbench retries the transaction) and none
// is acceptable but a deadlock (1213), which a direct connection gets now
// and then with these settings too. SQLFORK_TEST_SYSBENCH_SECONDS sets
// each run's length (default 5).
func TestSandboxSysbenchSharedFromFresh(t *testing.T) {
	bin := requireTool(t, "sysbench")
	db, h := sandboxProxy(t, "transparent", nil)
	root := openDB(t, db.DSN(""))
	readOnlyDatabase(t, root, "sbfresh")
	seconds := "5"
	if s := os.Getenv("SQLFORK_TEST_SYSBENCH_SECONDS"); s != "" {
		seconds = s
	}
	sb := sysbenchDB{bin: bin, name: "sbfresh", tables: 4, rows: 10000, timeout: 10 * time.Minute}
	sb.run(t, db.Addr, db.User, db.Password, "prepare")
	before := checksum(t, db, "sbfresh.sbtest1") + checksum(t, db, "sbfresh.sbtest3")
	for _, ps := range []string{"disable", "auto"} {
		t.Run(ps, func(t *testing.T) {
			forks := h.srv.Sandboxes().Forks()
			out := sb.run(t, h.addr, sandboxUser+"+fresh-"+ps, sandboxPassword, "run", "--threads=16", "--time="+seconds,
				"--report-interval=0", "--db-ps-mode="+ps, "--mysql-ignore-errors=all", "--verbosity=5")
			s := parseSysbench(t, out)
			codes := sysbenchErrors(out)
			t.Logf("ps-mode %s: %d transactions, %d queries, errors by code %v, %d forks, restarts %v", ps, s.transactions,
				s.queries, codes, h.srv.Sandboxes().Forks()-forks, restarts(t, h))
			delete(codes, "1213")
			if s.transactions == 0 || len(codes) > 0 {
				t.Errorf("transactions %d, errors other than deadlocks: %v", s.transactions, codes)
			}
			if n := h.srv.Sandboxes().Forks() - forks; n != 4 {
				t.Errorf("%d forks, want 4 (one per table)", n)
			}
		})
	}
	if after := checksum(t, db, "sbfresh.sbtest1") + checksum(t, db, "sbfresh.sbtest3"); after != before {
		t.Errorf("production checksums changed: %s -> %s", before, after)
	}
}

// sysbenchErrors counts the errors a sysbench run at --verbosity=5 ignored,
// by code.
func sysbenchErrors(out string) map[string]int {
	codes := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		if _, rest, ok := strings.Cut(l, "Ignoring error "); ok {
			code, _, _ := strings.Cut(rest, " ")
			codes[code]++
		}
	}
	return codes
}

// restarts are the proxy's transaction restarts past forks so far, by
// outcome.
func restarts(t *testing.T, h *proxyHandle) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, o := range []string{"restarted", "replayed", "refused"} {
		out[o] = h.metric(t, "sqlfork_sandbox_transaction_restarts_total", map[string]string{"outcome": o})
	}
	return out
}
