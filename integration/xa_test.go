package integration

import (
	"context"
	"database/sql"
	"strings"
	"testing"
)

// xaRows is what XA RECOVER answers on c, one "formatID gtrid_length
// bqual_length data" line per transaction.
func xaRows(t *testing.T, c *sql.Conn, q string) []string {
	t.Helper()
	rows, err := c.QueryContext(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %s", q, mysqlErr(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var f, g, b, d string
		if err := rows.Scan(&f, &g, &b, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, f+" "+g+" "+b+" "+d)
	}
	return out
}

// TestXAInSandbox: two-phase commit in a sandbox runs on its tables as on
// a private server. Its transaction ids are its own: XA RECOVER lists only
// its prepared transactions, in either format; another sandbox can neither
// see nor commit them, nor reach production's; production stays as it
// was. A transaction the proxy would have to start again past a fork is
// refused instead, and left for the client to roll back; a discarded
// sandbox's prepared transaction is rolled back with it.
func TestXAInSandbox(t *testing.T) {
	db, h := sandboxProxy(t, "transparent", nil)
	ctx := context.Background()
	root := openDB(t, db.DSN(""))
	rc := conn(t, root)
	setUp(t, root, []string{"CREATE TABLE IF NOT EXISTS other.xa_prod (a INT)"}, "DROP TABLE IF EXISTS other.xa_prod")
	// Its own connection ends production's transaction (first: the table's
	// drop would wait for it).
	t.Cleanup(func() { _, _ = rc.ExecContext(context.Background(), "XA ROLLBACK 'prod1'") })
	mustExecC(t, rc, "XA START 'prod1'")
	mustExecC(t, rc, "INSERT INTO other.xa_prod VALUES (1)")
	mustExecC(t, rc, "XA END 'prod1'")
	mustExecC(t, rc, "XA PREPARE 'prod1'")
	before := checksum(t, db, "app.users")

	a := conn(t, openDB(t, h.userDSN(sandboxUser+"+xa_a", "app")))
	b := conn(t, openDB(t, h.userDSN(sandboxUser+"+xa_b", "app")))
	for _, q := range []string{"XA START 'g1'", "UPDATE users SET score = 1 WHERE name = 'alice'", "INSERT INTO users (name) VALUES ('xa')",
		"XA END 'g1'", "XA PREPARE 'g1'"} {
		mustExecC(t, a, q)
	}
	if got := xaRows(t, a, "XA RECOVER"); strings.Join(got, "|") != "1 2 0 g1" {
		t.Errorf("sandbox a's XA RECOVER: %q, want its own g1 only", got)
	}
	if got := xaRows(t, a, "XA RECOVER FORMAT='SQL'"); strings.Join(got, "|") != "1 2 0 'g1'" {
		t.Errorf("sandbox a's XA RECOVER FORMAT='SQL': %q", got)
	}
	if got := xaRows(t, b, "XA RECOVER"); len(got) != 0 {
		t.Errorf("sandbox b sees XA transactions: %q", got)
	}
	for _, q := range []string{"XA COMMIT 'g1'", "XA ROLLBACK 'prod1'"} {
		if _, err := b.ExecContext(ctx, q); !strings.HasPrefix(mysqlErr(err), "1397") {
			t.Errorf("sandbox b: %s: %s, want 1397 (XAER_NOTA)", q, mysqlErr(err))
		}
	}
	mustExecC(t, a, "XA COMMIT 'g1'")
	wantString(t, a, "SELECT CONCAT(score, '/', (SELECT COUNT(*) FROM users WHERE name = 'xa')) FROM users WHERE name = 'alice'", "1.00/1",
		"sandbox a after XA COMMIT: %s")
	if after := checksum(t, db, "app.users"); after != before {
		t.Errorf("production's users changed: %s -> %s", before, after)
	}
	if got := xaRows(t, rc, "XA RECOVER"); strings.Join(got, "|") != "1 5 0 prod1" {
		t.Errorf("the server's XA RECOVER after the sandbox's commit: %q, want production's prod1 only", got)
	}

	// A read, then a table forked under the XA transaction: refused, the
	// transaction left open for the client.
	mustExecC(t, a, "XA START 'g2'")
	wantString(t, a, "SELECT COUNT(*) FROM other.things", "2", "things: %s rows")
	_, err := a.ExecContext(ctx, "UPDATE other.things SET label = 'x' WHERE id = 1")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1412") || !strings.Contains(e, "XA ROLLBACK") {
		t.Errorf("a fork under an XA transaction that read: %s, want 1412 saying to XA ROLLBACK", e)
	}
	mustExecC(t, a, "XA END 'g2'")
	mustExecC(t, a, "XA ROLLBACK 'g2'")

	// A discarded sandbox's prepared transaction goes with it.
	cdb := openDB(t, h.userDSN(sandboxUser+"+xa_c", "app"))
	c := conn(t, cdb)
	// KEEP: the sandbox outlives the connection (the proxy's grace is 0
	// here), for the DISCARD below to find it however soon the proxy sees
	// the connection end.
	for _, q := range []string{"SANDBOX KEEP", "XA START 'g3'", "INSERT INTO users (name) VALUES ('xc')", "XA END 'g3'", "XA PREPARE 'g3'"} {
		mustExecC(t, c, q)
	}
	c.Close()
	cdb.Close() // the connection ends: its prepared transaction stays, the server's
	mustExecC(t, b, "SANDBOX DISCARD xa_c")
	if got := xaRows(t, rc, "XA RECOVER"); strings.Join(got, "|") != "1 5 0 prod1" {
		t.Errorf("the server's XA RECOVER after the sandbox was discarded: %q, want production's prod1 only", got)
	}
	mustExecC(t, rc, "XA COMMIT 'prod1'")
}
