package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// cliSandboxes is one sandbox, "box", that records what is asked of it.
type cliSandboxes struct{ asked []string }

// cliCreated is when "box" was created.
func cliCreated() time.Time { return time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC) }

func (f *cliSandboxes) box(tables bool) adminapi.Sandbox {
	b := adminapi.Sandbox{ID: "1a2b3c4d", Name: "box", State: "active", Owner: "sbx", Created: cliCreated(), Connections: 1, TableCount: 1, Bytes: 16384, Changes: "unpromoted"}
	if tables {
		b.Tables = []adminapi.Table{{Table: "app.users", State: "fork", Rows: 3, Bytes: 16384}}
	}
	return b
}

func (f *cliSandboxes) List(context.Context) ([]adminapi.Sandbox, error) {
	f.asked = append(f.asked, "list")
	return []adminapi.Sandbox{f.box(false)}, nil
}

func (f *cliSandboxes) Show(_ context.Context, name string) (adminapi.Sandbox, error) {
	f.asked = append(f.asked, "show "+name)
	if name != "box" {
		return adminapi.Sandbox{}, fmt.Errorf("%w: no such sandbox: %q", adminapi.ErrNotFound, name)
	}
	return f.box(true), nil
}

func (f *cliSandboxes) Keep(_ context.Context, name string, keep *time.Duration) (adminapi.Sandbox, error) {
	ttl := 24 * time.Hour // its sandbox-ttl
	if keep != nil {
		ttl = *keep
	}
	f.asked = append(f.asked, "keep "+name+" "+ttl.String())
	b := f.box(true)
	e := cliCreated().Add(ttl)
	b.State, b.Expires = "kept", &e
	return b, nil
}

func (f *cliSandboxes) Discard(_ context.Context, name string) error {
	f.asked = append(f.asked, "discard "+name)
	return nil
}

func (f *cliSandboxes) Diff(_ context.Context, name string, o adminapi.DiffOptions) (adminapi.Diff, error) {
	f.asked = append(f.asked, fmt.Sprintf("diff %s summary=%v table=%s", name, o.Summary, o.Table))
	if name != "box" {
		return adminapi.Diff{}, fmt.Errorf("%w: no such sandbox: %q", adminapi.ErrNotFound, name)
	}
	if o.Summary {
		return adminapi.Diff{Summary: []adminapi.DiffTable{
			{Table: "app.orders", Change: "altered", KeyKind: "primary", Method: "compare", Note: "the sandbox\naltered it"},
			{Table: "app.users", Change: "forked", Inserted: 1, Updated: 12, Conflicts: 1, KeyKind: "primary", Method: "capture"},
		}}, nil
	}
	return adminapi.Diff{Changes: []adminapi.DiffChange{
		{Table: "app.orders", Op: "ddl", After: json.RawMessage(`"ALTER TABLE ` + "`app`.`orders`" + `\n  ADD COLUMN ` + "`note`" + ` text"`)},
		{Table: "app.users", Op: "conflict", Key: json.RawMessage(`{"id": 1}`), Before: json.RawMessage(`{"id": 1, "score": 5}`),
			After: json.RawMessage(`{"id": 1, "score": 0}`), Production: json.RawMessage(`{"id": 1, "score": 7}`)},
		{Table: "app.users", Op: "insert", Key: json.RawMessage(`{"id": 4}`), After: json.RawMessage(`{"id": 4, "score": 1}`)},
	}}, nil
}

// cliExport is the export of "box".
const cliExport = "SET NAMES utf8mb4;\n-- app.t has no key\nINSERT INTO `app`.`users` (`id`, `score`) VALUES (4, 1);\n"

func (f *cliSandboxes) Export(_ context.Context, name string) (string, error) {
	f.asked = append(f.asked, "export "+name)
	return cliExport, nil
}

