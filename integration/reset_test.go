package integration

import (
	"context"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// resetSchema is the database of the SANDBOX RESET tests: parent and child
// linked by a foreign key, tables alone, one to drop.
const resetSchema = "CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20)) ENGINE=InnoDB;" +
	"CREATE TABLE child (id INT PRIMARY KEY, parent_id INT, v INT, CONSTRAINT fk_parent FOREIGN KEY (parent_id) REFERENCES parent (id)) ENGINE=InnoDB;" +
	"CREATE TABLE solo (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;" +
	"CREATE TABLE other (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;" +
	"CREATE TABLE doomed (id INT PRIMARY KEY) ENGINE=InnoDB;" +
	"INSERT INTO parent VALUES (1, 'a'), (2, 'b'); INSERT INTO child VALUES (1, 1, 10);" +
	"INSERT INTO solo VALUES (1, 1), (2, 2); INSERT INTO other VALUES (1, 1); INSERT INTO doomed VALUES (1);"

// statusOf is the sandbox's state and the tables it holds, as SANDBOX
// STATUS shows them (by column name).
func statusOf(t *testing.T, c rowQuerier) (state string, tables []string) {
	t.Helper()
	cols, rows := queryRows(t, c, "SANDBOX STATUS")
	si, ti := slices.Index(cols, "state"), slices.Index(cols, "table_name")
	if si < 0 || ti < 0 || len(rows) == 0 {
		t.Fatalf("SANDBOX STATUS: columns %v, %d rows", cols, len(rows))
	}
	for _, r := range rows {
		if r[ti].Valid {
			tables = append(tables, r[ti].String)
		}
	}
	slices.Sort(tables)
	return rows[0][si].String, tables
}

// TestSandboxReset: SANDBOX RESET [FOR …] gives a kept, named sandbox's
// tables back to production as it is now — production's changes since the
// fork included —, for its other connection too; FOR one table leaves the
// others' changes, takes the tables foreign keys link to it, answers 1146
// for a table that exists nowhere; the whole reset makes a created table
// disappear and a dropped one reappear, and leaves DIFF empty; the next
// write forks again; the sandbox stays kept; another user may not reset
// it; production is untouched.
func TestSandboxReset(t *testing.T) {
	e := newDiffEnv(t, "explicit", false, func(c *proxy.Config) {
		c.Users = []proxy.User{{Name: "other", Password: sandboxPassword}}
	})
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := "reset_" + acct.short()
			e.database(t, db, resetSchema)
			root := openDB(t, e.prod.DSN(db))
			a := conn(t, openDB(t, acct.dsn("", db)))
			b := conn(t, openDB(t, acct.dsn("", db)))
			mustExecC(t, a, "SANDBOX CREATE "+db+" TTL 2h")
			t.Cleanup(func() { _, _ = a.ExecContext(context.Background(), "SANDBOX DISCARD "+db) })
			mustExecC(t, b, "SANDBOX ATTACH "+db)
			for _, q := range []string{"UPDATE solo SET v = 100 WHERE id = 1", "UPDATE other SET v = 100 WHERE id = 1",
				"UPDATE child SET v = 99 WHERE id = 1", "CREATE TABLE made (id INT PRIMARY KEY)", "DROP TABLE doomed"} {
				mustExecC(t, a, q)
			}
			// Production changes after the forks.
			mustExecDB(t, root, "UPDATE solo SET v = 20 WHERE id = 2")
			mustExecDB(t, root, "INSERT INTO other VALUES (2, 2)")
			prodBefore := strings.Join(tableNames(t, root, db), ",") + ":" + databaseChecksum(t, root, db)
			wantString(t, b, "SELECT v FROM solo WHERE id = 1", "100", "the second connection reads %s before the reset, want the sandbox's 100")

			// Another user may not reset it.
			other := conn(t, openDB(t, acct.h.userDSN("other", db)))
			if _, err := other.ExecContext(context.Background(), "SANDBOX RESET "+db); !strings.Contains(mysqlErr(err), "no sandbox named") {
				t.Errorf("RESET of another user's sandbox: %s, want it refused as unknown", mysqlErr(err))
			}
			// Not in a transaction; not for a table that exists nowhere.
			mustExecC(t, a, "BEGIN")
			if _, err := a.ExecContext(context.Background(), "SANDBOX RESET"); !strings.HasPrefix(mysqlErr(err), "1179") {
				t.Errorf("RESET in a transaction: %s, want 1179", mysqlErr(err))
			}
			mustExecC(t, a, "ROLLBACK")
			if _, err := a.ExecContext(context.Background(), "SANDBOX RESET FOR nosuch"); !strings.HasPrefix(mysqlErr(err), "1146") {
				t.Errorf("RESET FOR a table that exists nowhere: %s, want 1146", mysqlErr(err))
			}

			// FOR one table: it reads production now; the others keep their changes.
			mustExecC(t, a, "SANDBOX RESET FOR solo")
			wantString(t, a, "SELECT GROUP_CONCAT(v ORDER BY id) FROM solo", "1,20", "solo reads %s after RESET FOR solo, want production's 1,20")
			wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM solo", "1,20", "the second connection reads %s after RESET FOR solo, want 1,20")
			wantString(t, a, "SELECT v FROM other WHERE id = 1", "100", "other reads %s after RESET FOR solo, want the sandbox's 100")
			if d := diffDetail(t, a, "SANDBOX DIFF FOR solo"); len(d) != 0 {
				t.Errorf("DIFF FOR solo after its reset: %v", d)
			}
			_, held := statusOf(t, a)
			if want := []string{db + ".child", db + ".doomed", db + ".made", db + ".other", db + ".parent"}; !slices.Equal(held, want) {
				t.Errorf("STATUS after RESET FOR solo lists %v, want %v", held, want)
			}

			// FOR a table linked by a foreign key: its parent goes with it; a
			// table production has and the sandbox does not is no error.
			mustExecC(t, a, "SANDBOX RESET FOR "+db+".child, solo")
			_, held = statusOf(t, a)
			if want := []string{db + ".doomed", db + ".made", db + ".other"}; !slices.Equal(held, want) {
				t.Errorf("STATUS after RESET FOR child lists %v, want %v (parent reset with child)", held, want)
			}
			wantString(t, a, "SELECT v FROM child WHERE id = 1", "10", "child reads %s after its reset, want production's 10")

			// The whole sandbox.
			mustExecC(t, a, "SANDBOX RESET")
			state, held := statusOf(t, a)
			if state != "kept" || len(held) != 0 {
				t.Errorf("STATUS after RESET: state %s, tables %v; want kept, none", state, held)
			}
			if _, err := a.ExecContext(context.Background(), "SELECT * FROM made"); !strings.HasPrefix(mysqlErr(err), "1146") {
				t.Errorf("a table the sandbox made, after RESET: %s, want 1146", mysqlErr(err))
			}
			wantString(t, a, "SELECT COUNT(*) FROM doomed", "1", "the dropped table has %s rows after RESET, want production's 1")
			wantString(t, b, "SELECT GROUP_CONCAT(v ORDER BY id) FROM other", "1,2", "the second connection reads other %s after RESET, want 1,2")
			if d := diffDetail(t, a, "SANDBOX DIFF"); len(d) != 0 {
				t.Errorf("DIFF after RESET: %v", d)
			}

			// The next write forks again.
			mustExecC(t, b, "UPDATE solo SET v = 7 WHERE id = 1")
			wantString(t, a, "SELECT v FROM solo WHERE id = 1", "7", "solo reads %s after a write following the reset, want 7")
			if d := diffDetail(t, a, "SANDBOX DIFF"); len(d) != 1 || d[0].op != "update" {
				t.Errorf("DIFF after a write following the reset: %v, want one update", d)
			}
			if after := strings.Join(tableNames(t, root, db), ",") + ":" + databaseChecksum(t, root, db); after != prodBefore {
				t.Errorf("production changed: %s, was %s", after, prodBefore)
			}
		})
	}
}

