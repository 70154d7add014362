package integration

// Red-team tests of a sandbox's databases of its own (commit f05ca73):
// CREATE / DROP / ALTER DATABASE, USE, COM_INIT_DB, DATABASE(), SHOW
// DATABASES, DIFF / EXPORT / PROMOTE / RESET / DISCARD of them, with the
// least-privilege upstream account and one with ALL PRIVILEGES. After every
// attack production is as it was: its databases (names, character sets) as
// root sees them, the test's tables' checksums and routines.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// rtdbFix is one account's production: prodDB (readable by both accounts),
// secretDB (readable only by the ALL PRIVILEGES one).
type rtdbFix struct {
	e                *diffEnv
	acct             diffAccount
	root             *sql.DB
	prodDB, secretDB string
	before           string
}

// rtdbEnv is both proxies, promotion by the user's own account.
func rtdbEnv(t *testing.T) *diffEnv {
	t.Helper()
	prod, _ := env(t)
	return newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
}

// rtdbEach runs f for each account with its production made afresh.
func rtdbEach(t *testing.T, e *diffEnv, name string, f func(t *testing.T, x *rtdbFix)) {
	root := openDB(t, e.prod.DSN(""))
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			s := acct.short()
			x := &rtdbFix{e: e, acct: acct, root: root, prodDB: "rtp_" + name + "_" + s, secretDB: "rts_" + name + "_" + s}
			e.database(t, x.prodDB, "CREATE TABLE keep (id INT PRIMARY KEY, v INT); INSERT INTO keep VALUES (1, 10), (2, 20);"+
				"CREATE PROCEDURE bump() UPDATE keep SET v = v + 1;")
			setUp(t, root, []string{"DROP DATABASE IF EXISTS " + x.secretDB, "CREATE DATABASE " + x.secretDB,
				"CREATE TABLE " + x.secretDB + ".secret (id INT PRIMARY KEY, v VARCHAR(20))",
				"INSERT INTO " + x.secretDB + ".secret VALUES (1, 'topsecret')"}, "DROP DATABASE IF EXISTS "+x.secretDB)
			x.before = x.state(t)
			f(t, x)
			x.check(t, "the end of the test")
		})
	}
}

// state is production as root sees it: its databases but the proxy's, with
// their character sets, the test's tables' checksums and its routines.
func (x *rtdbFix) state(t *testing.T) string {
	t.Helper()
	dbs := column(t, x.root, "SELECT CONCAT(SCHEMA_NAME, ' ', DEFAULT_CHARACTER_SET_NAME, ' ', DEFAULT_COLLATION_NAME) "+
		"FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT LIKE '\\_sqlfork%' ORDER BY 1")
	routines := column(t, x.root, "SELECT CONCAT(ROUTINE_SCHEMA, '.', ROUTINE_NAME, ':', MD5(ROUTINE_DEFINITION)) FROM information_schema.ROUTINES "+
		"WHERE ROUTINE_SCHEMA IN ('"+x.prodDB+"', '"+x.secretDB+"') ORDER BY 1")
	return strings.Join(dbs, ",") + "|" + checksum(t, x.e.prod, x.prodDB+".keep") + "|" + checksum(t, x.e.prod, x.secretDB+".secret") +
		"|" + strings.Join(routines, ",")
}

// check requires production as it was.
func (x *rtdbFix) check(t *testing.T, after string) {
	t.Helper()
	if now := x.state(t); now != x.before {
		t.Errorf("production changed after %s:\n  was %s\n  now %s", after, x.before, now)
	}
}

// expand puts the fixture's names in q: $P production's database, $S the
// secret one, $A the account's short name.
func (x *rtdbFix) expand(q string) string {
	return strings.NewReplacer("$P", x.prodDB, "$S", x.secretDB, "$A", x.acct.short()).Replace(q)
}

// sandbox is a connection of a new sandbox named tag (multi-statements on),
// in database db, discarded when the test ends.
func (x *rtdbFix) sandbox(t *testing.T, tag, db string) *sql.Conn {
	t.Helper()
	c := conn(t, openDB(t, withParams(x.acct.dsn(tag+"-"+x.acct.short(), db), []string{"multiStatements=true"})))
	t.Cleanup(func() { _, _ = c.ExecContext(context.Background(), "SANDBOX DISCARD") })
	return c
}

// rtdbOutcome is "ok" or the error as mysqlErr writes it.
func rtdbOutcome(err error) string {
	if err == nil {
		return "ok"
	}
	return mysqlErr(err)
}