// Promote promotes with ours or theirs; with fail, it has conflicts. A dry
// run answers cliPlan. What it is asked is recorded with the options.
func (f *cliSandboxes) Promote(_ context.Context, name string, o adminapi.PromoteOptions) (adminapi.Promoted, error) {
	f.asked = append(f.asked, "promote "+name+" "+o.Strategy+promoteAsked(o))
	switch {
	case o.DryRun:
		return cliPlan(name, o), nil
	case o.Strategy == adminapi.StrategyFail:
		return adminapi.Promoted{}, fmt.Errorf("%w: PROMOTE refused: 1 rows changed in production since the fork", adminapi.ErrConflict)
	}
	return adminapi.Promoted{Sandbox: name, Strategy: o.Strategy, Outcome: "committed", Rows: 13,
		Info: "promoted sandbox " + name + ": 1 rows inserted, 12 updated, 0 deleted in 1 tables"}, nil
}

// TestSandboxCLI: `sqlfork-proxy sandbox …` against the real admin API
// handler: what each command asks, prints and exits with.
func TestSandboxCLI(t *testing.T) {
	tests := []cliCase{
		{"list", []string{"list"}, nil, 0, "list",
			"NAME  ID        STATE   OWNER  CREATED               EXPIRES  CONNECTIONS  TABLES  SIZE    CHANGES\n" +
				"box   1a2b3c4d  active  sbx    2026-11-24T10:00:00Z  -        1            1       16 KiB  unpromoted\n", false, ""},
		{"list json", []string{"list", "-o", "json"}, nil, 0, "list",
			"[\n  {\n    \"id\": \"1a2b3c4d\",\n    \"name\": \"box\",\n    \"state\": \"active\",\n    \"owner\": \"sbx\",\n" +
				"    \"created\": \"2026-11-24T10:00:00Z\",\n    \"connections\": 1,\n    \"table_count\": 1,\n    \"bytes\": 16384,\n    \"changes\": \"unpromoted\"\n  }\n]\n", false, ""},
		{"show", []string{"show", "box"}, nil, 0, "show box",
			"name:         box\nid:           1a2b3c4d\nstate:        active\nowner:        sbx\ncreated:      2026-11-24T10:00:00Z\n" +
				"expires:      -\nconnections:  1\nchanges:      unpromoted\npromoted:     -\n\nTABLE      STATE  ROWS  SIZE\napp.users  fork   3     16 KiB\n", false, ""},
		{"show missing", []string{"show", "nosuch"}, nil, 1, "show nosuch", "", false,
			`sqlfork-proxy: admin API: not found: no such sandbox: "nosuch" (HTTP 404)`},
		{"keep in days", []string{"keep", "box", "--ttl", "2d"}, nil, 0, "keep box 48h0m0s",
			"sandbox box kept until 2026-11-26T10:00:00Z\n", false, ""},
		{"keep in seconds", []string{"keep", "box", "--ttl", "90"}, nil, 0, "keep box 1m30s",
			"sandbox box kept until 2026-11-24T10:01:30Z\n", false, ""},
		{"keep without ttl: sandbox-ttl", []string{"keep", "box"}, nil, 0, "keep box 24h0m0s",
			"sandbox box kept until 2026-11-25T10:00:00Z\n", false, ""},
		{"keep json", []string{"keep", "box", "--ttl", "1h", "-o", "json"}, nil, 0, "keep box 1h0m0s",
			`  "expires": "2026-11-24T11:00:00Z",`, true, ""},
		{"keep bad ttl", []string{"keep", "box", "--ttl", "2 days"}, nil, 1, "", "", false,
			`sqlfork-proxy: --ttl: bad duration "2 days": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`},
		{"discard", []string{"discard", "box"}, nil, 0, "discard box", "sandbox box discarded\n", false, ""},
		{"discard json", []string{"discard", "box", "-o", "json"}, nil, 0, "discard box", "{\n  \"discarded\": \"box\"\n}\n", false, ""},
		{"no token", []string{"list"}, map[string]string{"SQLFORK_ADMIN_TOKEN": ""}, 1, "", "", false,
			"sqlfork-proxy: admin API: missing or wrong bearer token (HTTP 401)"},
		{"token flag", []string{"list", "--admin-token", "s3cret"}, map[string]string{"SQLFORK_ADMIN_TOKEN": ""}, 0, "list", "box", true, ""},
		{"bad output", []string{"list", "-o", "yaml"}, nil, 2, "", "", false, `sqlfork-proxy: --output: "yaml" is not table or json`},
		// diff, export and promote.
		{"diff summary", []string{"diff", "box", "--summary"}, nil, 0, "diff box summary=true table=",
			"TABLE       CHANGE   INSERTED  UPDATED  DELETED  CONFLICTS  KEY      METHOD   NOTE\n" +
				"app.orders  altered  0         0        0        0          primary  compare  the sandbox altered it\n" +
				"app.users   forked   1         12       0        1          primary  capture  -\n", false, ""},
		{"diff summary json", []string{"diff", "box", "--summary", "-o", "json"}, nil, 0, "diff box summary=true table=",
			"  {\n    \"table_name\": \"app.users\",\n    \"change\": \"forked\",\n    \"rows_inserted\": 1,\n    \"rows_updated\": 12,\n", true, ""},
		{"diff", []string{"diff", "box"}, nil, 0, "diff box summary=false table=",
			"TABLE       OP        KEY       CHANGES                                            PRODUCTION\n" +
				"app.orders  ddl       -         ALTER TABLE `app`.`orders` ADD COLUMN `note` text  -\n" +
				"app.users   conflict  {\"id\":1}  score: 5 → 0                                       {\"id\":1,\"score\":7}\n" +
				"app.users   insert    {\"id\":4}  {\"id\":4,\"score\":1}                                 -\n", false, ""},
		{"diff json", []string{"diff", "box", "-o", "json"}, nil, 0, "diff box summary=false table=",
			"    \"op\": \"insert\",\n    \"key\": {\n      \"id\": 4\n    },\n    \"before\": null,\n", true, ""},
		{"diff of one table", []string{"diff", "box", "--table", "app.users", "--summary"}, nil, 0, "diff box summary=true table=app.users",
			"app.users", true, ""},
		{"diff of a table without its database", []string{"diff", "box", "--table", "users"}, nil, 2, "", "", false,
			`sqlfork-proxy: --table: "users" is not db.table`},
		{"diff missing", []string{"diff", "nosuch"}, nil, 1, "diff nosuch summary=false table=", "", false,
			`sqlfork-proxy: admin API: not found: no such sandbox: "nosuch" (HTTP 404)`},
		{"diff without a name", []string{"diff"}, nil, 2, "", "", false, "accepts 1 arg(s), received 0"},
		{"export", []string{"export", "box"}, nil, 0, "export box", cliExport, false, ""},
		{"export json", []string{"export", "box", "-o", "json"}, nil, 2, "", "", false, "sqlfork-proxy: --output json: export writes SQL text"},
		{"promote: fail by default", []string{"promote", "box"}, nil, 1, "promote box fail", "", false,
			"sqlfork-proxy: admin API: conflict: PROMOTE refused: 1 rows changed in production since the fork (HTTP 409)"},
		{"promote ours", []string{"promote", "box", "--strategy", "ours"}, nil, 0, "promote box ours",
			"sandbox:   box\nstrategy:  ours\noutcome:   committed\nrows:      13\n" +
				"info:      promoted sandbox box: 1 rows inserted, 12 updated, 0 deleted in 1 tables\n", false, ""},
		{"promote THEIRS json", []string{"promote", "box", "--strategy", "THEIRS", "-o", "json"}, nil, 0, "promote box theirs",
			"{\n  \"sandbox\": \"box\",\n  \"strategy\": \"theirs\",\n  \"outcome\": \"committed\",\n" +
				"  \"info\": \"promoted sandbox box: 1 rows inserted, 12 updated, 0 deleted in 1 tables\",\n  \"rows\": 13\n}\n", false, ""},
		{"promote by an unknown strategy", []string{"promote", "box", "--strategy", "mine"}, nil, 2, "", "", false,
			`sqlfork-proxy: --strategy: "mine" is not fail, ours or theirs`},
		{"promote without the token", []string{"promote", "box", "--strategy", "ours"}, map[string]string{"SQLFORK_ADMIN_TOKEN": ""}, 1, "", "", false,
			"sqlfork-proxy: admin API: missing or wrong bearer token (HTTP 401)"},
	}
	for _, tc := range tests {
		tc.run(t)
	}
}

