package integration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// TestAdminCLI: `sqlfork-proxy sandbox list|show|keep|discard` against a
// running proxy's admin API shows what SANDBOX LIST shows, and discard
// drops the sandbox's forks; with --admin-token set, requests without it
// are refused. The proxy's duration settings take days and plain seconds.
func TestAdminCLI(t *testing.T) {
	db := leastPrivilegeEnv(t)
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
		strings.Join(keys, ",") != "bytes,changes,connections,created,expires,id,name,owner,state,table_count,tables" {
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

// TestAdminDiffExportPromote: `sqlfork-proxy sandbox diff|export|promote`
// and their endpoints against a running proxy: the diff and the export are
// SANDBOX DIFF's and SANDBOX EXPORT's; promote needs the token, refuses
// production's conflicting change with 409 under FAIL, and with OURS writes
// the sandbox's rows to production, recorded as the admin API's.
func TestAdminDiffExportPromote(t *testing.T) {
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	mustExecC(t, root, `DROP DATABASE IF EXISTS admin_promote;
CREATE DATABASE admin_promote;
CREATE TABLE admin_promote.t (id INT PRIMARY KEY, label VARCHAR(20)) ENGINE=InnoDB;
INSERT INTO admin_promote.t VALUES (1, 'a'), (2, 'b'), (3, 'c');
GRANT SELECT, SHOW VIEW ON admin_promote.* TO '`+sandboxUser+`'@'%';`)
	t.Cleanup(func() {
		_, _ = root.Exec("DROP DATABASE IF EXISTS admin_promote; REVOKE SELECT, SHOW VIEW ON admin_promote.* FROM '" + sandboxUser + "'@'%'")
	})
	metricsAddr := freeAddr(t)
	p := startProxyProcess(t, db, "--mode", "explicit", "--metrics-listen", metricsAddr, "--admin-token", "s3cret",
		"--promote-user", db.User, "--promote-password", db.Password)
	c := conn(t, openDB(t, "sbx:"+sandboxPassword+"@tcp("+p.addr+")/admin_promote"))
	mustExecC(t, c, "SANDBOX CREATE promobox")
	mustExecC(t, c, "UPDATE t SET label = 'A' WHERE id = 1")
	mustExecC(t, c, "INSERT INTO t VALUES (4, 'd')")
	mustExecC(t, c, "DELETE FROM t WHERE id = 3")

	cli := adminCLI(t, metricsAddr, "s3cret")
	// The summary: SANDBOX DIFF SUMMARY's, numbers as numbers.
	out, errOut, err := cli("diff", "promobox", "--summary", "-o", "json")
	var summary []adminapi.DiffTable
	if err != nil || json.Unmarshal([]byte(out), &summary) != nil {
		t.Fatalf("sandbox diff --summary -o json: %v\n%s%s", err, out, errOut)
	}
	sqlSummary := rowsOf(t, c, "SANDBOX DIFF SUMMARY")
	if len(summary) != 1 || len(sqlSummary) != 1 ||
		fmt.Sprintf("%s %s %d %d %d %d %s %s", summary[0].Table, summary[0].Change, summary[0].Inserted, summary[0].Updated,
			summary[0].Deleted, summary[0].Conflicts, summary[0].KeyKind, summary[0].Method) != strings.Join(sqlSummary[0][:8], " ") ||
		summary[0].Table != "admin_promote.t" || summary[0].Inserted != 1 || summary[0].Updated != 1 || summary[0].Deleted != 1 {
		t.Errorf("diff summary %+v; SANDBOX DIFF SUMMARY %q", summary, sqlSummary)
	}
	out, errOut, err = cli("diff", "promobox", "--summary")
	if err != nil || !strings.HasPrefix(out, "TABLE ") || !strings.Contains(out, "admin_promote.t") {
		t.Errorf("sandbox diff --summary: %v\n%s%s", err, out, errOut)
	}
	// The detail: SANDBOX DIFF's rows, JSON embedded.
	out, errOut, err = cli("diff", "promobox", "--table", "admin_promote.t", "-o", "json")
	var changes []adminapi.DiffChange
	if err != nil || json.Unmarshal([]byte(out), &changes) != nil {
		t.Fatalf("sandbox diff -o json: %v\n%s%s", err, out, errOut)
	}
	sqlChanges := rowsOf(t, c, "SANDBOX DIFF FOR admin_promote.t")
	if len(changes) != 3 || len(sqlChanges) != 3 {
		t.Fatalf("diff %s; SANDBOX DIFF %q", out, sqlChanges)
	}
	for i, ch := range changes {
		want := sqlChanges[i]
		for j, v := range []json.RawMessage{ch.Key, ch.Before, ch.After, ch.Production} {
			if !sameJSON(t, v, want[2+j]) {
				t.Errorf("diff row %d column %d: %s, SANDBOX DIFF has %q", i, 2+j, v, want[2+j])
			}
		}
		if ch.Table != want[0] || ch.Op != want[1] {
			t.Errorf("diff row %d: %s %s, SANDBOX DIFF has %q", i, ch.Table, ch.Op, want)
		}
	}
	// The export: SANDBOX EXPORT's statements, as a script.
	out, errOut, err = cli("export", "promobox")
	if err != nil || out != adminapi.ExportText(column(t, c, "SANDBOX EXPORT")) || !strings.Contains(out, "INSERT INTO `admin_promote`.`t`") {
		t.Errorf("sandbox export: %v\n%s%s\nSANDBOX EXPORT: %q", err, out, errOut, column(t, c, "SANDBOX EXPORT"))
	}
	// Promote needs the token.
	resp, err := http.Post("http://"+metricsAddr+"/api/v1/sandboxes/promobox/promote?strategy=ours", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("promote without the token: HTTP %d, want 401", resp.StatusCode)
	}
	// Production changes the row the sandbox changed: FAIL refuses (409).
	mustExecC(t, root, "UPDATE admin_promote.t SET label = 'Z' WHERE id = 1")
	out, errOut, err = cli("diff", "promobox", "-o", "json")
	changes = nil
	if err != nil || json.Unmarshal([]byte(out), &changes) != nil || len(changes) != 3 || changes[0].Op != "conflict" ||
		!sameJSON(t, changes[0].Production, `{"id": 1, "label": "Z"}`) || !sameJSON(t, changes[0].After, `{"id": 1, "label": "A"}`) {
		t.Errorf("sandbox diff after production changed the row: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = cli("promote", "promobox")
	if err == nil || !strings.Contains(errOut, "admin API: conflict: PROMOTE refused: 1 rows changed in production since the fork") ||
		!strings.Contains(errOut, "(HTTP 409)") {
		t.Errorf("sandbox promote with a conflict: %v\n%s%s", err, out, errOut)
	}
	if got := strings.Join(column(t, root, "SELECT CONCAT(id, label) FROM admin_promote.t ORDER BY id"), ","); got != "1Z,2b,3c" {
		t.Errorf("production after a refused promote: %s", got)
	}
	out, errOut, err = cli("promote", "promobox", "--strategy", "ours", "-o", "json")
	var promoted adminapi.Promoted
	if err != nil || json.Unmarshal([]byte(out), &promoted) != nil || promoted.Outcome != "committed" || promoted.Strategy != "ours" ||
		promoted.Sandbox != "promobox" || promoted.Rows != 3 {
		t.Fatalf("sandbox promote --strategy ours: %v\n%s%s", err, out, errOut)
	}
	if got := strings.Join(column(t, root, "SELECT CONCAT(id, label) FROM admin_promote.t ORDER BY id"), ","); got != "1A,2b,4d" {
		t.Errorf("production after the promote: %s, want the sandbox's rows", got)
	}
	audit := rowsOf(t, root, "SELECT user, via, strategy, outcome FROM _sqlfork_meta.promotes WHERE name = 'promobox' ORDER BY id")
	if fmt.Sprint(audit) != "[[admin-api api FAIL refused] [admin-api api OURS committed]]" {
		t.Errorf("promotes recorded: %v", audit)
	}
	if _, errOut, err = cli("diff", "nosuch"); err == nil || !strings.Contains(errOut, "HTTP 404") {
		t.Errorf("diff of a missing sandbox: %v\n%s", err, errOut)
	}
}

// adminCLI runs `sqlfork-proxy sandbox ARGS…` against the admin API on
// metricsAddr with token, and returns its stdout, stderr and error.
func adminCLI(t *testing.T, metricsAddr, token string) func(args ...string) (string, string, error) {
	return func(args ...string) (string, string, error) {
		cmd := exec.Command(proxyBinary(t), append([]string{"sandbox", "--admin-url", "http://" + metricsAddr}, args...)...)
		cmd.Env = append(cmd.Environ(), "SQLFORK_ADMIN_TOKEN="+token)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
}

// TestAdminPromotePlan: through the admin API and the CLI of a running
// proxy, a dry run answers the plan (the conflict with production, the
// statements, the digest) and applies and records nothing; a promote
// matching the digest of a plan the sandbox has since changed is refused
// (409) before production is touched; the command a dry run prints
// commits exactly its plan.
func TestAdminPromotePlan(t *testing.T) {
	db := leastPrivilegeEnv(t)
	root := openDB(t, db.DSN("")+"?multiStatements=true")
	setUp(t, root, []string{"DROP DATABASE IF EXISTS admin_plan", "CREATE DATABASE admin_plan",
		"CREATE TABLE admin_plan.t (id INT PRIMARY KEY, label VARCHAR(20)) ENGINE=InnoDB",
		"INSERT INTO admin_plan.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
		"GRANT SELECT, SHOW VIEW ON admin_plan.* TO '" + sandboxUser + "'@'%'"},
		"DROP DATABASE IF EXISTS admin_plan", "REVOKE SELECT, SHOW VIEW ON admin_plan.* FROM '"+sandboxUser+"'@'%'")
	metricsAddr := freeAddr(t)
	p := startProxyProcess(t, db, "--mode", "explicit", "--metrics-listen", metricsAddr, "--admin-token", "s3cret",
		"--promote-user", db.User, "--promote-password", db.Password)
	c := conn(t, openDB(t, "sbx:"+sandboxPassword+"@tcp("+p.addr+")/admin_plan"))
	for _, q := range []string{"SANDBOX CREATE planbox", "UPDATE t SET label = 'A' WHERE id = 1", "INSERT INTO t VALUES (4, 'd')"} {
		mustExecC(t, c, q)
	}
	mustExecC(t, root, "UPDATE admin_plan.t SET label = 'Z' WHERE id = 1") // a conflict, which OURS resolves
	production := func() string {
		return strings.Join(column(t, root, "SELECT CONCAT(id, label) FROM admin_plan.t ORDER BY id"), ",")
	}
	api := &adminapi.Client{BaseURL: "http://" + metricsAddr, Token: "s3cret"}
	ctx := context.Background()
	o := adminapi.PromoteOptions{Strategy: adminapi.StrategyOurs, Tables: []string{"admin_plan.t"}, DryRun: true}

	reviewed, err := api.Promote(ctx, "planbox", o)
	if err != nil || reviewed.Outcome != adminapi.OutcomeDryRun || !reviewed.DryRun || reviewed.Rows != 0 || !adminapi.IsDigest(reviewed.Digest) ||
		len(reviewed.Plan) < 2 || reviewed.Plan[0].Step != "conflict" || !strings.HasPrefix(reviewed.Plan[0].Statement, "admin_plan.t ") ||
		slices.ContainsFunc(reviewed.Plan[1:], func(s adminapi.PlanStep) bool { return s.Step != "rows" }) ||
		!strings.Contains(reviewed.Info, "nothing was applied") {
		t.Fatalf("dry run: %+v, %v", reviewed, err)
	}
	if got := production(); got != "1Z,2b,3c" {
		t.Errorf("production after a dry run: %s", got)
	}
	// The sandbox changes: the plan reviewed is no longer the plan.
	mustExecC(t, c, "UPDATE t SET label = 'B' WHERE id = 2")
	o.DryRun, o.Matching = false, reviewed.Digest
	_, err = api.Promote(ctx, "planbox", o)
	if !errors.Is(err, adminapi.ErrConflict) || !strings.Contains(err.Error(), "PROMOTE refused: its plan is now sha256:") ||
		!strings.Contains(err.Error(), "not the "+reviewed.Digest+" that was reviewed") {
		t.Fatalf("promote matching the plan before the sandbox changed: %v, want a 409", err)
	}
	if got := production(); got != "1Z,2b,3c" {
		t.Errorf("production after a stale plan: %s", got)
	}
	// Review again with the CLI, and run the command it prints.
	cli := adminCLI(t, metricsAddr, "s3cret")
	out, errOut, err := cli("promote", "planbox", "--strategy", "ours", "--for", "admin_plan.t", "--dry-run")
	_, apply, found := strings.Cut(out, "\napply:   ")
	args := strings.Fields(apply)
	if err != nil || !found || len(args) != 10 || strings.Join(args[:8], " ") != "sqlfork-proxy sandbox promote planbox --strategy ours --for admin_plan.t" ||
		args[8] != "--matching" || args[9] == reviewed.Digest || !adminapi.IsDigest(args[9]) || !strings.Contains(out, "\nconflict  admin_plan.t ") {
		t.Fatalf("sandbox promote --dry-run: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = cli(append(args[2:], "-o", "json")...) // the words after "sqlfork-proxy sandbox"
	var promoted adminapi.Promoted
	if err != nil || json.Unmarshal([]byte(out), &promoted) != nil || promoted.Outcome != "committed" || promoted.Rows != 3 {
		t.Fatalf("%s: %v\n%s%s", apply, err, out, errOut)
	}
	if got := production(); got != "1A,2B,3c,4d" {
		t.Errorf("production after the promote: %s, want the sandbox's rows", got)
	}
	audit := rowsOf(t, root, "SELECT user, via, strategy, outcome FROM _sqlfork_meta.promotes WHERE name = 'planbox' ORDER BY id")
	if fmt.Sprint(audit) != "[[admin-api api OURS refused] [admin-api api OURS committed]]" {
		t.Errorf("promotes recorded: %v (a dry run is not one)", audit)
	}
}

// rowsOf reads every row of q as strings ("NULL" for NULL).
func rowsOf(t *testing.T, c interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, q string) [][]string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := scanStrings(rows)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, nullText(vals))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameJSON reports whether got (the API's) is the JSON text want (SQL's;
// "NULL": null).
func sameJSON(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	if want == "NULL" {
		want = "null"
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Errorf("%s: %v", got, err)
		return false
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Errorf("%s: %v", want, err)
		return false
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// TestSIGHUPReload: SIGHUP re-reads the config file, applies the log level
// and sandbox limits at once, reports the rest as needing a restart, and
// drops no connection.
func TestSIGHUPReload(t *testing.T) {
	db := leastPrivilegeEnv(t)
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
	testkit.Eventually(t, "the reload to be logged", func() bool { return strings.Contains(p.logs.String(), "SIGHUP: settings reloaded") })
	logs := p.logs.String()
	if !strings.Contains(logs, `"applied":["max-sandboxes","log-level"]`) && !strings.Contains(logs, `"applied":["log-level","max-sandboxes"]`) {
		t.Errorf("reload did not apply log-level and max-sandboxes:\n%s", logs)
	}
	if !strings.Contains(logs, `"settings":["idle-timeout"]`) {
		t.Errorf("idle-timeout not reported as needing a restart:\n%s", logs)
	}
	// The connection survived, in its sandbox.
	wantString(t, c, "SELECT score FROM users WHERE id = 1", "12.00", "after SIGHUP the session reads %q, want its sandbox's 12.00")
	// Debug logging is on now.
	c2 := conn(t, openDB(t, "sbx:"+sandboxPassword+"@tcp("+p.addr+")/app"))
	mustExecC(t, c2, "SELECT 1")
	testkit.Eventually(t, "a debug line", func() bool { return strings.Contains(p.logs.String(), `"level":"debug"`) })
}
