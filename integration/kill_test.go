package integration

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// wantInterrupted waits, 20 s at most, for the end of the statement done
// reports (what), which must be 1317: Query execution was interrupted.
func wantInterrupted(t *testing.T, done <-chan error, what string) {
	t.Helper()
	if err := awaitErr(t, done, 20*time.Second, what+" did not end"); !strings.Contains(fmt.Sprint(err), "1317") {
		t.Fatalf("%s ended with %v, want 1317 Query execution was interrupted", what, err)
	}
}

// TestKillOnlyOwnConnections: proxy users share one upstream account, so
// the proxy answers KILL itself. A user kills its own statements and
// connections, named by the id the proxy's greeting carried (what drivers
// cancel with) or by CONNECTION_ID(); another user's, or a connection
// that is not the proxy's, are "Unknown thread id" and keep running. With
// the ALL PRIVILEGES account and with the least-privilege one, and in
// passthrough mode.
func TestKillOnlyOwnConnections(t *testing.T) {
	for _, acct := range []string{"all privileges", "least privilege", "passthrough"} {
		t.Run(acct, func(t *testing.T) {
			mode := "transparent"
			if acct == "passthrough" { // with the ALL PRIVILEGES account
				mode = "passthrough"
			}
			db, p := sharedAccountProxy(t, acct, mode, nil)
			admin := openDB(t, directDSN(db, ""))
			running := func(marker string) bool {
				var n int
				_ = admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE ?", "SELECT SLEEP(%) /*"+marker+"*/").Scan(&n)
				return n == 1
			}

			victim := dialRaw(t, p.addr, "alice", sandboxPassword, "")
			greetingID, upstreamID := victim.c.GetConnectionID(), victim.scalar("SELECT CONNECTION_ID()")
			done := make(chan error, 1)
			go func() {
				_, err := victim.c.Execute("SELECT SLEEP(30) /*victim*/")
				done <- err
			}()
			testkit.Eventually(t, "the victim's statement to run", func() bool { return running("victim") })

			// A direct connection of the same upstream account: not the
			// proxy's to kill.
			other := conn(t, openDB(t, directDSN(db, "")))
			var directID string
			if err := other.QueryRowContext(context.Background(), "SELECT CONNECTION_ID()").Scan(&directID); err != nil {
				t.Fatal(err)
			}
			bob := openDB(t, p.userDSN("bob", ""))
			for _, q := range []string{
				fmt.Sprintf("KILL QUERY %d", greetingID), "KILL QUERY " + upstreamID,
				fmt.Sprintf("KILL %d", greetingID), "KILL CONNECTION " + upstreamID, "KILL " + directID,
			} {
				_, err := bob.Exec(q)
				if e := mysqlErr(err); !strings.HasPrefix(e, "1094") {
					t.Errorf("bob: %s: %s, want 1094 Unknown thread id", q, e)
				}
			}
			for _, q := range []string{"KILL USER alice", "KILL HARD QUERY 5", "SELECT 1; KILL 5"} {
				if _, err := bob.Exec(q); err == nil {
					t.Errorf("bob: %s was not refused", q)
				}
			}
			if !running("victim") {
				t.Fatal("another user's KILL stopped the statement")
			}
			if err := other.PingContext(context.Background()); err != nil {
				t.Fatalf("the direct connection was killed: %v", err)
			}

			// Alice cancels her own statement by its greeting id, as the
			// mariadb CLI does on Ctrl-C.
			alice := openDB(t, p.userDSN("alice", ""))
			if _, err := alice.Exec(fmt.Sprintf("KILL QUERY %d", greetingID)); err != nil {
				t.Fatalf("alice: KILL QUERY of her own statement: %v", err)
			}
			wantInterrupted(t, done, "the killed statement")
			if got := victim.scalar("SELECT 7"); got != "7" {
				t.Fatalf("the connection should survive KILL QUERY: %q", got)
			}
			// And her connection by CONNECTION_ID() with COM_PROCESS_KILL.
			killer := dialRaw(t, p.addr, "alice", sandboxPassword, "")
			var id [4]byte
			var up uint32
			fmt.Sscan(upstreamID, &up)
			id[0], id[1], id[2], id[3] = byte(up), byte(up>>8), byte(up>>16), byte(up>>24)
			killer.send(append([]byte{0x0C}, id[:]...)...)
			if reply := killer.read(); reply[0] != 0 {
				t.Fatalf("COM_PROCESS_KILL of her own connection: %q", reply)
			}
			if _, err := victim.c.Execute("SELECT 1"); err == nil {
				t.Fatal("the killed connection still answers")
			}
		})
	}
}