// rtdbKnown skips a test of a known defect unless SQLFORK_TEST_KNOWN=1.
func rtdbKnown(t *testing.T, defect string) {
	t.Helper()
	if os.Getenv("SQLFORK_TEST_KNOWN") != "1" {
		t.Skip("known defect (SQLFORK_TEST_KNOWN=1 runs it): " + defect)
	}
}

var _ = fmt.Sprint

// rtdbCase is one attack: setup statements that must succeed, the attack
// q, its outcome (a prefix of rtdbOutcome's text), and a query the sandbox
// answers afterwards with want (both optional).
type rtdbCase struct {
	setup       []string
	q, outcome  string
	probe, want string
}

// rtdbHidden probes that the sandbox no longer has production's database.
const rtdbHidden = "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$P'"

// rtdbSpellings are the spellings of changes of production's databases.
func rtdbSpellings() []rtdbCase {
	long64 := "l" + strings.Repeat("x", 63)
	return []rtdbCase{
		{q: "DROP DATABASE $P", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "DROP SCHEMA IF EXISTS `$P`", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "drop database `$P`", outcome: "ok", probe: "SELECT * FROM $P.keep", want: "1146 (42S02) Table '$P.keep' doesn't exist"},
		{q: "/*!40000 DROP DATABASE $P */", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "/*M!100000 DROP DATABASE $P */", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "/*!DROP DATABASE $P*/", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "DROP /*!40000 DATABASE */ $P", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "DROP DATABASE /*!40000 IF EXISTS */ $P", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "DROP/**/DATABASE/* c */$P/* d */", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "-- c\nDROP DATABASE $P", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "# c\nDROP DATABASE $P;", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "DROP DATABASE `RTP_X`", outcome: "1008 (HY000) Can't drop database 'RTP_X'"},
		{q: "SET STATEMENT max_statement_time = 100 FOR DROP DATABASE $P", outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: "EXECUTE IMMEDIATE 'DROP DATABASE $P'", outcome: "ok", probe: rtdbHidden, want: "0"},
		{setup: []string{"SET @q = 'DROP DATABASE $P'"}, q: "EXECUTE IMMEDIATE @q", outcome: "ok", probe: rtdbHidden, want: "0"},
		{setup: []string{"SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')"}, q: `DROP DATABASE "$P"`, outcome: "ok", probe: rtdbHidden, want: "0"},
		{q: `SET STATEMENT sql_mode = 'ANSI_QUOTES' FOR DROP DATABASE "$P"`, outcome: "1064 (42000)"},
		{setup: []string{"SET NAMES koi8r"}, q: "DROP DATABASE $P", outcome: "ok", probe: rtdbHidden, want: "0"},
		{setup: []string{"UPDATE $P.keep SET v = 0"}, q: "DROP DATABASE $P", outcome: "ok", probe: "SELECT * FROM $P.keep", want: "1146 (42S02) Table '$P.keep' doesn't exist"},
		{q: "PREPARE p FROM 'DROP DATABASE $P'", outcome: "1295 (HY000)"},
		{q: "PREPARE p FROM 'CREATE DATABASE rtq_$A'", outcome: "1295 (HY000)"},
		{q: "SELECT 1; DROP DATABASE $P", outcome: "1290 (HY000)"},
		{q: "DROP DATABASE $P; SELECT 1", outcome: "1290 (HY000)"},
		{q: "DROP DATABASE $P; DROP DATABASE $P", outcome: "1290 (HY000)"},
		{q: "USE $P; DROP DATABASE $P", outcome: "1290 (HY000)"},
		{q: "BEGIN NOT ATOMIC DROP DATABASE $P; END", outcome: "1290 (HY000)"},
		{q: "BEGIN NOT ATOMIC CREATE DATABASE rtq_$A; END", outcome: "1290 (HY000)"},
		{setup: []string{"CREATE DATABASE rtq_$A"}, q: "CREATE PROCEDURE rtq_$A.p() DROP DATABASE $P", outcome: "1290 (HY000)"},
		{setup: []string{"CREATE DATABASE rtq_$A", "CREATE TABLE rtq_$A.t (id INT)"},
			q: "CREATE TRIGGER rtq_$A.tr BEFORE INSERT ON rtq_$A.t FOR EACH ROW DROP DATABASE $P", outcome: "1422 (HY000)"},
		{q: "CREATE OR REPLACE DATABASE $P", outcome: "ok",
			probe: "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '$P'", want: "0"},
		{q: "CREATE OR REPLACE DATABASE IF NOT EXISTS $P", outcome: "1221 (HY000)"},
		{q: "ALTER DATABASE $P CHARACTER SET latin1", outcome: "ok",
			probe: "SELECT DEFAULT_CHARACTER_SET_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '$P'", want: "utf8mb4"},
		{q: "ALTER DATABASE CHARACTER SET latin1 COLLATE latin1_bin", outcome: "ok"},
		{q: "ALTER SCHEMA `$P` COMMENT 'x'", outcome: "ok"},
		{q: "ALTER DATABASE $P UPGRADE DATA DIRECTORY NAME", outcome: "1221 (HY000)"},
		{q: "CREATE DATABASE $P", outcome: "1007 (HY000) Can't create database '$P'; database exists"},
		{q: "CREATE DATABASE IF NOT EXISTS $P", outcome: "ok", probe: "SELECT COUNT(*) FROM $P.keep", want: "2"},
		{q: "CREATE SCHEMA /*!32312 IF NOT EXISTS*/ `$P` CHARACTER SET latin1", outcome: "ok", probe: "SELECT COUNT(*) FROM $P.keep", want: "2"},
		{q: "DROP DATABASE mysql", outcome: "1290 (HY000)"},
		{q: "DROP DATABASE IF EXISTS INFORMATION_SCHEMA", outcome: "1290 (HY000)"},
		{q: "ALTER DATABASE sys CHARACTER SET latin1", outcome: "1290 (HY000)"},
		{q: "DROP SCHEMA Performance_Schema", outcome: "1290 (HY000)"},
		{q: "CREATE DATABASE mysql", outcome: "1007 (HY000)"},
		{q: "CREATE DATABASE `_sqlfork_meta`", outcome: "1044 (42000)"},
		{q: "DROP DATABASE `_sqlfork_meta`", outcome: "1044 (42000)"},
		{q: "DROP DATABASE IF EXISTS `_SQLFORK_production`", outcome: "1044 (42000)"},
		{q: "ALTER DATABASE _sqlfork_meta CHARACTER SET latin1", outcome: "1044 (42000)"},
		{q: "USE `_sqlfork_meta`", outcome: "1044 (42000)"},
		{q: "CREATE DATABASE `_sqlfork_00000000_x`", outcome: "1044 (42000)"},
		{q: "SELECT * FROM `_sqlfork_meta`.`databases`", outcome: "1044 (42000)"},
		{q: "CREATE DATABASE `rtq_$A `", outcome: "1102 (42000)"},
		{q: "CREATE DATABASE `" + strings.Repeat("д", 64) + "`", outcome: "ok"},
		{q: "CREATE DATABASE `" + long64 + "`", outcome: "ok", probe: "SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '" + long64 + "'", want: "1"},
		{q: "DROP DATABASE $S", outcome: "", probe: "SELECT COUNT(*) FROM $S.secret"},
	}
}

