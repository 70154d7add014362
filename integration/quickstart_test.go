package integration

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// TestReadmeQuickStart: scripts/run.sh (what `make run` runs) on a fresh
// state directory, then the README's quick start as written — its SQL in
// the client it opens, its shell commands in bash — reaches a promoted
// change through SQL and through the CLI. Only the addresses are the
// test's own: the proxy's and the admin API's free ports, MariaDB's port
// as run.sh chose it, the state directory, the binary built for the test.
func TestReadmeQuickStart(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	mariadbCLI(t) // the quick start's client (skips only outside CI)
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(file))
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := quickStartBlocks(t, string(readme))
	state, work := t.TempDir(), t.TempDir()
	proxyAddr, adminAddr := freeAddr(t), freeAddr(t)
	bin := proxyBinary(t)
	startRunScript(t, root, state, proxyAddr, adminAddr, bin)
	dbPort, err := os.ReadFile(filepath.Join(state, "port"))
	if err != nil {
		t.Fatal(err)
	}
	_, proxyPort, _ := net.SplitHostPort(proxyAddr)
	local := strings.NewReplacer("-P3307", "-P"+proxyPort, "-P3306", "-P"+strings.TrimSpace(string(dbPort)),
		".sqlfork/", state+"/", "bin/sqlfork-proxy", bin)
	env := append(os.Environ(), "SQLFORK_ADMIN_URL=http://"+adminAddr)
	client := ""
	for _, b := range blocks {
		text := local.Replace(b.text)
		switch {
		case b.lang == "sh" && strings.TrimSpace(text) == "make run":
		case b.lang == "sh" && strings.HasPrefix(text, "mariadb ") && !strings.Contains(text, " -e "):
			client = strings.TrimSpace(text) // the client the SQL that follows is typed in
		case b.lang == "sql":
			if client == "" {
				t.Fatal("the quick start's SQL comes before the client it is typed in")
			}
			runQuickStart(t, work, env, client+" <<'SQL'\n"+text+"SQL\n")
		default:
			runQuickStart(t, work, env, text)
		}
	}
	admin := "mariadb -h127.0.0.1 -P" + strings.TrimSpace(string(dbPort)) + " -usqlfork_admin -psqlfork_admin demo -N -e "
	for q, want := range map[string]string{
		"'SELECT price, discontinued FROM products WHERE sku = \"KB-001\"'": "99.00\t0",
		"'SELECT price, discontinued FROM products WHERE sku = \"CB-004\"'": "9.99\t1",
		"'SELECT country FROM customers WHERE id = 1'":                      "UK",
	} {
		if got := strings.TrimSpace(runQuickStart(t, work, env, admin+q)); got != want {
			t.Errorf("production: %s gives %q, want %q", q, got, want)
		}
	}
	if st, err := os.Stat(filepath.Join(work, "loyalty.sql")); err != nil || st.Size() == 0 {
		t.Errorf("the export written by the CLI: %v", err)
	}
}

// quickBlock is a fenced block of the README's quick start.
type quickBlock struct{ lang, text string }

// quickStartBlocks are the fenced blocks of the README's section "Quick
// start", in order.
func quickStartBlocks(t *testing.T, readme string) []quickBlock {
	t.Helper()
	_, section, ok := strings.Cut(readme, "## Quick start")
	if !ok {
		t.Fatal("the README has no quick start")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var out []quickBlock
	for _, m := range regexp.MustCompile("(?s)```(\\w+)\n(.*?)```").FindAllStringSubmatch(section, -1) {
		out = append(out, quickBlock{lang: m[1], text: m[2]})
	}
	if len(out) < 4 {
		t.Fatalf("the quick start has %d blocks", len(out))
	}
	return out
}

// startRunScript runs scripts/run.sh in root with its throwaway MariaDB in
// state, the proxy on proxyAddr, its admin API on adminAddr, and stops it
// (SIGTERM: the script stops the proxy and MariaDB) when the test ends.
func startRunScript(t *testing.T, root, state, proxyAddr, adminAddr, bin string) {
	t.Helper()
	cmd := exec.Command("bash", "scripts/run.sh")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "SQLFORK_STATE_DIR="+state, "SQLFORK_LISTEN="+proxyAddr, "SQLFORK_METRICS_LISTEN="+adminAddr,
		"SQLFORK_PROXY_BIN="+bin)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		<-done
		if t.Failed() {
			t.Logf("scripts/run.sh:\n%s", logs.String())
		}
	})
	testkit.Eventually(t, "make run's proxy to listen", func() bool {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("scripts/run.sh exited: %v\n%s", err, logs.String())
		default:
		}
		c, err := net.Dial("tcp", proxyAddr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// runQuickStart runs script with bash in dir and returns its output,
// failing the test when it fails.
func runQuickStart(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s\n%v:\n%s", script, err, out)
	}
	return string(out)
}
