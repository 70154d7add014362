package integration

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestCompressedProtocol (issue 13): a client that asks for compression
// gets it from the proxy, and what it reads is what it reads directly —
// small answers, a large result streamed over many compressed packets,
// a row of more than 16 MiB, prepared statements, a write in a sandbox.
func TestCompressedProtocol(t *testing.T) {
	db, _ := env(t)
	direct := compressedTranscript(t, openDB(t, directDSN(db, "app", "compress=true", "maxAllowedPacket=67108864")))
	for _, mode := range []string{"passthrough", "transparent"} {
		t.Run(mode, func(t *testing.T) {
			p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = mode })
			got := compressedTranscript(t, openDB(t, p.dsn("app", "compress=true", "maxAllowedPacket=67108864")))
			if got != direct {
				t.Errorf("through the proxy:\n%s\ndirectly:\n%s", got, direct)
			}
		})
	}
	// The mariadb CLI's --compress too: it says the session is
	// compressed (as go-sql-driver, it would quietly go without when not
	// offered).
	cli := mariadbCLI(t)
	p := startTestProxy(t, db.Addr, db, func(c *proxy.Config) { c.Mode = "passthrough" })
	res := runCLI(t, cli, p.addr, db.User, db.Password, "", "--compress", "-e", "status; SELECT COUNT(*), SUM(LENGTH(name)) FROM app.users")
	if res.exit != 0 || !strings.Contains(res.stdout, "Protocol:\t\tCompressed") || !strings.Contains(res.stdout, "3\t13") {
		t.Errorf("mariadb --compress: exit %d, %q %q", res.exit, res.stdout, res.stderr)
	}
}

// compressedTranscript runs a fixed script on pool and sums up what it
// read.
func compressedTranscript(t *testing.T, pool *sql.DB) string {
	t.Helper()
	var b strings.Builder
	var n, total int64
	var sum string
	big := "SELECT COUNT(*), SUM(LENGTH(r)), SHA2(GROUP_CONCAT(r ORDER BY seq SEPARATOR ''), 256) FROM " +
		"(SELECT seq, REPEAT(CHAR(65 + seq % 26), 200) AS r FROM (WITH RECURSIVE n(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM n WHERE seq < 20000) SELECT seq FROM n) AS s) AS t"
	if err := pool.QueryRow("SET SESSION group_concat_max_len = 16777216").Err(); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query("WITH RECURSIVE n(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM n WHERE seq < 20000) SELECT seq, REPEAT(CHAR(65 + seq % 26), 200) FROM n")
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for rows.Next() {
		var seq int
		var r string
		if err := rows.Scan(&seq, &r); err != nil {
			t.Fatal(err)
		}
		h.Write([]byte(r))
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("streaming 20000 rows: %v", err)
	}
	fmt.Fprintf(&b, "streamed %d rows %x\n", n, h.Sum(nil))
	if err := pool.QueryRow(big).Scan(&n, &total, &sum); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "aggregate %d %d %s\n", n, total, sum)
	var huge string
	if err := pool.QueryRow("SELECT REPEAT('z', 17000000)").Scan(&huge); err != nil {
		t.Fatalf("a 17 MB row: %v", err)
	}
	fmt.Fprintf(&b, "huge %d %v\n", len(huge), strings.Trim(huge, "z") == "")
	var name string
	if err := pool.QueryRow("SELECT name FROM users WHERE id = ?", 2).Scan(&name); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "prepared %s\n", name)
	if _, err := pool.Exec("CREATE TEMPORARY TABLE tmp_c (v TEXT)"); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "done\n")
	return b.String()
}