// TestRTDBSpellings: every spelling of CREATE / DROP / ALTER DATABASE of
// production's databases changes the sandbox alone or is refused with a
// MySQL error, with either account, each in a sandbox of its own.
func TestRTDBSpellings(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "sp", func(t *testing.T, x *rtdbFix) {
		ctx := context.Background()
		for i, c := range rtdbSpellings() {
			sb := x.sandbox(t, fmt.Sprintf("rtsp%d", i), x.prodDB)
			for _, q := range c.setup {
				mustExecC(t, sb, x.expand(q))
			}
			q := x.expand(c.q)
			_, err := rtxaAll(ctx, sb, q)
			if got := rtdbOutcome(err); c.outcome != "" && !strings.HasPrefix(got, x.expand(c.outcome)) {
				t.Errorf("%s: %s, want %s", q, got, x.expand(c.outcome))
			}
			if c.probe != "" {
				_, _ = sb.ExecContext(ctx, "SET NAMES utf8mb4")
				got, err := rtxaAll(ctx, sb, x.expand(c.probe))
				if err != nil {
					got = mysqlErr(err)
				}
				if want := x.expand(c.want); want != "" && strings.TrimSuffix(got, "|\n") != want {
					t.Errorf("%s, then %s: %q, want %q", q, x.expand(c.probe), got, want)
				}
			}
			x.check(t, q)
		}
	})
}

