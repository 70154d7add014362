package integration

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// TestReviewAttackAnonymousAccount: a login is relayed to the server,
// which may authenticate it as another account than its name: the
// anonymous account (an empty user name at 127.0.0.1) takes any name,
// without a password. Sessions
// and sandboxes belong to the login's name, so such a login as dave+work
// would take over dave's sandbox and read what dave's fork copied; the
// proxy refuses it (1045) in the sandboxing modes.
func TestReviewAttackAnonymousAccount(t *testing.T) {
	t.Parallel() // its own server: see rvStartServer
	srv := rvStartServer(t)
	root := openDB(t, srv.DSN("")+"?multiStatements=true")
	mustExecDB(t, root, "CREATE DATABASE anon; CREATE TABLE anon.secret (id INT PRIMARY KEY, s TEXT); INSERT INTO anon.secret VALUES (1, 'TOPSECRET');"+
		"CREATE USER 'dave'@'%' IDENTIFIED BY 'dpw'; GRANT SELECT ON anon.* TO 'dave'@'%'; GRANT ALL ON `\\_sqlfork%`.* TO 'dave'@'%'")
	h := startTestProxy(t, srv.Addr, srv, func(c *proxy.Config) { c.Mode = "transparent" })
	dave := conn(t, openDB(t, fmt.Sprintf("dave+work:dpw@tcp(%s)/anon", h.addr)))
	mustExecC(t, dave, "SANDBOX KEEP")
	mustExecC(t, dave, "DELETE FROM secret WHERE 1 = 0") // dave may read it: forked
	if err := dave.Close(); err != nil {
		t.Fatal(err)
	}
	mustExecDB(t, root, "CREATE USER ''@'127.0.0.1'; GRANT ALL ON `\\_sqlfork%`.* TO ''@'127.0.0.1'")
	t.Cleanup(func() { _, _ = root.Exec("DROP USER ''@'127.0.0.1'") })
	direct, err := sql.Open("mysql", fmt.Sprintf("dave@tcp(%s)/", srv.Addr))
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	var who string
	if err := direct.QueryRowContext(context.Background(), "SELECT CURRENT_USER()").Scan(&who); err != nil || who != "@127.0.0.1" {
		t.Fatalf("directly, dave without a password is %q (%v), want the anonymous account", who, err)
	}
	thief, err := sql.Open("mysql", fmt.Sprintf("dave+work@tcp(%s)/", h.addr))
	if err != nil {
		t.Fatal(err)
	}
	defer thief.Close()
	var s string
	err = thief.QueryRowContext(context.Background(), "SELECT s FROM anon.secret WHERE id = 1").Scan(&s)
	if e := mysqlErr(err); !strings.HasPrefix(e, "1045 (28000)") || !strings.Contains(e, "logged in as the account") {
		t.Errorf("the anonymous account logged in as dave+work: %q, %s; want 1045 naming the account", s, e)
	}
}

// TestReviewAttackLongDatabaseName: a database name too long for the
// sandbox's (cut and hashed) can hold what its sandbox name does not, a
// quote: a check constraint whose string holds the physical name, told
// back as the logical one, must stay a string (a blind replace of names in
// SHOW CREATE TABLE ended it, and the CREATE TABLE … SELECT after it copied
// a table the account cannot read into production with the promote
// account).
func TestReviewAttackLongDatabaseName(t *testing.T) {
	t.Parallel() // its own server: see rvStartServer
	srv := rvStartServer(t)
	root := openDB(t, srv.DSN("")+"?multiStatements=true")
	const db = "analytics_reporting_warehouse_archive_2024_obrien'+"
	mustExecDB(t, root, "CREATE DATABASE app; CREATE TABLE app.secret (s VARCHAR(50)); INSERT INTO app.secret VALUES ('TOPSECRET');"+
		"CREATE DATABASE `"+db+"`; CREATE USER 'frank'@'%' IDENTIFIED BY 'fpw'; GRANT CREATE, SELECT, INSERT, UPDATE ON `"+
		strings.ReplaceAll(db, "_", "\\_")+"`.* TO 'frank'@'%'; GRANT ALL ON `\\_sqlfork%`.* TO 'frank'@'%'")
	h := startTestProxy(t, srv.Addr, srv, func(c *proxy.Config) {
		c.Mode = "transparent"
		c.PromoteUser, c.PromotePassword = srv.User, srv.Password
	})
	frank := conn(t, openDB(t, fmt.Sprintf("frank+inj:fpw@tcp(%s)/", h.addr)))
	rows := rowsOf(t, frank, "SANDBOX STATUS")
	phys := sandbox.Schema("_sqlfork", rows[0][0], db)
	if _, err := frank.ExecContext(context.Background(), "CREATE TABLE `"+db+"`.t (id INT, `.x` INT, s VARCHAR(50), CONSTRAINT ck CHECK ('`"+
		phys+"`.x` IS NULL)) SELECT s FROM `app`.`secret` /*' <> '')) COMMENT='*/ #'"); err != nil {
		t.Logf("refused in the sandbox: %s", mysqlErr(err))
	}
	_, _ = frank.ExecContext(context.Background(), "CREATE TABLE IF NOT EXISTS `"+db+"`.t (id INT, `.x` INT, s VARCHAR(50), CONSTRAINT ck CHECK ('`"+
		phys+"`.x` IS NULL))")
	mustExecC(t, frank, "INSERT INTO `"+db+"`.t (id) VALUES (1)")
	engine := rewrite.NewEngine(16)
	for _, r := range rowsOf(t, frank, "SANDBOX EXPORT") {
		for _, st := range engine.Analyze(r[0], rewrite.Options{CaseSensitiveNames: true}).Statements {
			if slices.ContainsFunc(append(st.Reads, st.Names...), func(t rewrite.Table) bool { return t.Name == "secret" }) {
				t.Errorf("EXPORT reads app.secret: %s", r[0])
			}
		}
	}
	_, err := frank.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY OURS")
	t.Logf("PROMOTE: %s", mysqlErr(err))
	var n int
	if err := root.QueryRow("SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = 't' AND COLUMN_NAME = 's'", db).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n > 0 {
		var leaked int
		if err := root.QueryRow("SELECT COUNT(*) FROM `" + db + "`.t WHERE s = 'TOPSECRET'").Scan(&leaked); err != nil || leaked > 0 {
			t.Errorf("production's `%s`.t holds %d rows of app.secret (%v)", db, leaked, err)
		}
	}
}
