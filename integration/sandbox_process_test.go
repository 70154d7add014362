package integration

import (
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/integration/testdb"
	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// proxyProcess is the sqlfork-proxy binary running as a child process.
type proxyProcess struct {
	addr string
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

func startProxyProcess(t *testing.T, db *testdb.Server, args ...string) *proxyProcess {
	t.Helper()
	p := &proxyProcess{addr: freeAddr(t), logs: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(proxyBinary(t), append([]string{"serve", "--listen", p.addr, "--upstream", db.Addr,
		"--metrics-listen", "", "--shutdown-grace", "5s", "--sandbox-reap-interval", "1s",
		// See startProxyLogging; a test's own --sandbox-grace comes later and wins.
		"--sandbox-grace", "0"}, args...)...)
	p.cmd.Env = append(os.Environ(), "SQLFORK_UPSTREAM_USER="+sandboxUser, "SQLFORK_UPSTREAM_PASSWORD="+sandboxPassword)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("proxy %s log:\n%s", p.addr, p.logs.String())
		}
	})
	testkit.Eventually(t, "proxy to listen", func() bool {
		c, err := net.Dial("tcp", p.addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return p
}

// stop sends SIGTERM and waits for a clean exit.
func (p *proxyProcess) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if err := awaitErr(t, p.done, 20*time.Second, "proxy did not exit on SIGTERM"); err != nil {
		t.Errorf("proxy exited with %v", err)
	}
}

// mariadbCLIRun runs the mariadb client against addr with a script.
func mariadbCLIRun(t *testing.T, bin, addr, user, db, script string) (string, error) {
	t.Helper()
	host, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--protocol=tcp", "-h", host, "-P", port, "-u", user, "-p"+sandboxPassword,
		"--batch", "--skip-column-names", db)
	cmd.Stdin = strings.NewReader(script)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSandboxAcrossProxyProcesses: a kept sandbox made through one proxy
// process is attachable through a second one running at the same time,
// survives the first one's exit and a restart, and is used here with the
// mariadb command-line client (SANDBOX statements as plain queries).
func TestSandboxAcrossProxyProcesses(t *testing.T) {
	db := leastPrivilegeEnv(t)
	cli := mariadbCLI(t)
	a := startProxyProcess(t, db, "--mode", "explicit")
	b := startProxyProcess(t, db, "--mode", "explicit")

	out, err := mariadbCLIRun(t, cli, a.addr, sandboxUser, "app", `
SANDBOX CREATE shared TTL 1h;
UPDATE users SET email = 'a@proc' WHERE name = 'alice';
SELECT email FROM users WHERE name = 'alice';
SANDBOX STATUS;
`)
	if err != nil || !strings.Contains(out, "a@proc") || !strings.Contains(out, "shared\tkept") {
		t.Fatalf("through proxy A: %v\n%s", err, out)
	}
	out, err = mariadbCLIRun(t, cli, b.addr, sandboxUser, "app", `
SELECT email FROM users WHERE name = 'alice';
SANDBOX ATTACH shared;
SELECT email FROM users WHERE name = 'alice';
SANDBOX LIST;
`)
	if err != nil || !strings.Contains(out, "alice@example.com\na@proc\n") || !strings.Contains(out, "shared\tkept") {
		t.Fatalf("through proxy B: %v\n%s", err, out)
	}

	// A fork made through A while B holds the sandbox too reaches B's
	// next statement (the registry check), not only its next reap.
	if out, err := mariadbCLIRun(t, cli, a.addr, sandboxUser, "app",
		"SANDBOX ATTACH shared;\nUPDATE other.things SET label = 'via-a' WHERE id = 2;\n"); err != nil {
		t.Fatalf("fork through A: %v\n%s", err, out)
	}
	out, err = mariadbCLIRun(t, cli, b.addr, sandboxUser, "app", "SANDBOX ATTACH shared;\nSELECT label FROM other.things WHERE id = 2;\n")
	if err != nil || strings.TrimSpace(out) != "via-a" {
		t.Errorf("B right after A's fork: %v\n%s", err, out)
	}

	a.stop(t)
	b.stop(t)
	c := startProxyProcess(t, db, "--mode", "explicit")
	out, err = mariadbCLIRun(t, cli, c.addr, sandboxUser, "app", `
SANDBOX ATTACH shared;
SELECT email FROM users WHERE name = 'alice';
SANDBOX DISCARD;
SELECT email FROM users WHERE name = 'alice';
`)
	if err != nil || !strings.Contains(out, "a@proc\n") || !strings.HasSuffix(strings.TrimSpace(out), "alice@example.com") {
		t.Fatalf("after both proxies restarted: %v\n%s", err, out)
	}
	// Errors reach the CLI as MySQL errors.
	out, err = mariadbCLIRun(t, cli, c.addr, sandboxUser, "app", "SANDBOX ATTACH nosuch;\n")
	if err == nil || !strings.Contains(out, "ERROR 1105") || !strings.Contains(out, "no sandbox named") {
		t.Errorf("attach of a missing sandbox: %v\n%s", err, out)
	}
	// The CLI's `use` is COM_INIT_DB: refused for the proxy's databases.
	out, err = mariadbCLIRun(t, cli, c.addr, sandboxUser, "app", "use _sqlfork_meta\nSELECT 1;\n")
	if err == nil || !strings.Contains(out, "ERROR 1044") {
		t.Errorf("use _sqlfork_meta: %v\n%s", err, out)
	}
	root := openDB(t, db.DSN(""))
	wantString(t, root, "SELECT email FROM app.users WHERE name = 'alice'", "alice@example.com", "production changed: %q")
}