// rtdbFidelity are statements that change nothing on production, whose
// answer in a sandbox must be the server's on a direct connection of the
// same account (number, SQLSTATE and message) — but where the sandbox acts
// as a server on which the account may create and drop databases (least:
// the least-privilege account's 1044 is not the sandbox's answer), and
// where it answers CREATE DATABASE of information_schema with 1007, as for
// the other schemas of the server (any: the server's 1044 names the
// upstream account).
var rtdbFidelity = []struct{ q, differs string }{
	{q: "CREATE DATABASE `l" + strings.Repeat("y", 64) + "`"},
	{q: "DROP DATABASE `l" + strings.Repeat("y", 64) + "`"},
	{q: "ALTER DATABASE `l" + strings.Repeat("y", 64) + "` CHARACTER SET latin1"},
	{q: "CREATE DATABASE `" + strings.Repeat("д", 65) + "`", differs: "message"},
	{q: "USE `l" + strings.Repeat("y", 64) + "`"},
	{q: "CREATE DATABASE `rtq_$A `"},
	{q: "CREATE DATABASE ``"},
	{q: "DROP DATABASE IF EXISTS ``"},
	{q: "USE nosuch_$A"},
	{q: "DROP DATABASE nosuch_$A", differs: "least"},
	{q: "ALTER DATABASE nosuch_$A CHARACTER SET latin1", differs: "least"},
	{q: "SHOW CREATE DATABASE nosuch_$A"},
	{q: "CREATE DATABASE $P", differs: "least"},
	{q: "CREATE DATABASE information_schema", differs: "any"},
	{q: "CREATE DATABASE rtq_$A CHARACTER SET nosuchset"},
	{q: "CREATE DATABASE rtq_$A COLLATE latin1_bin CHARACTER SET utf8mb4"},
	{q: "ALTER DATABASE CHARACTER SET latin1"},
	{q: "DROP DATABASE"},
}

// TestRTDBFidelity compares the sandbox's answers with a direct
// connection's (the ALL PRIVILEGES account as root, the least-privilege one
// as itself).
func TestRTDBFidelity(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "fi", func(t *testing.T, x *rtdbFix) {
		ctx := context.Background()
		dsn := x.e.prod.DSN("")
		if x.acct.short() == "least" {
			dsn = fmt.Sprintf("%s:%s@tcp(%s)/", sandboxUser, sandboxPassword, x.e.prod.Addr)
		}
		for i, c := range rtdbFidelity {
			q := x.expand(c.q)
			sb := x.sandbox(t, fmt.Sprintf("rtfi%d", i), "")
			direct := conn(t, openDB(t, dsn))
			_, derr := direct.ExecContext(ctx, q)
			if derr == nil && strings.HasPrefix(q, "CREATE DATABASE") {
				_, _ = direct.ExecContext(ctx, "DROP DATABASE "+strings.TrimPrefix(q, "CREATE DATABASE "))
				t.Fatalf("%s made a database on production", q)
			}
			_, serr := sb.ExecContext(ctx, q)
			d, s := rtdbOutcome(derr), rtdbOutcome(serr)
			if c.differs == "message" {
				// The server cuts a long name short in its message.
				d, s = d[:min(len(d), 13)], s[:min(len(s), 13)]
			}
			if d != s && c.differs != "any" && c.differs != x.acct.short() {
				t.Errorf("%s: sandbox %s, direct %s", q, s, d)
			}
			x.check(t, q)
		}
	})
}