// TestCLIKillQueryAsDirect: Ctrl-C in the mariadb command-line client
// (which sends KILL QUERY <greeting id> on a second connection) ends the
// statement with the same error through the proxy as directly.
func TestCLIKillQueryAsDirect(t *testing.T) {
	db, passthrough := env(t)
	transparent := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "transparent" })
	cli := mariadbCLI(t)
	admin := openDB(t, directDSN(db, ""))
	codes := map[string]string{}
	for i, target := range []struct{ name, addr string }{{"direct", db.Addr}, {"passthrough", passthrough.addr}, {"transparent", transparent.addr}} {
		// The CLI drops comments: the sleep's length tells the statements apart.
		stmt := fmt.Sprintf("SELECT SLEEP(3600.%d)", i+1)
		ctx, cancel := context.WithTimeout(context.Background(), 2*testkit.WaitLimit) // a hang guard: Ctrl-C ends it
		cmd := cliCmd(ctx, cli, target.addr, db.User, db.Password, "-e", stmt)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			cancel()
			t.Fatal(err)
		}
		testkit.Eventually(t, "the CLI's statement to run", func() bool {
			var n int
			_ = admin.QueryRow("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO = ?", stmt).Scan(&n)
			return n == 1
		})
		_ = cmd.Process.Signal(syscall.SIGINT)
		err := cmd.Wait()
		guarded := ctx.Err() != nil
		cancel()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		if guarded {
			t.Fatalf("%s: Ctrl-C did not end the statement (the test's hang guard did)", target.name)
		}
		codes[target.name] = cliErrorCode(stderr.String())
		t.Logf("%s: %s", target.name, strings.TrimSpace(stderr.String()))
	}
	if codes["direct"] == "" || codes["passthrough"] != codes["direct"] || codes["transparent"] != codes["direct"] {
		t.Fatalf("mariadb CLI after Ctrl-C: ERROR %q direct, %q through a passthrough proxy, %q through a transparent one",
			codes["direct"], codes["passthrough"], codes["transparent"])
	}
}

// TestKillPassthroughOwnAccount (issue 13): a configured passthrough user
// mapped to an upstream account of its own shares that account with no
// other proxy user, so the server decides its KILL, as on a direct
// connection with those credentials: an account with CONNECTION ADMIN
// kills another account's connection by its thread id (PyMySQL's
// test_issue_36: root kills test2's connection), one without gets the
// server's 1095; users sharing an upstream account (the proxy's own
// included) stay kept to their own connections (above).
func TestKillPassthroughOwnAccount(t *testing.T) {
	db, _ := env(t)
	admin := openDB(t, directDSN(db, ""))
	for _, q := range []string{
		"DROP USER IF EXISTS 'kpo_admin'@'%', 'kpo_plain'@'%'",
		"CREATE USER 'kpo_admin'@'%' IDENTIFIED BY 'kpo-pw'", "GRANT ALL PRIVILEGES ON *.* TO 'kpo_admin'@'%'",
		"CREATE USER 'kpo_plain'@'%' IDENTIFIED BY 'kpo-pw'", "GRANT SELECT ON app.* TO 'kpo_plain'@'%'",
	} {
		mustExecDB(t, admin, q)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP USER IF EXISTS 'kpo_admin'@'%', 'kpo_plain'@'%'") })
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) {
		c.Mode = "passthrough"
		c.Users = []proxy.User{
			{Name: "su", Password: sandboxPassword, UpstreamUser: "kpo_admin", UpstreamPassword: "kpo-pw"},
			{Name: "plain", Password: sandboxPassword, UpstreamUser: "kpo_plain", UpstreamPassword: "kpo-pw"},
		}
	})
	for _, way := range []string{"direct", "proxy"} {
		t.Run(way, func(t *testing.T) {
			suDSN, plainDSN := fmt.Sprintf("kpo_admin:kpo-pw@tcp(%s)/", db.Addr), fmt.Sprintf("kpo_plain:kpo-pw@tcp(%s)/", db.Addr)
			if way == "proxy" {
				suDSN, plainDSN = p.userDSN("su", ""), p.userDSN("plain", "")
			}
			ctx := context.Background()
			su, victim := conn(t, openDB(t, suDSN)), conn(t, openDB(t, plainDSN))
			var suID, victimID string
			if err := su.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&suID); err != nil {
				t.Fatal(err)
			}
			if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&victimID); err != nil {
				t.Fatal(err)
			}
			if _, err := victim.ExecContext(ctx, "KILL "+suID); !strings.HasPrefix(mysqlErr(err), "1095") {
				t.Errorf("the account without CONNECTION ADMIN: KILL of another account's connection: %s, want 1095", mysqlErr(err))
			}
			if _, err := su.ExecContext(ctx, "KILL "+victimID); err != nil {
				t.Fatalf("the account with CONNECTION ADMIN: KILL of another account's connection: %v", err)
			}
			if err := victim.PingContext(ctx); err == nil {
				t.Error("the killed connection still answers")
			}
		})
	}
}
