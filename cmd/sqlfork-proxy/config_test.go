package main

import (
	"errors"
	"io/fs"
	"math"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// resolveFor runs resolveSettings as `serve args...` would, with env as the
// whole environment and files as the whole file system.
func resolveFor(t *testing.T, args []string, env, files map[string]string) (settings, error) {
	t.Helper()
	fset := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addFlags(fset)
	if err := fset.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	read := func(p string) ([]byte, error) {
		if data, ok := files[p]; ok {
			return []byte(data), nil
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return resolveSettings(fset, lookup, read)
}

func TestDefaults(t *testing.T) {
	got, err := resolveFor(t, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := settings{Proxy: proxy.DefaultConfig(), MetricsListen: "127.0.0.1:9104", LogFormat: "console", LogLevel: "info", DiffCapture: true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", got, want)
	}
	// The documented defaults, as the brief states them.
	p := got.Proxy
	if p.Listen != "127.0.0.1:3307" || p.Upstream != "127.0.0.1:3306" || p.UpstreamUser != "root" ||
		p.UpstreamTLS != "disabled" || p.ConnectTimeout != 10*time.Second || p.HandshakeTimeout != 10*time.Second ||
		p.IdleTimeout != 8*time.Hour || p.ShutdownGrace != 30*time.Second || p.MaxConnections != 0 {
		t.Errorf("unexpected proxy defaults %+v", p)
	}
}

func TestPrecedence(t *testing.T) {
	const cfg = "/etc/sqlfork.yaml"
	file := map[string]string{cfg: `
listen: 127.0.0.1:1001
idle_timeout: 1h
tls_required: false
max_connections: 10
upstream_password: from-file
metrics_listen: 127.0.0.1:9001
log_level: warn
`}
	get := map[string]func(settings) any{
		"listen":            func(s settings) any { return s.Proxy.Listen },
		"idle-timeout":      func(s settings) any { return s.Proxy.IdleTimeout },
		"max-connections":   func(s settings) any { return s.Proxy.MaxConnections },
		"upstream-password": func(s settings) any { return s.Proxy.UpstreamPassword },
		"metrics-listen":    func(s settings) any { return s.MetricsListen },
		"log-level":         func(s settings) any { return s.LogLevel },
		"upstream":          func(s settings) any { return s.Proxy.Upstream },
		"tls-required":      func(s settings) any { return s.Proxy.TLSRequired },
	}
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		files map[string]string
		key   string
		want  any
	}{
		{"listen default", nil, nil, nil, "listen", "127.0.0.1:3307"},
		{"listen file", []string{"--config", cfg}, nil, file, "listen", "127.0.0.1:1001"},
		{"listen env over file", []string{"--config", cfg}, map[string]string{"SQLFORK_LISTEN": "127.0.0.1:2002"}, file, "listen", "127.0.0.1:2002"},
		{"listen flag over env", []string{"--config", cfg, "--listen", "127.0.0.1:3003"}, map[string]string{"SQLFORK_LISTEN": "127.0.0.1:2002"}, file, "listen", "127.0.0.1:3003"},
		{"listen flag equals form", []string{"--listen=127.0.0.1:3004"}, nil, nil, "listen", "127.0.0.1:3004"},

		{"idle default", nil, nil, nil, "idle-timeout", 8 * time.Hour},
		{"idle file", []string{"--config", cfg}, nil, file, "idle-timeout", time.Hour},
		{"idle env over file", []string{"--config", cfg}, map[string]string{"SQLFORK_IDLE_TIMEOUT": "90s"}, file, "idle-timeout", 90 * time.Second},
		{"idle flag over env", []string{"--config", cfg, "--idle-timeout", "5m"}, map[string]string{"SQLFORK_IDLE_TIMEOUT": "90s"}, file, "idle-timeout", 5 * time.Minute},

		{"max-conn file", []string{"--config", cfg}, nil, file, "max-connections", 10},
		{"max-conn env", []string{"--config", cfg}, map[string]string{"SQLFORK_MAX_CONNECTIONS": "20"}, file, "max-connections", 20},
		{"max-conn flag", []string{"--max-connections", "30"}, map[string]string{"SQLFORK_MAX_CONNECTIONS": "20"}, nil, "max-connections", 30},

		{"password file", []string{"--config", cfg}, nil, file, "upstream-password", "from-file"},
		{"password env", []string{"--config", cfg}, map[string]string{"SQLFORK_UPSTREAM_PASSWORD": "from-env"}, file, "upstream-password", "from-env"},
		{"password empty env beats file", []string{"--config", cfg}, map[string]string{"SQLFORK_UPSTREAM_PASSWORD": ""}, file, "upstream-password", ""},
		{"password flag", []string{"--upstream-password", "from-flag"}, map[string]string{"SQLFORK_UPSTREAM_PASSWORD": "from-env"}, nil, "upstream-password", "from-flag"},

		{"metrics file", []string{"--config", cfg}, nil, file, "metrics-listen", "127.0.0.1:9001"},
		{"metrics disabled by env", []string{"--config", cfg}, map[string]string{"SQLFORK_METRICS_LISTEN": ""}, file, "metrics-listen", ""},
		{"metrics disabled by flag", []string{"--metrics-listen="}, nil, nil, "metrics-listen", ""},

		{"log-level file", []string{"--config", cfg}, nil, file, "log-level", "warn"},
		{"log-level flag", []string{"--config", cfg, "--log-level", "debug"}, nil, file, "log-level", "debug"},

		{"unset in file keeps default", []string{"--config", cfg}, nil, file, "upstream", "127.0.0.1:3306"},

		{"bool flag without value", []string{"--tls-required", "--tls-cert", "c.pem", "--tls-key", "k.pem"}, nil, nil, "tls-required", true},
		{"bool flag false over env", []string{"--tls-required=false"}, map[string]string{"SQLFORK_TLS_REQUIRED": "true"}, nil, "tls-required", false},
		{"bool env", nil, map[string]string{"SQLFORK_TLS_REQUIRED": "1", "SQLFORK_TLS_CERT": "c", "SQLFORK_TLS_KEY": "k"}, nil, "tls-required", true},

		{"config from env", nil, map[string]string{"SQLFORK_CONFIG": cfg}, file, "listen", "127.0.0.1:1001"},
		{"config flag over env", []string{"--config", "/other.yaml"}, map[string]string{"SQLFORK_CONFIG": cfg},
			map[string]string{cfg: "listen: 127.0.0.1:1\n", "/other.yaml": "listen: 127.0.0.1:2\n"}, "listen", "127.0.0.1:2"},
		{"empty config env means no file", nil, map[string]string{"SQLFORK_CONFIG": ""}, nil, "listen", "127.0.0.1:3307"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resolveFor(t, tc.args, tc.env, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := get[tc.key](s); got != tc.want {
				t.Errorf("%s = %v, want %v", tc.key, got, tc.want)
			}
		})
	}
}

// TestNaming checks the environment variable and YAML key of every flag
// against the names spelled out by hand.
func TestNaming(t *testing.T) {
	want := map[string][2]string{ // flag: {env, yaml key}
		"listen":                  {"SQLFORK_LISTEN", "listen"},
		"upstream":                {"SQLFORK_UPSTREAM", "upstream"},
		"upstream-user":           {"SQLFORK_UPSTREAM_USER", "upstream_user"},
		"upstream-password":       {"SQLFORK_UPSTREAM_PASSWORD", "upstream_password"},
		"promote-user":            {"SQLFORK_PROMOTE_USER", "promote_user"},
		"promote-password":        {"SQLFORK_PROMOTE_PASSWORD", "promote_password"},
		"diff-capture":            {"SQLFORK_DIFF_CAPTURE", "diff_capture"},
		"auth-plugin":             {"SQLFORK_AUTH_PLUGIN", "auth_plugin"},
		"metrics-listen":          {"SQLFORK_METRICS_LISTEN", "metrics_listen"},
		"tls-cert":                {"SQLFORK_TLS_CERT", "tls_cert"},
		"tls-key":                 {"SQLFORK_TLS_KEY", "tls_key"},
		"tls-required":            {"SQLFORK_TLS_REQUIRED", "tls_required"},
		"upstream-tls":            {"SQLFORK_UPSTREAM_TLS", "upstream_tls"},
		"upstream-tls-ca":         {"SQLFORK_UPSTREAM_TLS_CA", "upstream_tls_ca"},
		"connect-timeout":         {"SQLFORK_CONNECT_TIMEOUT", "connect_timeout"},
		"handshake-timeout":       {"SQLFORK_HANDSHAKE_TIMEOUT", "handshake_timeout"},
		"idle-timeout":            {"SQLFORK_IDLE_TIMEOUT", "idle_timeout"},
		"write-timeout":           {"SQLFORK_WRITE_TIMEOUT", "write_timeout"},
		"shutdown-grace":          {"SQLFORK_SHUTDOWN_GRACE", "shutdown_grace"},
		"max-connections":         {"SQLFORK_MAX_CONNECTIONS", "max_connections"},
		"mode":                    {"SQLFORK_MODE", "mode"},
		"production-writes":       {"SQLFORK_PRODUCTION_WRITES", "production_writes"},
		"user-separator":          {"SQLFORK_USER_SEPARATOR", "user_separator"},
		"forker":                  {"SQLFORK_FORKER", "forker"},
		"sandbox-prefix":          {"SQLFORK_SANDBOX_PREFIX", "sandbox_prefix"},
		"sandbox-ttl":             {"SQLFORK_SANDBOX_TTL", "sandbox_ttl"},
		"sandbox-idle-ttl":        {"SQLFORK_SANDBOX_IDLE_TTL", "sandbox_idle_ttl"},
		"sandbox-grace":           {"SQLFORK_SANDBOX_GRACE", "sandbox_grace"},
		"sandbox-reap-interval":   {"SQLFORK_SANDBOX_REAP_INTERVAL", "sandbox_reap_interval"},
		"sandbox-sync-lease":      {"SQLFORK_SANDBOX_SYNC_LEASE", "sandbox_sync_lease"},
		"max-sandboxes":           {"SQLFORK_MAX_SANDBOXES", "max_sandboxes"},
		"max-sandbox-ttl":         {"SQLFORK_MAX_SANDBOX_TTL", "max_sandbox_ttl"},
		"max-fork-bytes":          {"SQLFORK_MAX_FORK_BYTES", "max_fork_bytes"},
		"max-sandboxes-per-user":  {"SQLFORK_MAX_SANDBOXES_PER_USER", "max_sandboxes_per_user"},
		"deny-statements":         {"SQLFORK_DENY_STATEMENTS", "deny_statements"},
		"deny-multi-statements":   {"SQLFORK_DENY_MULTI_STATEMENTS", "deny_multi_statements"},
		"statement-timeout":       {"SQLFORK_STATEMENT_TIMEOUT", "statement_timeout"},
		"max-rows":                {"SQLFORK_MAX_ROWS", "max_rows"},
		"side-connections":        {"SQLFORK_SIDE_CONNECTIONS", "side_connections"},
		"fork-queue-timeout":      {"SQLFORK_FORK_QUEUE_TIMEOUT", "fork_queue_timeout"},
		"lazy-fork-rows":          {"SQLFORK_LAZY_FORK_ROWS", "lazy_fork_rows"},
		"lazy-fork-rate":          {"SQLFORK_LAZY_FORK_RATE", "lazy_fork_rate"},
		"lazy-fork-rate-for":      {"SQLFORK_LAZY_FORK_RATE_FOR", "lazy_fork_rate_for"},
		"sandbox-admins":          {"SQLFORK_SANDBOX_ADMINS", "sandbox_admins"},
		"admin-token":             {"SQLFORK_ADMIN_TOKEN", "admin_token"},
		"admin-tokenless-changes": {"SQLFORK_ADMIN_TOKENLESS_CHANGES", "admin_tokenless_changes"},
		"memory-limit":            {"SQLFORK_MEMORY_LIMIT", "memory_limit"},
		"log-format":              {"SQLFORK_LOG_FORMAT", "log_format"},
		"log-level":               {"SQLFORK_LOG_LEVEL", "log_level"},
	}
	got := map[string][2]string{}
	for _, st := range settingTable() {
		got[st.name] = [2]string{st.envVar(), st.fileKey()}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("settings:\n got %v\nwant %v", got, want)
	}
	if e := envName(configFlag); e != "SQLFORK_CONFIG" {
		t.Errorf("config env = %s", e)
	}

	// And resolveSettings really consults exactly those variables.
	fset := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addFlags(fset)
	var asked []string
	lookup := func(k string) (string, bool) { asked = append(asked, k); return "", false }
	if _, err := resolveSettings(fset, lookup, nil); err != nil {
		t.Fatal(err)
	}
	wantAsked := []string{"SQLFORK_CONFIG"}
	for _, w := range want {
		wantAsked = append(wantAsked, w[0])
	}
	slices.Sort(asked)
	slices.Sort(wantAsked)
	if !slices.Equal(asked, wantAsked) {
		t.Errorf("looked up %v, want %v", asked, wantAsked)
	}
}

func TestEveryConfigFieldHasASetting(t *testing.T) {
	// Each proxy.Config field must be reachable from a setting (Users: the file).
	def := defaultSettings()
	covered := map[uintptr]bool{}
	for _, st := range settingTable() {
		covered[reflect.ValueOf(st.field(&def)).Pointer()] = true
	}
	check := func(prefix string, v reflect.Value, skip ...string) {
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if slices.Contains(skip, name) {
				continue
			}
			if !covered[v.Field(i).Addr().Pointer()] {
				t.Errorf("%s.%s has no flag/env/file setting", prefix, name)
			}
		}
	}
	// Sandbox is a struct of settings; Lease and ForkTimeout are internal,
	// UserGuardrails come from Users, NoDiffCapture from diff-capture.
	check("proxy.Config", reflect.ValueOf(&def.Proxy).Elem(), "Users", "Sandbox")
	check("proxy.Config.Sandbox", reflect.ValueOf(&def.Proxy.Sandbox).Elem(), "Lease", "ForkTimeout", "Guardrails", "UserGuardrails", "NoDiffCapture")
	check("proxy.Config.Sandbox.Guardrails", reflect.ValueOf(&def.Proxy.Sandbox.Guardrails).Elem())
}

func TestUsersFromFile(t *testing.T) {
	const cfg = "/c.yaml"
	tests := []struct {
		name string
		yaml string
		want []proxy.User
	}{
		{"two users", `
users:
  - name: app
    password: "0123"
    auth_plugin: caching_sha2_password
    upstream_user: app_rw
    upstream_password: 4567
  - name: ro
    password: ro-pw
`, []proxy.User{
			{Name: "app", Password: "0123", AuthPlugin: "caching_sha2_password", UpstreamUser: "app_rw", UpstreamPassword: "4567"},
			{Name: "ro", Password: "ro-pw"},
		}},
		{"guardrails", `
users:
  - name: agent
    deny_statements: ddl, routine
    deny_multi_statements: true
    statement_timeout: 1500ms
    max_rows: 100
    max_fork_bytes: 1048576
    max_sandboxes: 2
  - name: open
    deny_statements: ""
    statement_timeout: 0s
`, []proxy.User{
			{Name: "agent", DenyStatements: ptr("ddl, routine"), DenyMultiStatements: ptr(true), StatementTimeout: ptr(1500 * time.Millisecond),
				MaxRows: ptr[int64](100), MaxForkBytes: ptr[int64](1 << 20), MaxSandboxes: ptr(2)},
			{Name: "open", DenyStatements: ptr(""), StatementTimeout: ptr(time.Duration(0))},
		}},
		{"numbers kept as written", "users:\n  - {name: n, password: 007, upstream_password: 1.50}\n",
			[]proxy.User{{Name: "n", Password: "007", UpstreamPassword: "1.50"}}},
		{"empty list", "users: []\n", []proxy.User{}},
		{"null", "users:\n", nil},
		{"no users key", "listen: 127.0.0.1:1\n", nil},
		{"empty file", "", nil},
		{"comments only", "# nothing\n", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resolveFor(t, []string{"--config", cfg}, nil, map[string]string{cfg: tc.yaml})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Proxy.Users) != len(tc.want) || (len(tc.want) > 0 && !reflect.DeepEqual(s.Proxy.Users, tc.want)) {
				t.Errorf("users:\n got %+v\nwant %+v", s.Proxy.Users, tc.want)
			}
		})
	}
}