// TestRTDBIsolation: a sandbox's databases are its alone. Another sandbox
// of the same user, root on production and production's views do not see
// them; names that look like the proxy's or another sandbox's schemas
// reach none of them; the server's messages and DATABASE() never tell a
// schema's physical name.
func TestRTDBIsolation(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "is", func(t *testing.T, x *rtdbFix) {
		ctx := context.Background()
		a, b := x.sandbox(t, "rtisa", x.prodDB), x.sandbox(t, "rtisb", x.prodDB)
		own := "rtio_" + x.acct.short()
		mustExecC(t, a, "CREATE DATABASE "+own)
		mustExecC(t, a, "CREATE TABLE "+own+".t (id INT PRIMARY KEY, v VARCHAR(20))")
		mustExecC(t, a, "INSERT INTO "+own+".t VALUES (1, 'mine')")
		phys := queryString(t, x.root, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\_sqlfork\\_%\\_"+own+"'")
		if phys == "" {
			t.Fatalf("no schema for %s", own)
		}
		suffix := strings.TrimPrefix(phys, "_sqlfork_") // <id>_<own>
		for q, want := range map[string]string{
			"USE " + own:                              "",
			"SELECT * FROM " + own + ".t":             "114",
			"DROP DATABASE " + own:                    "1008 (HY000)",
			"USE `" + phys + "`":                      "1044 (42000)",
			"SELECT * FROM `" + phys + "`.t":          "1044 (42000)",
			"DROP DATABASE `" + phys + "`":            "1044 (42000)",
			"SELECT * FROM `_sqlfork_meta`.tables":    "1044 (42000)",
			"CREATE DATABASE `" + suffix + "`":        "ok",
			"CREATE DATABASE `" + phys[1:] + "`":      "ok",
			"CREATE DATABASE `sqlfork_meta`":          "ok",
			"SELECT COUNT(*) FROM `" + suffix + "`.t": "114",
		} {
			_, err := b.ExecContext(ctx, q)
			if got := rtdbOutcome(err); want == "" && !strings.HasPrefix(got, "1049") && !strings.HasPrefix(got, "1044") || want != "" && !strings.HasPrefix(got, want) {
				t.Errorf("other sandbox: %s: %s, want %s", q, got, cmpOr(want, "1049 or 1044"))
			}
		}
		wantString(t, a, "SELECT GROUP_CONCAT(v) FROM "+own+".t", "mine", "the sandbox's own table after the other's attempts: %s")
		for _, c := range []*sql.Conn{b, conn(t, openDB(t, x.acct.dsn("", x.prodDB)))} {
			if got := dbNames(t, c); strings.Contains(","+got+",", ","+own+",") || strings.Contains(got, "_sqlfork") {
				t.Errorf("SHOW DATABASES elsewhere lists the sandbox's database or a schema: %s", got)
			}
		}
		if got := dbNames(t, x.root); strings.Contains(","+got+",", ","+own+",") {
			t.Errorf("root's SHOW DATABASES lists %s: %s", own, got)
		}
		// Told back: DATABASE() everywhere, the server's messages.
		mustExecC(t, a, "USE "+own)
		mustExecC(t, a, "CREATE PROCEDURE pd() SELECT DATABASE()")
		for q, want := range map[string]string{
			"SELECT DATABASE()":                        own,
			"SELECT CONCAT(SCHEMA(), '/', DATABASE())": own + "/" + own,
			"CALL pd()":            own,
			"SELECT nosuchfunc()":  "1305 (42000) FUNCTION " + own + ".nosuchfunc does not exist",
			"SELECT * FROM nosuch": "1146 (42S02) Table '" + own + ".nosuch' doesn't exist",
			"CALL nosuchproc()":    "1305 (42000) PROCEDURE " + own + ".nosuchproc does not exist",
		} {
			got, err := rtxaAll(ctx, a, q)
			if err != nil {
				got = mysqlErr(err)
			}
			if got = strings.TrimSuffix(got, "|\n"); got != want {
				t.Errorf("%s in %s: %q, want %q", q, own, got, want)
			}
		}
	})
}

