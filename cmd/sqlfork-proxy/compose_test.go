package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// TestDeployFilesParse parses every YAML file under deploy/ (all documents).
func TestDeployFilesParse(t *testing.T) {
	n := 0
	err := filepath.WalkDir("../../deploy", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		dec := yaml.NewDecoder(f)
		for {
			var v any
			if err := dec.Decode(&v); err != nil {
				if err.Error() == "EOF" {
					break
				}
				t.Errorf("%s: %v", path, err)
				break
			}
		}
		n++
		return nil
	})
	if err != nil || n < 6 {
		t.Fatalf("walked %d YAML files: %v", n, err)
	}
}

// composeFile is what the tests read of deploy/docker-compose.yaml.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
	} `yaml:"services"`
}

// TestComposeStack checks deploy/docker-compose.yaml: the proxy's command
// resolves through the real settings code, with a promote account and an
// admin token; production's port and the admin listener (the admin API and
// the console) are published on loopback; and every metric the Grafana
// dashboard queries is one the proxy exports.
func TestComposeStack(t *testing.T) {
	var doc composeFile
	decodeFile(t, "../../deploy/docker-compose.yaml", yaml.Unmarshal, &doc)
	for _, want := range []string{"mariadb", "sqlfork-proxy", "prometheus", "grafana"} {
		if _, ok := doc.Services[want]; !ok {
			t.Errorf("compose has no %s service", want)
		}
	}
	px := doc.Services["sqlfork-proxy"]
	if len(px.Command) == 0 || px.Command[0] != "serve" {
		t.Fatalf("proxy command %v", px.Command)
	}
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addFlags(fs)
	if err := fs.Parse(px.Command[1:]); err != nil {
		t.Fatal(err)
	}
	env := func(k string) (string, bool) { v, ok := px.Environment[k]; return v, ok }
	s, err := resolveSettings(fs, env, os.ReadFile)
	if err != nil {
		t.Fatalf("compose proxy settings: %v", err)
	}
	if s.AdminToken == "" || s.Proxy.UpstreamUser != "app" {
		t.Errorf("compose proxy: admin token %q, upstream user %q", s.AdminToken, s.Proxy.UpstreamUser)
	}
	if s.Proxy.PromoteUser == "" || s.Proxy.PromotePassword == "" {
		t.Errorf("compose proxy: no promote account (user %q)", s.Proxy.PromoteUser)
	}
	if px.Image != "sqlfork-proxy:dev" {
		t.Errorf("compose proxy image %q, not make image's sqlfork-proxy:dev", px.Image)
	}
	for svc, want := range map[string]string{"mariadb": "127.0.0.1:3306:3306", "sqlfork-proxy": "127.0.0.1:9104:9104"} {
		if !slices.Contains(doc.Services[svc].Ports, want) {
			t.Errorf("compose %s publishes %v, not %s", svc, doc.Services[svc].Ports, want)
		}
	}

	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	decodeFile(t, "../../deploy/compose/grafana/dashboards/sqlfork-proxy.json", json.Unmarshal, &dash)
	exported := exportedMetrics(t)
	used := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			used += checkQueries(t, exported, fmt.Sprintf("dashboard panel %q", p.Title), tg.Expr)
		}
	}
	if used < 10 {
		t.Errorf("the dashboard queries only %d metrics", used)
	}
}