// TestSandboxResetAdminAPI: POST /api/v1/sandboxes/{name}/reset resets the
// tables named (and says which others foreign keys took with them), or the
// whole sandbox; an unknown table is a 409, an unknown sandbox a 404.
func TestSandboxResetAdminAPI(t *testing.T) {
	e := newDiffEnv(t, "explicit", false, nil)
	for _, acct := range e.accts {
		t.Run(acct.name, func(t *testing.T) {
			db := "resetapi_" + acct.short()
			e.database(t, db, resetSchema)
			a := conn(t, openDB(t, acct.dsn("", db)))
			mustExecC(t, a, "SANDBOX CREATE "+db+" TTL 2h")
			t.Cleanup(func() { _, _ = a.ExecContext(context.Background(), "SANDBOX DISCARD "+db) })
			mustExecC(t, a, "UPDATE child SET v = 99 WHERE id = 1")
			mustExecC(t, a, "UPDATE solo SET v = 100 WHERE id = 1")
			srv := httptest.NewServer(adminapi.NewHandler(adminapi.Options{Sandboxes: acct.h.srv.Admin(), Token: "tok"}))
			t.Cleanup(srv.Close)
			api := &adminapi.Client{BaseURL: srv.URL, Token: "tok"}
			ctx := context.Background()

			if _, err := api.Reset(ctx, db, []string{db + ".nosuch"}); !errors.Is(err, adminapi.ErrConflict) || !strings.Contains(err.Error(), "doesn't exist") {
				t.Errorf("reset of a table that exists nowhere: %v, want a 409 saying it does not exist", err)
			}
			if _, err := api.Reset(ctx, "nosuchbox", nil); !errors.Is(err, adminapi.ErrNotFound) {
				t.Errorf("reset of an unknown sandbox: %v, want a 404", err)
			}
			r, err := api.Reset(ctx, db, []string{db + ".child"})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Tables, []string{db + ".child", db + ".parent"}) || !slices.Equal(r.Linked, []string{db + ".parent"}) ||
				!strings.Contains(r.Info, "foreign keys or triggers link them: "+db+".parent") {
				t.Errorf("reset of child: %+v, want child and parent, parent linked", r)
			}
			wantString(t, a, "SELECT v FROM child WHERE id = 1", "10", "child reads %s after the API's reset, want production's 10")
			wantString(t, a, "SELECT v FROM solo WHERE id = 1", "100", "solo reads %s after the API reset child, want the sandbox's 100")
			if r, err = api.Reset(ctx, db, nil); err != nil || !slices.Equal(r.Tables, []string{db + ".solo"}) {
				t.Errorf("reset of the whole sandbox: %+v, %v; want solo reset", r, err)
			}
			wantString(t, a, "SELECT v FROM solo WHERE id = 1", "1", "solo reads %s after the API's reset, want production's 1")
			if d := diffDetail(t, a, "SANDBOX DIFF"); len(d) != 0 {
				t.Errorf("DIFF after the API's reset: %v", d)
			}
		})
	}
}