// cmpOr is a, or b when a is empty.
func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// rtdbSchemas are the schemas on the server for the sandbox's database db.
func rtdbSchemas(t *testing.T, root *sql.DB, db string) []string {
	t.Helper()
	return column(t, root, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '\\_sqlfork\\_%\\_"+db+"'")
}

// TestRTDBSessions: sessions survive their database's going: DROP DATABASE
// of the current one, USE and COM_INIT_DB of a dropped one, COM_RESET_
// CONNECTION and COM_CHANGE_USER in one of the sandbox's own, a login
// into a named sandbox whose database went.
func TestRTDBSessions(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "se", func(t *testing.T, x *rtdbFix) {
		ctx := context.Background()
		own, tag := "rtso_"+x.acct.short(), "rtse-"+x.acct.short()
		sb := conn(t, openDB(t, x.acct.dsn(tag, x.prodDB)))
		t.Cleanup(func() { _, _ = sb.ExecContext(ctx, "SANDBOX DISCARD") })
		mustExecC(t, sb, "CREATE DATABASE "+own)
		mustExecC(t, sb, "CREATE TABLE "+own+".t (id INT)")
		mustExecC(t, sb, "INSERT INTO "+own+".t VALUES (1)")

		r := dialRaw(t, x.acct.h.addr, tagged(x.acct.user, tag), x.acct.password, own)
		if got := r.scalar("SELECT CONCAT(DATABASE(), ':', COUNT(*)) FROM t"); got != own+":1" {
			t.Errorf("login into %s: %s", own, got)
		}
		r.send(0x1F) // COM_RESET_CONNECTION
		r.expectOK()
		if got := r.scalar("SELECT CONCAT(DATABASE(), ':', COUNT(*)) FROM t"); got != own+":1" {
			t.Errorf("after COM_RESET_CONNECTION: %s", got)
		}
		if p := r.changeUser(tagged(x.acct.user, tag), x.acct.password, own); p[0] == 0xFF {
			// Known (TestRTDBKnownChangeUser): refused, but cleanly.
			if code := int(p[1]) | int(p[2])<<8; code != 1049 && code != 1044 {
				t.Errorf("COM_CHANGE_USER into %s: %q", own, p)
			}
		} else if got := r.scalar("SELECT CONCAT(DATABASE(), ':', COUNT(*)) FROM t"); got != own+":1" {
			t.Errorf("after COM_CHANGE_USER into %s: %s", own, got)
		}

		mustExecC(t, sb, "USE "+own)
		mustExecC(t, sb, "DROP DATABASE "+own)
		wantString(t, sb, "SELECT DATABASE() IS NULL", "1", "DATABASE() IS NULL after dropping the current database: %s")
		wantErr(t, sb, "CREATE TABLE t2 (id INT)", "1046 (3D000) No database selected")
		if _, err := sb.ExecContext(ctx, "USE "+own); !strings.HasPrefix(mysqlErr(err), "1049") && !strings.HasPrefix(mysqlErr(err), "1044") {
			t.Errorf("USE of the dropped %s: %s", own, mysqlErr(err))
		}
		if len(rtdbSchemas(t, x.root, own)) != 0 {
			t.Errorf("the schema of the dropped %s is left", own)
		}
		r2 := dialRaw(t, x.acct.h.addr, tagged(x.acct.user, tag), x.acct.password, x.prodDB)
		if err := r2.c.UseDB(own); err == nil || !strings.Contains(err.Error(), "1049") && !strings.Contains(err.Error(), "1044") {
			t.Errorf("COM_INIT_DB of the dropped %s: %v", own, err)
		}
		if got := r2.scalar("SELECT COUNT(*) FROM keep"); got != "2" {
			t.Errorf("the session after a refused COM_INIT_DB: %s", got)
		}
		pool := openDB(t, x.acct.dsn(tag, own))
		if err := pool.PingContext(ctx); err == nil || !strings.Contains(err.Error(), "1049") && !strings.Contains(err.Error(), "1044") {
			t.Errorf("login into the named sandbox with its dropped database: %v", err)
		}
		// Production's database dropped and made again: USE of it reaches
		// the sandbox's empty one.
		mustExecC(t, sb, "DROP DATABASE "+x.prodDB)
		mustExecC(t, sb, "CREATE DATABASE "+x.prodDB)
		mustExecC(t, sb, "USE "+x.prodDB)
		wantErr(t, sb, "SELECT * FROM keep", "1146 (42S02) Table '"+x.prodDB+".keep' doesn't exist")
		wantString(t, sb, "SELECT COUNT(*) FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = DATABASE()", "0",
			"production's routines listed in the database made again: %s")
	})
}

