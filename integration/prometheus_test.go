package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/metrics"
)

// promQuery returns the value of a PromQL expression with one result.
func promQuery(t *testing.T, addr, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		}
	}
	if json.NewDecoder(resp.Body).Decode(&r) != nil || r.Status != "success" || len(r.Data.Result) != 1 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// TestPrometheusScrapesProxy starts Debian's prometheus scraping a
// sandbox-mode proxy while a known workload runs, and checks through the
// Prometheus HTTP API that the statement and fork counters say what the
// workload did.
func TestPrometheusScrapesProxy(t *testing.T) {
	bin := requireTool(t, "prometheus")
	_, h := sandboxProxy(t, "transparent", nil)
	mctx, mcancel := context.WithCancel(context.Background())
	defer mcancel()
	maddr, stop, err := metrics.Serve(mctx, "127.0.0.1:0", metrics.NewHandler(h.reg, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = stop(context.Background()) }()

	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: sqlfork-proxy
    static_configs: [{targets: ["%s"]}]
`, maddr)), 0o600); err != nil {
		t.Fatal(err)
	}
	paddr := freeAddr(t)
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+paddr, "--log.level=warn")
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("prometheus output:\n%s", out.String())
		}
	})
	testkit.Eventually(t, "prometheus to scrape the proxy", func() bool {
		v, ok := promQuery(t, paddr, `up{job="sqlfork-proxy"}`)
		return ok && v == 1
	})

	// The workload: 3 tables forked, 20 inserts, 10 reads, 2 refusals.
	c := conn(t, openDB(t, h.userDSN(sandboxUser+"+prom", "app")))
	for _, tbl := range []string{"app.users", "other.things"} {
		mustExecC(t, c, "UPDATE "+tbl+" SET id = id WHERE id = 0")
	}
	mustExecC(t, c, "CREATE TABLE app.prom (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
	mustExecC(t, c, "INSERT INTO app.prom (v) VALUES (0)") // first write of a created table: no fork
	for i := 0; i < 19; i++ {
		mustExecC(t, c, "INSERT INTO app.prom (v) VALUES (?)", i)
	}
	for i := 0; i < 10; i++ {
		_ = queryString(t, c, "SELECT COUNT(*) FROM app.prom")
	}
	for _, q := range []string{"DROP DATABASE mysql", "GRANT ALL ON *.* TO x"} {
		if _, err := c.ExecContext(context.Background(), q); err == nil {
			t.Fatalf("%s was not refused", q)
		}
	}

	want := map[string]float64{
		`sum(sqlfork_forks_total{kind="full"})`:                     2,
		`sum(sqlfork_statements_total{class="write",outcome="ok"})`: 22, // 2 fork-making updates + 20 inserts
		`sum(sqlfork_statements_total{class="ddl",outcome="ok"})`:   1,
		`sum(sqlfork_statements_total{outcome="refused"})`:          2,
		`sum(sqlfork_sandboxes{state="active"})`:                    1,
		`sum(sqlfork_client_connections)`:                           1,
		`count(sqlfork_build_info)`:                                 1,
		`sum(sqlfork_fork_duration_seconds_count)`:                  2,
	}
	deadline := time.Now().Add(20 * time.Second)
	for q, w := range want {
		for {
			v, ok := promQuery(t, paddr, q)
			if ok && v == w {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s = %v (found %v), want %v", q, v, ok, w)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	if v, ok := promQuery(t, paddr, `sum(sqlfork_statements_total{class="read",outcome="ok"})`); !ok || v < 10 {
		t.Errorf("read statements = %v (%v), want >= 10", v, ok)
	}
	// sysbench through the proxy: the statement counters grow by exactly
	// the queries sysbench reports.
	if sb, err := exec.LookPath("sysbench"); err == nil || os.Getenv("CI") == "true" {
		if err != nil {
			t.Fatal("sysbench is required")
		}
		root := openDB(t, h.db.DSN("")+"?multiStatements=true")
		readOnlyDatabase(t, root, "sbprom")
		sysb := sysbenchDB{bin: sb, name: "sbprom", tables: 1, rows: 500, timeout: 3 * time.Minute}
		sysb.run(t, h.db.Addr, h.db.User, h.db.Password, "prepare")
		// Reads and writes, as sysbench counts them ("read:", "write:"),
		// against the read and write classes with outcome ok: its
		// BEGIN/COMMIT are its "other", it does not count statements that
		// failed (deadlocks it retries) or its connection set-up.
		settle := func() (float64, float64) {
			var r, w float64
			testkit.Eventually(t, "prometheus to catch up", func() bool {
				r1, ok1 := promQuery(t, paddr, `sum(sqlfork_statements_total{class="read",outcome="ok"})`)
				w1, ok2 := promQuery(t, paddr, `sum(sqlfork_statements_total{class="write",outcome="ok"})`)
				time.Sleep(1500 * time.Millisecond)
				r2, ok3 := promQuery(t, paddr, `sum(sqlfork_statements_total{class="read",outcome="ok"})`)
				w2, ok4 := promQuery(t, paddr, `sum(sqlfork_statements_total{class="write",outcome="ok"})`)
				r, w = r2, w2
				return ok1 && ok2 && ok3 && ok4 && r1 == r2 && w1 == w2
			})
			return r, w
		}
		r0, w0 := settle()
		out := sysb.run(t, h.addr, sandboxUser+"+sysprom", sandboxPassword, "run",
			"--threads=2", "--time=3", "--db-ps-mode=disable", "--mysql-ignore-errors=1213")
		reads, writes := sysbenchCount(t, out, "read"), sysbenchCount(t, out, "write")
		r1, w1 := settle()
		if r1-r0 != reads || w1-w0 != writes {
			t.Errorf("during sysbench: read statements +%v, write +%v; sysbench reports %v reads, %v writes", r1-r0, w1-w0, reads, writes)
		} else {
			t.Logf("sysbench: %v reads, %v writes; the proxy's counters agree", reads, writes)
		}
	}
	if v, ok := promQuery(t, paddr, `sum(sqlfork_forked_rows_total)`); !ok || v < 3 {
		t.Errorf("sqlfork_forked_rows_total = %v (%v), want the 3 + 2 rows copied", v, ok)
	}
	if v, ok := promQuery(t, paddr, `sum(sqlfork_forked_bytes_total)`); !ok || v <= 0 {
		t.Errorf("sqlfork_forked_bytes_total = %v (%v), want > 0", v, ok)
	}
}

// sysbenchCount reads a count ("read:", "write:") from sysbench's SQL
// statistics.
func sysbenchCount(t *testing.T, out, what string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s+` + what + `:\s+(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no %q line in sysbench output:\n%s", what, out)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}