// cliCase is one `sqlfork-proxy sandbox …` command line, run against the
// real admin API handler over cliSandboxes, and what it must do.
type cliCase struct {
	name       string
	args       []string
	env        map[string]string
	wantCode   int
	wantAsked  string
	wantStdout string // the whole of it, unless wantPart
	wantPart   bool
	wantStderr string // substring
}

// run runs the command line and checks its exit code, what it asked, and
// its output, which never holds what a terminal acts on (ESC, CSI, a
// bidirectional override).
func (tc cliCase) run(t *testing.T) {
	t.Run(tc.name, func(t *testing.T) {
		f := &cliSandboxes{}
		srv := httptest.NewServer(adminapi.NewHandler(adminapi.Options{Sandboxes: f, Token: "s3cret", Proxy: cliProxy}))
		defer srv.Close()
		env := map[string]string{"SQLFORK_ADMIN_URL": srv.URL, "SQLFORK_ADMIN_TOKEN": "s3cret"}
		for k, v := range tc.env {
			env[k] = v
		}
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"sandbox"}, tc.args...), testEnv(env, &stdout, &stderr))
		if code != tc.wantCode {
			t.Errorf("exit code %d, want %d; stderr: %s", code, tc.wantCode, stderr.String())
		}
		if got := strings.Join(f.asked, "; "); got != tc.wantAsked {
			t.Errorf("asked %q, want %q", got, tc.wantAsked)
		}
		if out := stdout.String(); tc.wantPart && !strings.Contains(out, tc.wantStdout) || !tc.wantPart && out != tc.wantStdout {
			t.Errorf("stdout:\n%s\nwant:\n%s", out, tc.wantStdout)
		}
		if !strings.Contains(stderr.String(), tc.wantStderr) || tc.wantStderr == "" && stderr.Len() != 0 {
			t.Errorf("stderr %q, want %q", stderr.String(), tc.wantStderr)
		}
		if out := stdout.String() + stderr.String(); strings.ContainsAny(out, "\x1b\u009b\u202e") {
			t.Errorf("output holds what a terminal acts on: %q", out)
		}
	})
}

