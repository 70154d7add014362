package infoschema

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

func TestOwnConnView(t *testing.T) {
	for _, c := range []struct {
		db, name string
		want     string
		ok       bool
	}{
		{"performance_schema", "session_account_connect_attrs", "session_account_connect_attrs", true},
		{"PERFORMANCE_SCHEMA", "Session_Account_Connect_Attrs", "session_account_connect_attrs", true},
		{"performance_schema", "threads", "", false},
		{"information_schema", "session_account_connect_attrs", "", false},
		{"app", "session_account_connect_attrs", "", false},
	} {
		got, ok := OwnConnView(rewrite.Table{DB: c.db, Name: c.name})
		if got != c.want || ok != c.ok {
			t.Errorf("OwnConnView(%s.%s) = %q, %v; want %q, %v", c.db, c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestOwnConnSQL(t *testing.T) {
	got := OwnConnSQL("_sqlfork_0badcafe", "session_account_connect_attrs")
	want := "CREATE OR REPLACE TEMPORARY TABLE `_sqlfork_0badcafe`.`session_account_connect_attrs` AS SELECT * FROM " +
		"performance_schema.`session_account_connect_attrs` WHERE PROCESSLIST_ID = CONNECTION_ID()"
	if got != want {
		t.Errorf("OwnConnSQL = %q\nwant %q", got, want)
	}
	// A name needing quotes is quoted.
	if got := OwnConnSQL("a`b", "v"); !strings.HasPrefix(got, "CREATE OR REPLACE TEMPORARY TABLE `a``b`.`v`") {
		t.Errorf("OwnConnSQL with a back quote = %q", got)
	}
}

func TestViewName(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"tables", "TABLES", true},
		{"Key_Column_Usage", "KEY_COLUMN_USAGE", true},
		{"SCHEMATA", "SCHEMATA", true},
		{"parameters", "PARAMETERS", true},
		{"processlist", "", false},
		{"engines", "", false}, // safe, but not mirrored
		{"", "", false},
	} {
		got, ok := ViewName(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ViewName(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestComputedColumn(t *testing.T) {
	for _, c := range []struct {
		view, col string
		want      bool
	}{
		{"TABLES", "TABLE_SCHEMA", true},
		{"TABLES", "table_name", true},
		{"TABLES", "ENGINE", false},
		{"STATISTICS", "INDEX_SCHEMA", true},
		{"STATISTICS", "index_name", false},
		{"KEY_COLUMN_USAGE", "REFERENCED_TABLE_NAME", true},
		{"KEY_COLUMN_USAGE", "CONSTRAINT_SCHEMA", true},
		{"ROUTINES", "routine_schema", true},
		{"ROUTINES", "ROUTINE_NAME", false}, // filtered on, not computed
		{"SCHEMATA", "SCHEMA_NAME", true},   // a database the sandbox made is named as it named it
		{"tables", "TABLE_SCHEMA", false},   // the view's name as Views spells it
		{"NO_SUCH_VIEW", "TABLE_SCHEMA", false},
	} {
		if got := ComputedColumn(c.view, c.col); got != c.want {
			t.Errorf("ComputedColumn(%q, %q) = %v, want %v", c.view, c.col, got, c.want)
		}
	}
}

func TestColumnPieces(t *testing.T) {
	for _, c := range []struct {
		name, got, want string
	}{
		{"BinCol", BinCol("t", "TABLE_NAME"), "CONVERT(t.TABLE_NAME USING utf8mb4) COLLATE utf8mb4_bin"},
		{"Mapped character column", Col{Name: "TABLE_NAME", Charset: "utf8mb3", Collation: "utf8mb3_general_ci"}.Mapped("r.tbl", "t.TABLE_NAME"),
			"COALESCE(CONVERT(r.tbl USING utf8mb3) COLLATE utf8mb3_general_ci, t.TABLE_NAME)"},
		{"Mapped other column", Col{Name: "ORDINAL_POSITION"}.Mapped("r.pos", "t.ORDINAL_POSITION"), "COALESCE(r.pos, t.ORDINAL_POSITION)"},
		{"Mapped charset without collation", Col{Charset: "utf8mb3"}.Mapped("a", "b"), "COALESCE(a, b)"},
		{"OrderBy none", OrderBy(nil), ""},
		{"OrderBy one", OrderBy([]string{"TABLE_SCHEMA"}), " ORDER BY `TABLE_SCHEMA`"},
		{"OrderBy several", OrderBy([]string{"TABLE_SCHEMA", "TABLE_NAME", "ORDINAL_POSITION"}),
			" ORDER BY `TABLE_SCHEMA`, `TABLE_NAME`, `ORDINAL_POSITION`"},
		{"ProductionSchema", ProductionSchema("_sqlfork"), "_sqlfork_production"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestProcessListSQL(t *testing.T) {
	for _, c := range []struct {
		pl   ProcessList
		want string
	}{
		{ProcessList{}, "SHOW PROCESSLIST"},
		{ProcessList{Full: true}, "SHOW FULL PROCESSLIST"},
		{ProcessList{Text: "show processlist"}, "show processlist"},
		{ProcessList{Full: true, Text: "SHOW  FULL PROCESSLIST"}, "SHOW  FULL PROCESSLIST"},
	} {
		if got := c.pl.SQL(); got != c.want {
			t.Errorf("%+v.SQL() = %q, want %q", c.pl, got, c.want)
		}
	}
}

func TestUsesAndReadsViews(t *testing.T) {
	e := rewrite.NewEngine(0)
	for _, c := range []struct {
		sql         string
		uses, reads bool
	}{
		{"SELECT * FROM information_schema.TABLES", true, true},
		{"SELECT * FROM INFORMATION_SCHEMA.columns WHERE TABLE_SCHEMA = 'app'", true, true},
		{"SELECT * FROM performance_schema.session_account_connect_attrs", true, false},
		{"SELECT * FROM information_schema.ENGINES", false, false},
		{"SELECT * FROM app.TABLES", false, false},
		{"SELECT 1", false, false},
		{"SELECT 1; SELECT * FROM information_schema.SCHEMATA", true, true},
	} {
		a := e.Analyze(c.sql, rewrite.Options{DB: "app"})
		if got := Uses(a); got != c.uses {
			t.Errorf("Uses(%q) = %v, want %v", c.sql, got, c.uses)
		}
		if got := ReadsViews(a); got != c.reads {
			t.Errorf("ReadsViews(%q) = %v, want %v", c.sql, got, c.reads)
		}
	}
}

func TestProductionResolver(t *testing.T) {
	r := ProductionResolver{Prefix: "_sqlfork"}
	for _, c := range []struct {
		in     rewrite.Table
		want   rewrite.Table
		mapped bool
	}{
		{rewrite.Table{DB: "information_schema", Name: "tables"}, rewrite.Table{DB: "_sqlfork_production", Name: "TABLES"}, true},
		{rewrite.Table{DB: "INFORMATION_SCHEMA", Name: "Routines"}, rewrite.Table{DB: "_sqlfork_production", Name: "ROUTINES"}, true},
		{rewrite.Table{DB: "information_schema", Name: "ENGINES"}, rewrite.Table{DB: "information_schema", Name: "ENGINES"}, false},
		{rewrite.Table{DB: "app", Name: "TABLES"}, rewrite.Table{DB: "app", Name: "TABLES"}, false},
	} {
		got, mapped, err := r.Resolve(c.in, false)
		if err != nil || got != c.want || mapped != c.mapped {
			t.Errorf("Resolve(%v) = %v, %v, %v; want %v, %v", c.in, got, mapped, err, c.want, c.mapped)
		}
	}
}

func TestServerWide(t *testing.T) {
	tbl := func(db, name string) rewrite.Statement {
		return rewrite.Statement{Reads: []rewrite.Table{{DB: db, Name: name}}}
	}
	for _, c := range []struct {
		name string
		st   rewrite.Statement
		want string // a part of the reason; "" for none
	}{
		{"binlog events", rewrite.Statement{Kind: rewrite.KindShowBinlogEvents}, "SHOW BINLOG EVENTS shows what the whole server holds"},
		{"relay log events", rewrite.Statement{Kind: rewrite.KindShowRelaylogEvents}, "SHOW RELAYLOG EVENTS"},
		{"open tables", rewrite.Statement{Kind: rewrite.KindShowOpenTables}, "SHOW OPEN TABLES"},
		{"processlist table", tbl("information_schema", "PROCESSLIST"), "lists every connection of the server"},
		{"performance_schema", tbl("performance_schema", "threads"), "holds what the whole server holds"},
		{"innodb table", tbl("information_schema", "INNODB_TRX"), "holds what the whole server holds"},
		{"table statistics", tbl("information_schema", "table_statistics"), "holds what the whole server holds"},
		{"mysql.general_log", tbl("mysql", "general_log"), "holds what the whole server holds"},
		{"mysql.proc", tbl("MySQL", "PROC"), "holds what the whole server holds"},
		{"unknown information_schema table", tbl("information_schema", "brand_new"), "is not one of the information_schema tables"},
		{"a name the parser could not read", rewrite.Statement{Names: []rewrite.Table{{DB: "mysql", Name: "slow_log"}}}, "holds what"},
		{"mirrored view", tbl("information_schema", "TABLES"), ""},
		{"safe table", tbl("information_schema", "global_variables"), ""},
		{"mysql.user", tbl("mysql", "user"), ""},
		{"production table", tbl("app", "t"), ""},
	} {
		got := ServerWide(c.st)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: ServerWide = %q, want it to hold %q", c.name, got, c.want)
		}
	}
}

func TestOwnConnOnly(t *testing.T) {
	st := rewrite.Statement{Reads: []rewrite.Table{
		{DB: "performance_schema", Name: "session_account_connect_attrs"},
		{DB: "app", Name: "t"},
		{DB: "performance_schema", Name: "threads"},
	}}
	got := OwnConnOnly(st)
	want := []rewrite.Table{{DB: "app", Name: "t"}, {DB: "performance_schema", Name: "threads"}}
	if len(got.Reads) != len(want) || got.Reads[0] != want[0] || got.Reads[1] != want[1] {
		t.Errorf("OwnConnOnly reads = %v, want %v", got.Reads, want)
	}
	if len(st.Reads) != 3 {
		t.Errorf("OwnConnOnly changed its argument: %v", st.Reads)
	}
	// Without own-connection reads, nothing is left out; the statement's
	// own-connection view is no longer server-wide once left out.
	if got := OwnConnOnly(rewrite.Statement{Reads: want}); len(got.Reads) != 2 {
		t.Errorf("OwnConnOnly dropped reads: %v", got.Reads)
	}
	if w := ServerWide(OwnConnOnly(rewrite.Statement{Reads: st.Reads[:1]})); w != "" {
		t.Errorf("own-connection read alone is server-wide: %q", w)
	}
}

func TestVirtual(t *testing.T) {
	for _, c := range []struct {
		db   string
		want bool
	}{
		{"information_schema", true}, {"Information_Schema", true}, {"performance_schema", true},
		{"mysql", false}, {"app", false}, {"", false},
	} {
		if got := Virtual(rewrite.Table{DB: c.db, Name: "x"}); got != c.want {
			t.Errorf("Virtual(%q) = %v, want %v", c.db, got, c.want)
		}
	}
}

func TestRefuseShared(t *testing.T) {
	err := RefuseShared("`performance_schema`.`threads` holds it")
	var r *rewrite.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("RefuseShared = %T %v, want a refusal", err, err)
	}
	if r.Code != wire.ErOptionPreventsStatement || !strings.Contains(r.Message, "`performance_schema`.`threads` holds it, which the sessions of every user") ||
		!strings.Contains(r.Message, "direct connection") {
		t.Errorf("refusal %d %q", r.Code, r.Message)
	}
}

func TestCreateViews(t *testing.T) {
	ctx := context.Background()
	const create = `^CREATE VIEW sandbox\.`
	for _, c := range []struct {
		name    string
		setup   func(up *sessiontest.Upstream)
		wantErr string
		views   int // views created
	}{
		{name: "every view the server has", views: 12},
		{name: "columns unreadable", setup: func(up *sessiontest.Upstream) {
			up.On(`information_schema\.COLUMNS WHERE TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'VIEWS'`).
				Fail(1142, "42000", "SELECT command denied")
		}, wantErr: "columns of information_schema.VIEWS", views: 7},
		{name: "a view the server lacks is skipped", setup: func(up *sessiontest.Upstream) {
			up.On(`TABLE_NAME = 'PARTITIONS'`).Rows()
		}, views: 11},
		{name: "create fails", setup: func(up *sessiontest.Upstream) {
			up.On(`^CREATE VIEW sandbox\.TRIGGERS`).Fail(1050, "42S01", "exists")
		}, wantErr: "create the test's information_schema.TRIGGERS", views: 10}, // the failed one counts
	} {
		t.Run(c.name, func(t *testing.T) {
			// The fake has the information_schema columns of the views the
			// proxy mirrors, less PARAMETERS. Rules answer in the order
			// added: the case's first.
			up := sessiontest.NewUpstream()
			if c.setup != nil {
				c.setup(up)
			}
			up.On(create).Affected(0)
			conn, err := up.Dial(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var seen []View
			var colsOf = map[string][]Col{}
			err = CreateViews(ctx, conn, "the test's", func(v View, cols []Col) string {
				seen = append(seen, v)
				colsOf[v.Name] = cols
				return "CREATE VIEW sandbox." + v.Name
			})
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("CreateViews: %v, want error %q", err, c.wantErr)
			}
			if n := up.Count(`^CREATE VIEW sandbox\.`); n != c.views {
				t.Errorf("%d views created, want %d (seen %d)", n, c.views, len(seen))
			}
			if cols := colsOf["TABLES"]; len(cols) > 0 {
				if cols[0].Name != "TABLE_CATALOG" || cols[1].Name != "TABLE_SCHEMA" {
					t.Errorf("TABLES columns %+v, want them in their order, upper case", cols[:2])
				}
			}
		})
	}
}
