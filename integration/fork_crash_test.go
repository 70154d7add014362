package integration

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
)

// TestInterruptedForkCleanedAtOnce: the registry row a fork writes before it
// copies ("forking") is left behind when the process dies mid-fork. The
// fork's upstream lock died with it, so the proxy drops such a marker, and
// the half-made copy, at its next reconciliation, not after the 30-minute
// fork timeout; a marker whose lock is held (a fork running elsewhere)
// stays until the lock is released.
func TestInterruptedForkCleanedAtOnce(t *testing.T) {
	db, p := sandboxProxy(t, "explicit", nil)
	c := p.appConn(t)
	mustExecC(t, c, "SANDBOX CREATE crashbox TTL 1h")
	root := openDB(t, directDSN(db, ""))
	var id string
	if err := root.QueryRow("SELECT id FROM _sqlfork_meta.sandboxes WHERE name = 'crashbox'").Scan(&id); err != nil {
		t.Fatal(err)
	}
	phys := "_sqlfork_" + id + "_app"
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS `" + phys + "`",
		"CREATE TABLE `" + phys + "`.half_users (a INT)",
		"CREATE TABLE `" + phys + "`.half_orders (a INT)",
		fmt.Sprintf("INSERT INTO _sqlfork_meta.tables (sandbox_id, db, tbl, kind, phys_db, phys_tbl, created_at) VALUES "+
			"('%[1]s', 'app', 'users', 'forking', '%[2]s', 'half_users', UTC_TIMESTAMP(6)), "+
			"('%[1]s', 'app', 'orders', 'forking', '%[2]s', 'half_orders', UTC_TIMESTAMP(6))", id, phys),
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// A fork of orders "running" elsewhere: its lock is held.
	holder, err := root.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	var secret string
	if err := root.QueryRow("SELECT value FROM _sqlfork_meta.settings WHERE name = 'lock_secret'").Scan(&secret); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret + "\x00" + id + "\x00app\x00orders"))
	lock := "sqlfork:" + hex.EncodeToString(sum[:20])
	var got sql.NullString
	if err := holder.QueryRowContext(context.Background(), "SELECT GET_LOCK(?, 5)", lock).Scan(&got); err != nil || got.String != "1" {
		t.Fatalf("GET_LOCK: %v %v", got, err)
	}
	left := func(tbl string) (markers, tables int) {
		_ = root.QueryRow("SELECT COUNT(*) FROM _sqlfork_meta.tables WHERE sandbox_id = ? AND tbl = ? AND kind = 'forking'", id, tbl).Scan(&markers)
		_ = root.QueryRow("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?", phys, "half_"+tbl).Scan(&tables)
		return markers, tables
	}
	start := time.Now()
	testkit.Eventually(t, "the dead fork's marker and copy to go", func() bool { m, n := left("users"); return m == 0 && n == 0 })
	t.Logf("dead fork cleaned after %s", time.Since(start).Round(time.Millisecond))
	p.awaitReaps(t, 3) // three reconciliations
	if m, n := left("orders"); m != 1 || n != 1 {
		t.Fatalf("the running fork's marker or copy was dropped (markers %d, tables %d)", m, n)
	}
	if _, err := holder.ExecContext(context.Background(), "DO RELEASE_LOCK(?)", lock); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the marker whose lock was released to go", func() bool { m, n := left("orders"); return m == 0 && n == 0 })
	mustExecC(t, c, "SANDBOX DISCARD crashbox")
	testkit.Eventually(t, "the sandbox's schemas to go", func() bool { return len(sandboxSchemas(t, root)) == 0 })
}