func TestUserKeysMatchProxyUser(t *testing.T) {
	want := []string{"name", "password", "auth_plugin", "upstream_user", "upstream_password", "mode",
		"deny_statements", "deny_multi_statements", "statement_timeout", "max_rows", "max_fork_bytes", "max_sandboxes"}
	if got := userKeys(); !slices.Equal(got, want) {
		t.Errorf("userKeys() = %v, want %v", got, want)
	}
}

func TestErrors(t *testing.T) {
	const cfg = "/c.yaml"
	f := func(y string) map[string]string { return map[string]string{cfg: y} }
	withCfg := []string{"--config", cfg}
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		files map[string]string
		want  string // the whole error message
	}{
		// Unparseable values, by source.
		{"duration flag", []string{"--idle-timeout", "x"}, nil, nil, `idle-timeout: bad duration "x": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`},
		{"duration env", nil, map[string]string{"SQLFORK_CONNECT_TIMEOUT": "10 seconds"}, nil,
			`connect-timeout: bad duration "10 seconds": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds (from SQLFORK_CONNECT_TIMEOUT)`},
		{"duration file", withCfg, nil, f("listen: 127.0.0.1:1\nshutdown_grace: soon\n"),
			`shutdown-grace: bad duration "soon": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds (from /c.yaml:2, key shutdown_grace)`},
		{"duration null in file", withCfg, nil, f("idle_timeout:\n"),
			`idle-timeout: bad duration "": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds (from /c.yaml:1, key idle_timeout)`},
		{"duration in days and hours", []string{"--sandbox-ttl", "1d12h"}, nil, nil, `sandbox-ttl: bad duration "1d12h": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`},
		{"bool flag", []string{"--tls-required=maybe"}, nil, nil, `tls-required: "maybe" is not a boolean (true or false)`},
		{"bool env", nil, map[string]string{"SQLFORK_TLS_REQUIRED": "yes"}, nil,
			`tls-required: "yes" is not a boolean (true or false) (from SQLFORK_TLS_REQUIRED)`},
		{"bool file", withCfg, nil, f("tls_required: on\n"),
			`tls-required: "on" is not a boolean (true or false) (from /c.yaml:1, key tls_required)`},
		{"int flag", []string{"--max-connections", "lots"}, nil, nil, `max-connections: "lots" is not an integer`},
		{"bytes flag", []string{"--memory-limit", "1GB"}, nil, nil,
			`memory-limit: "1GB" is not a size in bytes (an integer with an optional unit B, KiB, MiB, GiB or TiB, e.g. 512MiB)`},
		{"bytes env", nil, map[string]string{"SQLFORK_MEMORY_LIMIT": "-1"}, nil,
			`memory-limit: "-1" is not a size in bytes (an integer with an optional unit B, KiB, MiB, GiB or TiB, e.g. 512MiB) (from SQLFORK_MEMORY_LIMIT)`},
		{"side connections", []string{"--side-connections", "0"}, nil, nil, `side-connections: must be at least 1, got 0`},
		{"fork queue timeout", []string{"--fork-queue-timeout", "0s"}, nil, nil, `fork-queue-timeout: must be positive, got 0s`},
		{"fork queue timeout past the fork timeout", []string{"--fork-queue-timeout", "31m"}, nil, nil,
			`sandbox: fork-queue-timeout 31m0s must be between 0 (the default 2m0s) and the fork timeout 30m0s`},
		{"int env", nil, map[string]string{"SQLFORK_MAX_CONNECTIONS": "1.5"}, nil,
			`max-connections: "1.5" is not an integer (from SQLFORK_MAX_CONNECTIONS)`},

		// Values this command checks.
		{"log level", []string{"--log-level", "trace"}, nil, nil, `log-level: "trace" is not one of debug, info, warn, error`},
		{"log level env", nil, map[string]string{"SQLFORK_LOG_LEVEL": "INFO"}, nil, `log-level: "INFO" is not one of debug, info, warn, error`},
		{"log format", []string{"--log-format", "text"}, nil, nil, `log-format: "text" is not one of console, json`},
		{"metrics listen", []string{"--metrics-listen", "9104"}, nil, nil,
			`metrics-listen: "9104" is not host:port (or empty to disable): address 9104: missing port in address`},
		{"metrics port", []string{"--metrics-listen", "127.0.0.1:http-metrics"}, nil, nil,
			`metrics-listen: "127.0.0.1:http-metrics" has a bad port: `},

		// Values proxy.Config.Validate rejects.
		{"listen env", nil, map[string]string{"SQLFORK_LISTEN": "bad"}, nil, `listen: "bad" is not host:port: address bad: missing port in address`},
		{"upstream", []string{"--upstream", "db"}, nil, nil, `upstream: "db" is not host:port: `},
		{"upstream user", []string{"--upstream-user="}, nil, nil, "upstream-user: must not be empty"},
		{"auth plugin", []string{"--auth-plugin", "sha256_password"}, nil, nil, `auth-plugin: "sha256_password" is not mysql_native_password or caching_sha2_password`},
		{"tls pair", []string{"--tls-cert", "c.pem"}, nil, nil, "tls-cert/tls-key: both must be set, or neither"},
		{"tls required", []string{"--tls-required"}, nil, nil, "tls-required: needs tls-cert and tls-key"},
		{"upstream tls", []string{"--upstream-tls", "on"}, nil, nil, `upstream-tls: "on" is not one of `},
		{"upstream tls ca", []string{"--upstream-tls-ca", "ca.pem"}, nil, nil, "upstream-tls-ca: only used with upstream-tls verify-ca or verify-identity"},
		{"zero timeout", []string{"--handshake-timeout", "0s"}, nil, nil, "handshake-timeout: must be positive, got 0s"},
		{"negative timeout file", withCfg, nil, f("idle_timeout: -1s\n"),
			`idle-timeout: bad duration "-1s": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds (from /c.yaml:1, key idle_timeout)`},
		{"negative max", []string{"--max-connections=-1"}, nil, nil, "max-connections: must be >= 0, got -1"},
		{"user without name", withCfg, nil, f("users:\n  - password: x\n"), "users[0].name: must not be empty"},
		{"user shadows upstream", withCfg, nil, f("users:\n  - name: root\n"), `users[0].name: "root" is declared twice (or shadows upstream-user)`},
		{"user plugin", withCfg, nil, f("users:\n  - name: a\n    auth_plugin: pam\n"), `users[0].auth_plugin: "pam" is not `},

		// The config file itself.
		{"missing file", withCfg, nil, nil, "config: open /c.yaml: file does not exist"},
		{"missing file from env", nil, map[string]string{"SQLFORK_CONFIG": "/x.yaml"}, nil, "config: open /x.yaml: file does not exist"},
		{"unknown key", withCfg, nil, f("listen: 127.0.0.1:1\nlisten_addr: x\n"), `config: /c.yaml:2: unknown key "listen_addr"`},
		{"flag spelling in file", withCfg, nil, f("idle-timeout: 1h\n"), `config: /c.yaml:1: unknown key "idle-timeout" (did you mean "idle_timeout"?)`},
		{"config key in file", withCfg, nil, f("config: other.yaml\n"), `config: /c.yaml:1: unknown key "config"`},
		{"unknown user key", withCfg, nil, f("users:\n  - name: a\n    pasword: x\n"),
			`config: /c.yaml:3: users[0]: unknown key "pasword" (want name, password, auth_plugin, upstream_user, upstream_password, mode, ` +
				`deny_statements, deny_multi_statements, statement_timeout, max_rows, max_fork_bytes, max_sandboxes)`},
		{"bad user guardrail", withCfg, nil, f("users:\n  - name: a\n    deny_statements: ddl,sandbox\n"),
			`users[0] (a): deny-statements: "sandbox" is not a statement class (want some of read, write, ddl, transaction, session, routine, other)`},
		{"bad user timeout", withCfg, nil, f("users:\n  - name: a\n    statement_timeout: soon\n"),
			`config: /c.yaml:3: users[0].statement_timeout: bad duration "soon": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`},
		{"negative user timeout", withCfg, nil, f("users:\n  - name: a\n    statement_timeout: -5s\n"),
			`config: /c.yaml:3: users[0].statement_timeout: bad duration "-5s": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds`},
		{"bad user max_rows", withCfg, nil, f("users:\n  - name: a\n    max_rows: lots\n"),
			`config: /c.yaml:2: users[0]: line 3: cannot unmarshal !!str ` + "`lots`" + ` into int64`},
		{"bad deny class", []string{"--deny-statements", "write,drop"}, nil, nil,
			`deny-statements: "drop" is not a statement class (want some of read, write, ddl, transaction, session, routine, other)`},
		{"repeated key", withCfg, nil, f("listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n"), `config: /c.yaml:2: key "listen" repeats line 1`},
		{"repeated user key", withCfg, nil, f("users:\n  - name: a\n    name: b\n"), `config: /c.yaml:3: users[0]: key "name" repeats line 2`},
		{"not a mapping", withCfg, nil, f("- listen\n"), "config: /c.yaml:1: the top level must be a mapping of key: value"},
		{"list value", withCfg, nil, f("listen: [a, b]\n"), "config: /c.yaml:1: listen: must be a single value"},
		{"users not a list", withCfg, nil, f("users: {name: a}\n"), "config: /c.yaml:1: users: must be a list of users"},
		{"user not a mapping", withCfg, nil, f("users:\n  - a\n"), "config: /c.yaml:2: users[0]: must be a mapping with keys "},
		{"user value not scalar", withCfg, nil, f("users:\n  - name: [a]\n"), "config: /c.yaml:2: users[0].name: must be a single value"},
		{"yaml syntax", withCfg, nil, f("listen: [\n"), "config: /c.yaml: yaml: line 1: did not find expected node content"},

		// Precedence also decides which bad value is seen: only the winner is parsed.
		{"bad file value overridden is ignored, bad env is not", withCfg, map[string]string{"SQLFORK_IDLE_TIMEOUT": "x"}, f("idle_timeout: y\n"),
			`idle-timeout: bad duration "x": use forms like 500ms, 90s, 30m, 2h, 1h30m, 7d or a number of seconds (from SQLFORK_IDLE_TIMEOUT)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := resolveFor(t, tc.args, tc.env, tc.files)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tc.want) {
				t.Errorf("error:\n got %s\nwant %s", msg, tc.want)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
		})
	}
}

func TestOverriddenBadValuesAreIgnored(t *testing.T) {
	s, err := resolveFor(t, []string{"--config", "/c.yaml", "--idle-timeout", "2h"},
		map[string]string{"SQLFORK_IDLE_TIMEOUT": "x"}, map[string]string{"/c.yaml": "idle_timeout: y\n"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Proxy.IdleTimeout != 2*time.Hour {
		t.Errorf("idle-timeout = %s", s.Proxy.IdleTimeout)
	}
}

func TestErrorsWrap(t *testing.T) {
	_, err := resolveFor(t, []string{"--config", "/missing.yaml"}, nil, nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v does not wrap fs.ErrNotExist", err)
	}
	_, err = resolveFor(t, []string{"--idle-timeout", "x"}, nil, nil)
	if err == nil || errors.Unwrap(err) == nil {
		t.Errorf("%v does not wrap the parse error", err)
	}
}

func TestFlagDefaultsInHelp(t *testing.T) {
	fset := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	addFlags(fset)
	want := map[string]string{
		"listen": "127.0.0.1:3307", "upstream": "127.0.0.1:3306", "upstream-user": "root",
		"auth-plugin": "mysql_native_password", "metrics-listen": "127.0.0.1:9104",
		"tls-required": "false", "upstream-tls": "disabled", "connect-timeout": "10s",
		"handshake-timeout": "10s", "idle-timeout": "8h", "shutdown-grace": "30s",
		"max-connections": "0", "log-format": "console", "log-level": "info", "upstream-password": "",
	}
	for name, def := range want {
		f := fset.Lookup(name)
		if f == nil {
			t.Errorf("no flag --%s", name)
			continue
		}
		if f.DefValue != def {
			t.Errorf("--%s default %q, want %q", name, f.DefValue, def)
		}
	}
}

// TestDurationSyntax: every duration setting, from a flag, a SQLFORK_*
// variable, the YAML file or a user's statement_timeout, reads the one
// syntax of SANDBOX KEEP TTL and the admin API (duration.Parse): Go forms
// as before, whole days and plain seconds too.
func TestDurationSyntax(t *testing.T) {
	const cfg = "/c.yaml"
	withCfg := []string{"--config", cfg}
	f := func(y string) map[string]string { return map[string]string{cfg: y} }
	tests := []struct {
		name  string
		args  []string
		env   map[string]string
		files map[string]string
		get   func(settings) time.Duration
		want  time.Duration
	}{
		{"days flag", []string{"--sandbox-ttl", "7d"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.DefaultTTL }, 7 * 24 * time.Hour},
		{"days env", nil, map[string]string{"SQLFORK_SANDBOX_IDLE_TTL": "14d"}, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.IdleTTL }, 14 * 24 * time.Hour},
		{"days file", withCfg, nil, f("max_sandbox_ttl: 30d\n"),
			func(s settings) time.Duration { return s.Proxy.Sandbox.MaxTTL }, 30 * 24 * time.Hour},
		{"seconds flag", []string{"--fork-queue-timeout", "90"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.ForkQueueTimeout }, 90 * time.Second},
		{"seconds env", nil, map[string]string{"SQLFORK_CONNECT_TIMEOUT": "10"}, nil,
			func(s settings) time.Duration { return s.Proxy.ConnectTimeout }, 10 * time.Second},
		{"seconds file (a YAML integer)", withCfg, nil, f("shutdown_grace: 45\n"),
			func(s settings) time.Duration { return s.Proxy.ShutdownGrace }, 45 * time.Second},
		{"spaces around", nil, map[string]string{"SQLFORK_IDLE_TIMEOUT": " 2h "}, nil,
			func(s settings) time.Duration { return s.Proxy.IdleTimeout }, 2 * time.Hour},
		{"milliseconds", []string{"--write-timeout", "500ms"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.WriteTimeout }, 500 * time.Millisecond},
		{"minutes", []string{"--fork-queue-timeout", "2m"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.ForkQueueTimeout }, 2 * time.Minute},
		{"hours", []string{"--sandbox-ttl", "24h"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.DefaultTTL }, 24 * time.Hour},
		{"hours and minutes", withCfg, nil, f("handshake_timeout: 1h30m\n"),
			func(s settings) time.Duration { return s.Proxy.HandshakeTimeout }, 90 * time.Minute},
		{"zero seconds", []string{"--statement-timeout", "0s"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.Guardrails.StatementTimeout }, 0},
		{"zero", []string{"--sandbox-idle-ttl", "0"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.IdleTTL }, 0},
		{"grace in minutes", []string{"--sandbox-grace", "10m"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.Grace }, 10 * time.Minute},
		{"grace off", nil, map[string]string{"SQLFORK_SANDBOX_GRACE": "0"}, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.Grace }, 0},
		{"grace by default", nil, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.Grace }, 5 * time.Minute},
		{"reap interval", []string{"--sandbox-reap-interval", "30"}, nil, nil,
			func(s settings) time.Duration { return s.Proxy.Sandbox.ReapInterval }, 30 * time.Second},
		{"user statement_timeout in seconds", withCfg, nil, f("users:\n  - name: a\n    statement_timeout: 5\n"),
			func(s settings) time.Duration { return *s.Proxy.Users[0].StatementTimeout }, 5 * time.Second},
		{"user statement_timeout in days", withCfg, nil, f("users:\n  - name: a\n    statement_timeout: 1d\n"),
			func(s settings) time.Duration { return *s.Proxy.Users[0].StatementTimeout }, 24 * time.Hour},
		{"user statement_timeout in Go form", withCfg, nil, f("users:\n  - name: a\n    statement_timeout: 1m30s\n"),
			func(s settings) time.Duration { return *s.Proxy.Users[0].StatementTimeout }, 90 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := resolveFor(t, tc.args, tc.env, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.get(s); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}

	// A user's timeout left out or null stays unset (the global one applies).
	for _, y := range []string{"users:\n  - name: a\n", "users:\n  - name: a\n    statement_timeout:\n"} {
		s, err := resolveFor(t, withCfg, nil, f(y))
		if err != nil {
			t.Fatal(err)
		}
		if s.Proxy.Users[0].StatementTimeout != nil {
			t.Errorf("%q: statement_timeout = %s, want unset", y, *s.Proxy.Users[0].StatementTimeout)
		}
	}
}

// TestEveryDurationSettingReadsTheOneSyntax: no duration setting has a
// parser of its own.
func TestEveryDurationSettingReadsTheOneSyntax(t *testing.T) {
	forms := map[string]time.Duration{"7d": 7 * 24 * time.Hour, "90": 90 * time.Second, "1h30m": 90 * time.Minute, "500ms": 500 * time.Millisecond, "0": 0}
	n := 0
	for _, st := range settingTable() {
		s := defaultSettings()
		p, ok := st.field(&s).(*time.Duration)
		if !ok {
			continue
		}
		n++
		for text, want := range forms {
			if err := parseValue(p, text); err != nil || *p != want {
				t.Errorf("--%s %s: got %s, %v; want %s", st.name, text, *p, err, want)
			}
		}
		if err := parseValue(p, "-1s"); err == nil {
			t.Errorf("--%s -1s: accepted", st.name)
		}
	}
	if n < 11 {
		t.Errorf("only %d duration settings found", n)
	}
	if got := userDurationKeys(); !reflect.DeepEqual(got, map[string]bool{"statement_timeout": true}) {
		t.Errorf("userDurationKeys() = %v", got)
	}
}

// TestValidateRejectsNegativeDurations: the parser refuses a negative
// duration first; proxy.Config.Validate still does for settings made
// otherwise.
func TestValidateRejectsNegativeDurations(t *testing.T) {
	s := defaultSettings()
	s.Proxy.IdleTimeout = -time.Second
	if err := s.validate(); err == nil || err.Error() != "idle-timeout: must be positive, got -1s" {
		t.Errorf("validate: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestByteSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want byteSize
		out  string
	}{
		{"0", 0, "0"}, {"1", 1, "1B"}, {"1000", 1000, "1000B"}, {"512MiB", 512 << 20, "512MiB"}, {" 2 GiB ", 2 << 30, "2GiB"},
		{"1536KiB", 1536 << 10, "1536KiB"}, {"1TiB", 1 << 40, "1TiB"}, {"7B", 7, "7B"},
	} {
		got, err := parseByteSize(tt.in)
		if err != nil || got != tt.want || got.String() != tt.out {
			t.Errorf("parseByteSize(%q) = %d (%s), %v; want %d (%s)", tt.in, got, got, err, tt.want, tt.out)
		}
		if back, err := parseByteSize(got.String()); err != nil || back != got {
			t.Errorf("%s does not read back: %d, %v", got, back, err)
		}
	}
	for _, bad := range []string{"", "MiB", "1.5GiB", "1GB", "-5", "9999999TiB", "12 apples"} {
		if n, err := parseByteSize(bad); err == nil {
			t.Errorf("parseByteSize(%q) = %d, want an error", bad, n)
		}
	}
}

// memory-limit sets the runtime's soft limit; 0 puts back the one in force
// before (GOMEMLIMIT's, or none).
func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(before)
	applyMemoryLimit(256<<20, before, zap.NewNop())
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Errorf("limit %d after memory-limit 256MiB", got)
	}
	applyMemoryLimit(0, 123<<20, zap.NewNop()) // as if GOMEMLIMIT=123MiB
	if got := debug.SetMemoryLimit(-1); got != 123<<20 {
		t.Errorf("limit %d after memory-limit 0 with GOMEMLIMIT 123MiB", got)
	}
	applyMemoryLimit(0, math.MaxInt64, zap.NewNop())
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("limit %d after memory-limit 0 without GOMEMLIMIT", got)
	}
}

// TestShadowedSettings: the settings the config file sets but a flag or
// an environment variable overrides are listed (a reload warns of them).
func TestShadowedSettings(t *testing.T) {
	const cfg = "/etc/sqlfork.yaml"
	files := map[string]string{cfg: "lazy_fork_rate: 5\nlog_level: warn\nmax_connections: 10\n"}
	s, err := resolveFor(t, []string{"--config", cfg, "--lazy-fork-rate", "7"}, map[string]string{"SQLFORK_LOG_LEVEL": "debug"}, files)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Shadowed, []string{"log-level", "lazy-fork-rate"}) && !slices.Equal(s.Shadowed, []string{"lazy-fork-rate", "log-level"}) {
		t.Errorf("shadowed %q, want lazy-fork-rate and log-level", s.Shadowed)
	}
	if s.Proxy.Sandbox.LazyForkRate != 7 || s.LogLevel != "debug" || s.Proxy.MaxConnections != 10 {
		t.Errorf("settings: rate %d, level %s, max connections %d", s.Proxy.Sandbox.LazyForkRate, s.LogLevel, s.Proxy.MaxConnections)
	}
	if s, _ := resolveFor(t, []string{"--config", cfg}, nil, files); len(s.Shadowed) != 0 {
		t.Errorf("shadowed %q with no flag or environment variable", s.Shadowed)
	}
}