// TestRTDBReview: DIFF, EXPORT and PROMOTE carry hostile database names
// quoted (PROMOTE by the ALL PRIVILEGES account makes exactly them on
// production), PROMOTE needs the user's own CREATE, and RESET and DISCARD
// leave no schema of the sandbox's databases.
func TestRTDBReview(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "rv", func(t *testing.T, x *rtdbFix) {
		ctx := context.Background()
		s := x.acct.short()
		names := []string{"rtv`b_" + s, "rtv\nx_" + s, "rtv*/;d_" + s, "rtv'q_" + s, "rtv\\e_" + s, "rtv\"; DROP DATABASE " + x.prodDB + "; --_" + s}
		for _, n := range names {
			t.Cleanup(func() { _, _ = x.root.Exec("DROP DATABASE IF EXISTS " + rtdbQuote(n)) })
		}
		sb := x.sandbox(t, "rtrv", x.prodDB)
		for _, n := range names {
			mustExecC(t, sb, "CREATE DATABASE "+rtdbQuote(n))
			mustExecC(t, sb, "CREATE TABLE "+rtdbQuote(n)+".`t` (id INT)")
		}
		text := strings.Join(sandboxExport(t, sb, "SANDBOX EXPORT"), ";\n")
		for _, n := range names {
			if !strings.Contains(text, "CREATE DATABASE "+rtdbQuote(n)+" ") {
				t.Errorf("EXPORT does not make %q quoted:\n%s", n, text)
			}
		}
		_, err := sb.ExecContext(ctx, "SANDBOX PROMOTE")
		if s == "least" {
			if !strings.HasPrefix(mysqlErr(err), "1044") && !strings.HasPrefix(mysqlErr(err), "1142") {
				t.Errorf("PROMOTE of CREATE DATABASE by an account without CREATE: %s", mysqlErr(err))
			}
		} else if err != nil {
			t.Fatalf("PROMOTE: %s", mysqlErr(err))
		}
		for _, n := range names {
			has := queryString(t, x.root, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+rtdbString(n)+" AND TABLE_NAME = 't'")
			if want := map[bool]string{true: "0", false: "1"}[s == "least"]; has != want {
				t.Errorf("production has %s of %q's table after the promote, want %s", has, n, want)
			}
			_, _ = x.root.Exec("DROP DATABASE IF EXISTS " + rtdbQuote(n))
		}
		x.check(t, "the promote")

		sb2 := x.sandbox(t, "rtrv2", x.prodDB)
		mustExecC(t, sb2, "CREATE DATABASE rtvr_"+s)
		mustExecC(t, sb2, "CREATE TABLE rtvr_"+s+".t (id INT)")
		mustExecC(t, sb2, "SANDBOX RESET")
		if got := rtdbSchemas(t, x.root, "rtvr_"+s); len(got) != 0 {
			t.Errorf("schemas left after SANDBOX RESET: %v", got)
		}
		wantErr(t, sb2, "SELECT * FROM rtvr_"+s+".t", "114")
		mustExecC(t, sb2, "CREATE DATABASE rtvr_"+s)
		mustExecC(t, sb2, "SANDBOX DISCARD")
		if got := rtdbSchemas(t, x.root, "rtvr_"+s); len(got) != 0 {
			t.Errorf("schemas left after SANDBOX DISCARD: %v", got)
		}
	})
}

// rtdbQuote is name backquoted.
func rtdbQuote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// rtdbString is s as a string literal.
func rtdbString(s string) string {
	return "'" + strings.NewReplacer("\\", "\\\\", "'", "''").Replace(s) + "'"
}

// TestRTDBRecreatedRoutines: a database the sandbox dropped and made again
// holds none of production's routines (information_schema lists none), and
// a CALL of one of production's procedures in it gets the server's 1305,
// as on a copy: no copy of production's is made there.
func TestRTDBRecreatedRoutines(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "kr", func(t *testing.T, x *rtdbFix) {
		sb := x.sandbox(t, "rtkr", x.prodDB)
		mustExecC(t, sb, "DROP DATABASE "+x.prodDB)
		mustExecC(t, sb, "CREATE DATABASE "+x.prodDB)
		mustExecC(t, sb, "USE "+x.prodDB)
		wantErr(t, sb, "CALL bump()", "1305 (42000) PROCEDURE "+x.prodDB+".bump does not exist")
	})
}

// TestRTDBChangeUser: COM_CHANGE_USER into a named sandbox naming one of
// its own databases makes that database current, as COM_INIT_DB and a
// login naming it do.
func TestRTDBChangeUser(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "kc", func(t *testing.T, x *rtdbFix) {
		own, tag := "rtkc_"+x.acct.short(), "rtkc-"+x.acct.short()
		sb := conn(t, openDB(t, x.acct.dsn(tag, x.prodDB)))
		mustExecC(t, sb, "CREATE DATABASE "+own)
		r := dialRaw(t, x.acct.h.addr, tagged(x.acct.user, tag), x.acct.password, x.prodDB)
		if p := r.changeUser(tagged(x.acct.user, tag), x.acct.password, own); p[0] != 0 {
			t.Fatalf("COM_CHANGE_USER into %s: %q", own, p)
		}
		if got := r.scalar("SELECT DATABASE()"); got != own {
			t.Errorf("DATABASE() after COM_CHANGE_USER: %s", got)
		}
	})
}

