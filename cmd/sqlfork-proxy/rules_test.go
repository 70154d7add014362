package main

import (
	"os"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/sqlfork/sqlfork-proxy/metrics"
)

// TestAlertRulesUseExportedMetrics parses the shipped Prometheus rules and
// checks that every sqlfork_ metric an expression queries is one the proxy
// exports (histograms by their _bucket/_count/_sum series).
func TestAlertRulesUseExportedMetrics(t *testing.T) {
	var doc struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	decodeFile(t, "../../deploy/prometheus/sqlfork-rules.yaml", yaml.Unmarshal, &doc)
	exported := exportedMetrics(t)
	rules := 0
	for _, g := range doc.Groups {
		for _, r := range g.Rules {
			rules++
			checkQueries(t, exported, "alert "+r.Alert, r.Expr)
		}
	}
	if rules < 5 {
		t.Fatalf("only %d rules parsed", rules)
	}
}

// metricNames finds sqlfork_ metric names in PromQL.
var metricNames = regexp.MustCompile(`\bsqlfork_[a-z_]+`)

// checkQueries fails the test on each sqlfork_ metric the PromQL expr (of
// where) queries that is not exported; it returns how many it queries.
func checkQueries(t *testing.T, exported map[string]bool, where, expr string) int {
	t.Helper()
	names := metricNames.FindAllString(expr, -1)
	for _, n := range names {
		if !exported[n] {
			t.Errorf("%s queries %s, which the proxy does not export", where, n)
		}
	}
	return len(names)
}

// exportedMetrics is the set of series names the proxy exports
// (histograms by their _bucket/_count/_sum series).
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := metrics.New(reg)
	m.SetBuildInfo("v", "r", "go")
	// Vectors appear once they have a child: touch each.
	m.ConnectionsRejected.WithLabelValues("x")
	m.Commands.WithLabelValues("x")
	m.CommandDuration.WithLabelValues("x")
	m.Forks.WithLabelValues("copy", "full")
	m.ForkFailures.WithLabelValues("copy", "error")
	m.SandboxRefusals.WithLabelValues("1")
	m.TransactionReplays.WithLabelValues("refused")
	m.SandboxesDiscarded.WithLabelValues("expired")
	m.Statements.WithLabelValues("read", "ok")
	m.StatementDuration.WithLabelValues("read")
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, mf := range mfs {
		n := mf.GetName()
		exported[n] = true
		if mf.GetType().String() == "HISTOGRAM" {
			for _, s := range []string{"_bucket", "_count", "_sum"} {
				exported[n+s] = true
			}
		}
	}
	return exported
}

// decodeFile reads the file at path into v with unmarshal (yaml's or
// json's), failing the test if it cannot.
func decodeFile(t *testing.T, path string, unmarshal func([]byte, any) error, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
