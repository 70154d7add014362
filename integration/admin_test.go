package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAdminCLI: `sqlfork-proxy sandbox list|show|keep|discard` against a
// running proxy's admin API shows what SANDBOX LIST shows, and discard
// drops the sandbox's forks; with --admin-token set, requests without it
// are refused. The proxy's duration settings take days and plain seconds.
func TestAdminCLI(t *testing.T) {
	db, _ := env(t)
	leastPrivilegeUser(t, db)
	metricsAddr := freeAddr(t)
	p := startProxyProcess(t, db, "--mode", "explicit", "--metrics-listen", metricsAddr, "--admin-token", "s3cret",
		"--sandbox-ttl", "7d", "--fork-queue-timeout", "90")
	c := conn(t, openDB(t, "sbx:"+sandboxPassword+"@tcp("+p.addr+")/app"))
	mustExecC(t, c, "SANDBOX CREATE opsbox TTL 2h")
	mustExecC(t, c, "UPDATE users SET score = 0 WHERE id = 1")
	sqlList := strings.Join(column(t, c, "SANDBOX LIST"), ",")

	cli := func(args ...string) (string, error) {
		cmd := exec.Command(proxyBinary(t), append([]string{"sandbox", "--admin-url", "http://" + metricsAddr}, args...)...)
		cmd.Env = append(cmd.Environ(), "SQLFORK_ADMIN_TOKEN=s3cret")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := cli("list")
	if err != nil || !strings.Contains(out, "opsbox") || !strings.Contains(out, "kept") {
		t.Fatalf("sandbox list: %v\n%s", err, out)
	}
	out, err = cli("list", "-o", "json")
	var listed []struct{ ID, Name, State string }
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil {
		t.Fatalf("sandbox list -o json: %v\n%s", err, out)
	}
	var ids []string
	for _, s := range listed {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, ",") != sqlList {
		t.Errorf("CLI lists %v, SANDBOX LIST shows %v", ids, sqlList)
	}
	out, err = cli("show", "opsbox")
	if err != nil || !strings.Contains(out, "app.users") || !strings.Contains(out, "fork") {
		t.Errorf("sandbox show: %v\n%s", err, out)
	}
	// The wire format: a sandbox has exactly these keys (expires: it has a
	// TTL; tables: show answers with them).
	req, err := http.NewRequest(http.MethodGet, "http://"+metricsAddr+"/api/v1/sandboxes/opsbox", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var shown map[string]json.RawMessage
	err = json.NewDecoder(resp.Body).Decode(&shown)
	resp.Body.Close()
	var keys []string
	for k := range shown {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if err != nil || resp.StatusCode != http.StatusOK ||
		strings.Join(keys, ",") != "bytes,connections,created,expires,id,name,owner,state,table_count,tables" {
		t.Errorf("GET /api/v1/sandboxes/opsbox: HTTP %d, %v, keys %v", resp.StatusCode, err, keys)
	}
	// The TTL is read as SANDBOX KEEP TTL reads it: days too.
	out, err = cli("keep", "opsbox", "--ttl", "2d")
	if err != nil || !strings.Contains(out, "kept until "+time.Now().Add(48*time.Hour).UTC().Format("2006-01-02")) {
		t.Errorf("sandbox keep --ttl 2d: %v\n%s", err, out)
	}
	// Without --ttl: the proxy's sandbox-ttl (7d here), as SANDBOX KEEP
	// without TTL.
	out, err = cli("keep", "opsbox")
	if err != nil || !strings.Contains(out, "kept until "+time.Now().Add(7*24*time.Hour).UTC().Format("2006-01-02")) {
		t.Errorf("sandbox keep without --ttl: %v\n%s", err, out)
	}
	if out, err = cli("keep", "opsbox", "--ttl", "2 days"); err == nil || !strings.Contains(out, "bad duration") {
		t.Errorf("sandbox keep --ttl '2 days': %v\n%s", err, out)
	}
	if out, err = cli("show", "nosuch"); err == nil || !strings.Contains(out, "HTTP 404") {
		t.Errorf("show of a missing sandbox: %v\n%s", err, out)
	}
	root := openDB(t, db.DSN(""))
	if len(sandboxSchemas(t, root)) == 0 {
		t.Fatal("no sandbox schemas before discard")
	}
	if out, err = cli("discard", "opsbox"); err != nil || !strings.Contains(out, "discarded") {
		t.Fatalf("sandbox discard: %v\n%s", err, out)
	}
	if s := sandboxSchemas(t, root); len(s) != 0 {
		t.Errorf("schemas left after discard: %v", s)
	}
	if got := column(t, c, "SANDBOX LIST"); len(got) != 0 {
		t.Errorf("SANDBOX LIST after discard: %v", got)
	}
	// The token is required.
	resp, err = http.Get("http://" + metricsAddr + "/api/v1/sandboxes")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("admin API without the token: HTTP %d, want 401", resp.StatusCode)
	}
}

// TestSIGHUPReload: SIGHUP re-reads the config file, applies the log level
// and sandbox limits at once, reports the rest as needing a restart, and
// drops no connection.
func TestSIGHUPReload(t *testing.T) {
	db, _ := env(t)
	leastPrivilegeUser(t, db)
	cfg := filepath.Join(t.TempDir(), "sqlfork.yaml")
	write := func(level string, maxSandboxes int, idle string) {
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("log_format: json\nlog_level: %s\nmax_sandboxes: %d\nidle_timeout: %s\n",
			level, maxSandboxes, idle)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("info", 0, "8h")
	p := startProxyProcess(t, db, "--mode", "transparent", "--config", cfg)
	c := conn(t, openDB(t, "sbx:"+sandboxPassword+"@tcp("+p.addr+")/app"))
	mustExecC(t, c, "UPDATE users SET score = 12 WHERE id = 1")

	write("debug", 5, "9h")
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the reload to be logged", func() bool { return strings.Contains(p.logs.String(), "SIGHUP: settings reloaded") })
	logs := p.logs.String()
	if !strings.Contains(logs, `"applied":["max-sandboxes","log-level"]`) && !strings.Contains(logs, `"applied":["log-level","max-sandboxes"]`) {
		t.Errorf("reload did not apply log-level and max-sandboxes:\n%s", logs)
	}
	if !strings.Contains(logs, `"settings":["idle-timeout"]`) {
		t.Errorf("idle-timeout not reported as needing a restart:\n%s", logs)
	}
	// The connection survived, in its sandbox.
	if got := queryString(t, c, "SELECT score FROM users WHERE id = 1"); got != "12.00" {
		t.Errorf("after SIGHUP the session reads %q, want its sandbox's 12.00", got)
	}
	// Debug logging is on now.
	c2 := conn(t, openDB(t, "sbx:"+sandboxPassword+"@tcp("+p.addr+")/app"))
	mustExecC(t, c2, "SELECT 1")
	waitFor(t, "a debug line", func() bool { return strings.Contains(p.logs.String(), `"level":"debug"`) })
}