// TestRTDBOwnOnly: names in a database the sandbox made that the engine
// cannot place in the text (a name in sjis) are sent as written
// (rewrite.OwnNames), which reaches no table only while production has no
// database of that name. Once production has one (a DBA, another
// sandbox's promote), the next reconciliation marks the sandbox's as made
// again over production's (recreated): every name in it is mapped, so the
// sandbox never reads production's table there, and writes are refused.
func TestRTDBOwnOnly(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "ko", func(t *testing.T, x *rtdbFix) {
		ctx := context.Background()
		db := "rtko_" + x.acct.short()
		t.Cleanup(func() { _, _ = x.root.Exec("DROP DATABASE IF EXISTS " + db) })
		sb := x.sandbox(t, "rtko", "")
		mustExecC(t, sb, "CREATE DATABASE "+db)
		setUp(t, x.root, []string{"CREATE DATABASE " + db, "CREATE TABLE " + db + ".`ｱ` (v VARCHAR(20))",
			"INSERT INTO " + db + ".`ｱ` VALUES ('production')", "GRANT SELECT ON " + db + ".* TO '" + sandboxUser + "'@'%'"},
			"REVOKE ALL PRIVILEGES ON "+db+".* FROM '"+sandboxUser+"'@'%'")
		x.before = x.state(t)
		// The next reconciliation marks the sandbox's database as made
		// again over production's.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
			_, rows := queryRows(t, sb, "SANDBOX DIFF SUMMARY")
			if slices.ContainsFunc(rows, func(r []sql.NullString) bool { return r[0].String == db && r[1].String == "database recreated" }) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the sandbox's %s is not marked made again over production's: %v", db, rows)
			}
		}
		mustExecC(t, sb, "SET NAMES sjis")
		got, err := rtxaAll(ctx, sb, "SELECT * FROM "+db+".`\xb1`")
		if err == nil {
			t.Errorf("the sandbox's own %s shows production's table: %q", db, got)
		}
		if _, err := sb.ExecContext(ctx, "DELETE FROM "+db+".`\xb1`"); err == nil {
			t.Errorf("a write of production's table in the sandbox's own %s ran", db)
		}
	})
}

// TestRTDBHashedNames: a database name over 46 characters gets a hashed
// schema (prefix_<id>_<first 33>_<12 hex>), which a 46-character name
// spelled as that shortening has unhashed: CREATE, DROP and ALTER DATABASE
// of the short name are refused (they would answer for, or drop, the long
// one's schema), and the long one's tables stay.
func TestRTDBHashedNames(t *testing.T) {
	e := rtdbEnv(t)
	rtdbEach(t, e, "kh", func(t *testing.T, x *rtdbFix) {
		long := "h" + strings.Repeat("a", 49)
		sum := sha256.Sum256([]byte(long))
		short := long[:33] + "_" + hex.EncodeToString(sum[:])[:12]
		sb := x.sandbox(t, "rtkh", "")
		mustExecC(t, sb, "CREATE DATABASE "+long)
		mustExecC(t, sb, "CREATE TABLE "+long+".t (id INT)")
		wantErr(t, sb, "CREATE DATABASE "+short, "1290 (HY000) sqlfork-proxy: the sandbox keeps database `"+short+"` in the schema")
		wantErr(t, sb, "DROP DATABASE "+short, "1290 (HY000) sqlfork-proxy: the sandbox keeps database `"+short+"` in the schema")
		wantErr(t, sb, "ALTER DATABASE "+short+" CHARACTER SET latin1", "1290 (HY000)")
		wantString(t, sb, "SELECT COUNT(*) FROM "+long+".t", "0", "the long-named database's table after DROP of the short one: %s")
	})
}

// TestRTDBKnownViewDatabase: DATABASE() in a view of a database of the
// sandbox's own is left as written (rewrite.defines) and tells the
// schema's physical name (_sqlfork_<id>_db) where a procedure's tells db.
func TestRTDBKnownViewDatabase(t *testing.T) {
	rtdbKnown(t, "DATABASE() in a view of the sandbox's own database tells the physical schema")
	e := rtdbEnv(t)
	rtdbEach(t, e, "kv", func(t *testing.T, x *rtdbFix) {
		own := "rtkv_" + x.acct.short()
		sb := x.sandbox(t, "rtkv", "")
		mustExecC(t, sb, "CREATE DATABASE "+own)
		mustExecC(t, sb, "USE "+own)
		mustExecC(t, sb, "CREATE VIEW v AS SELECT DATABASE() AS d")
		wantString(t, sb, "SELECT d FROM v", own, "DATABASE() through a view: %s")
	})
}
