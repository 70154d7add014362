package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/lazystress"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestLazyForkStress is issue 27's stress test (integration/lazystress):
// four production writers change a table of 150,000 rows while eight
// sandboxes, through two proxies, fork it lazily at once and write to
// it while their forks fill. Every answer a sandbox gets is its model's,
// and every fork ends holding the stable rows once each as made,
// production's rows of one consistent state, and the sandbox's rows as
// its statements left them, with the DIFF they make; production holds
// none of it. Production's statement latencies are logged, not judged.
func TestLazyForkStress(t *testing.T) {
	server, _ := env(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	cfg := lazystress.Config{DB: "st27", Rows: 150000, Sandboxes: 8, Writers: 4}
	root := openDB(t, server.DSN(""))
	if err := lazystress.Setup(ctx, root, cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = root.Exec("DROP DATABASE IF EXISTS st27") })
	// A bounded fill (about 8 s alone) keeps the forks filling while the
	// sandboxes write.
	lazy := func(c *proxy.Config) {
		c.Mode, c.Sandbox.LazyForkRows, c.Sandbox.LazyForkRate = "transparent", 1, 20000
	}
	hs := []*proxyHandle{startTestProxy(t, server.Addr, server, lazy), startTestProxy(t, server.Addr, server, lazy)}
	pools := []*sql.DB{openDB(t, hs[0].dsn(cfg.DB)), openDB(t, hs[1].dsn(cfg.DB))}
	dial := func(ctx context.Context, i int) (*sql.Conn, error) { return pools[i%2].Conn(ctx) }
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	o := lazystress.Options{Warm: 2 * time.Second, Pause: 2 * time.Millisecond, After: 20, Seed: seed}
	res, err := lazystress.Run(ctx, cfg, o, root, dial)
	if err != nil {
		t.Fatal(err)
	}
	lazyForks := 0.0
	for _, h := range hs {
		lazyForks += h.metric(t, "sqlfork_forks_total", map[string]string{"strategy": "lazy", "kind": "full"})
	}
	if lazyForks != float64(cfg.Sandboxes) {
		t.Errorf("lazy forks: %v, want %d", lazyForks, cfg.Sandboxes)
	}
	filling := 0
	for i, r := range res.Sandboxes {
		t.Logf("sandbox %d: first write %s, whole after %s, %d statements (%d while filling); %d rows, DIFF %s",
			i, r.FirstWrite.Round(time.Millisecond), r.Filled.Round(time.Millisecond), r.Steps, r.Filling, r.Check.Rows, r.Check.Diff)
		filling += r.Filling
		for _, n := range r.Notes {
			t.Error(n)
		}
		if r.Mismatches > len(r.Notes) {
			t.Errorf("sandbox %d: %d mismatches in all", i, r.Mismatches)
		}
		for _, p := range r.Check.Problems() {
			t.Errorf("sandbox %d's fork: %s", i, p)
		}
	}
	for _, p := range res.Production {
		t.Error(p)
	}
	if filling == 0 {
		t.Fatal("no statement ran while a fork filled: the fills are too fast for this test")
	}
	logLatency(t, "before the forks", res.Before)
	logLatency(t, "while the forks filled", res.During)
	logLatency(t, "(SELECT 1 every 10 ms) while the forks filled", res.Probe)
	t.Logf("row lock waits while the forks filled: %d, %s in all", res.LockWaits, res.LockWaitTime)
	for _, s := range res.Slowest {
		t.Logf("slow: %s after the forks began, %s: %s", s.At.Round(time.Millisecond), s.Took.Round(time.Millisecond), s.Stmt)
	}
}

// logLatency logs production statements' latencies.
func logLatency(t *testing.T, when string, ds []time.Duration) {
	l := lazystress.Summarize(ds)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
	t.Logf("production statements %s: %d, p50 %s, p99 %s, max %s, %d over 100 ms",
		when, l.N, ms(l.P50), ms(l.P99), ms(l.Max), lazystress.Over(ds, 100*time.Millisecond))
}