// TestMetricsListenerMux: the metrics listener serves metrics and health
// always, and the admin API with its token, or tokenless on loopback only.
func TestMetricsListenerMux(t *testing.T) {
	type req struct {
		method, path, auth string
		want               int
	}
	tests := []struct {
		name      string
		listen    string
		token     string
		tokenless bool // admin-tokenless-changes
		reqs      []req
		disabled  bool // the admin API is off, and a warning says so
	}{
		{"loopback without token", "127.0.0.1:9104", "", false, []req{
			{"GET", "/healthz", "", 200}, {"GET", "/metrics", "", 200},
			{"GET", "/api/v1/sandboxes", "", 200}, {"POST", "/api/v1/sandboxes/box/keep?ttl=1h", "", 403},
			{"GET", "/api/v1/sandboxes/box/diff?summary=1", "", 403}, {"GET", "/api/v1/sandboxes/box/export", "", 403},
			{"POST", "/api/v1/sandboxes/box/promote?strategy=ours", "", 403},
			{"GET", "/ui/", "", 200}, {"GET", "/ui/sandboxes/box", "", 200}, {"GET", "/ui/proxy", "", 200},
			{"GET", "/ui/sandboxes/box/export", "", 403},
		}, false},
		{"loopback with tokenless changes", "127.0.0.1:9104", "", true, []req{
			{"POST", "/api/v1/sandboxes/box/keep?ttl=1h", "", 200}, {"POST", "/api/v1/sandboxes/box/promote?strategy=ours", "", 403},
			{"GET", "/api/v1/sandboxes/box/diff?summary=1", "", 200}, {"GET", "/api/v1/sandboxes/box/export", "", 200},
		}, false},
		{"localhost without token", "localhost:9104", "", false, []req{{"GET", "/api/v1/sandboxes/box", "", 200}}, false},
		{"beyond loopback without token", "0.0.0.0:9104", "", false, []req{
			{"GET", "/healthz", "", 200}, {"GET", "/api/v1/sandboxes", "", 404}, {"DELETE", "/api/v1/sandboxes/box", "", 404},
			{"GET", "/api/v1/sandboxes/box/export", "", 404}, {"POST", "/api/v1/sandboxes/box/promote", "", 404},
			{"GET", "/ui/", "", 404}, {"GET", "/ui/sandboxes/box", "", 404},
		}, true},
		{"beyond loopback with token", ":9104", "s3cret", false, []req{
			{"GET", "/healthz", "", 200}, {"GET", "/api/v1/sandboxes", "", 401},
			{"GET", "/api/v1/sandboxes", "Bearer s3cret", 200}, {"DELETE", "/api/v1/sandboxes/box", "Bearer s3cret", 200},
			{"GET", "/api/v1/sandboxes/box/diff", "", 401}, {"GET", "/api/v1/sandboxes/box/diff", "Bearer s3cret", 200},
			{"POST", "/api/v1/sandboxes/box/promote?strategy=ours", "", 401},
			{"POST", "/api/v1/sandboxes/box/promote?strategy=ours", "Bearer s3cret", 200},
			{"GET", "/ui/", "", 303}, {"GET", "/ui/login", "", 200}, {"GET", "/ui/", "Bearer s3cret", 200},
			{"GET", "/ui/sandboxes/box", "Bearer wrong", 401},
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := defaultSettings()
			s.MetricsListen, s.AdminToken, s.AdminTokenlessChanges = tc.listen, tc.token, tc.tokenless
			core, logs := observer.New(zap.WarnLevel)
			mux, _, err := metricsListenerMux(s, prometheus.NewRegistry(), nil, &cliSandboxes{}, nil, zap.New(core))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.reqs {
				q := httptest.NewRequest(r.method, r.path, nil)
				q.Host = tc.listen // a tokenless listener answers loopback names only (adminGuard)
				if r.auth != "" {
					q.Header.Set("Authorization", r.auth)
				}
				rec := httptest.NewRecorder()
				mux.ServeHTTP(rec, q)
				if rec.Code != r.want {
					t.Errorf("%s %s: HTTP %d, want %d", r.method, r.path, rec.Code, r.want)
				}
			}
			warned := logs.FilterMessageSnippet("admin API disabled").Len() == 1
			if warned != tc.disabled {
				t.Errorf("warned that the admin API is disabled: %v, want %v", warned, tc.disabled)
			}
			rec := httptest.NewRecorder()
			mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			if rec.Code != http.StatusNotFound {
				t.Errorf("GET /: HTTP %d, want 404", rec.Code)
			}
		})
	}
}

// Reset resets "box" (every table: app.users); what it is asked is
// recorded with the tables.
func (f *cliSandboxes) Reset(_ context.Context, name string, tables []string) (adminapi.ResetResult, error) {
	f.asked = append(f.asked, "reset "+name+" "+strings.Join(tables, ","))
	if name != "box" {
		return adminapi.ResetResult{}, fmt.Errorf("%w: no sandbox named %q", adminapi.ErrNotFound, name)
	}
	linked := []string(nil)
	if len(tables) == 0 {
		tables = []string{"app.users"}
	} else {
		linked = []string{"app.orders"}
	}
	return adminapi.ResetResult{Sandbox: name, Tables: tables, Linked: linked, Info: "sandbox box reset"}, nil
}
