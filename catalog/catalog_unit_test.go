package catalog

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// objectsOn returns the catalog of up, as the session makes it.
func objectsOn(t *testing.T, up *sessiontest.Upstream) *Objects {
	t.Helper()
	reg := registry.New(registry.Config{Prefix: "_sqlfork", SideConnections: 2, ForkQueueTimeout: time.Minute,
		ForkTimeout: time.Minute}, up.Dialer(), zap.NewNop(), nil)
	names := sandbox.Names{Prefix: "_sqlfork", CaseSensitive: true}
	reg.SetNames(names)
	e := rewrite.NewEngine(0)
	return NewObjects(names, reg, e, rewrite.ParseServer(sessiontest.DefaultVersion))
}

// catalogUpstream is production with objects a sandbox cannot hold (those
// session's catalog tests read too, and more).
func catalogUpstream() *sessiontest.Upstream {
	up := sessiontest.NewUpstream()
	up.AddTable(sessiontest.Table{DB: "app", Name: "t", Columns: []sessiontest.Column{{Name: "a"}}})
	up.AddTable(sessiontest.Table{DB: "app", Name: "my", Engine: "MyISAM"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "seq", Type: "SEQUENCE"})
	up.AddHazardObjects()
	up.AddFunction("app", "date") // the name of a keyword call
	up.AddView("app", "v", "select `app`.`t`.`a` AS `a` from `app`.`t`")
	up.AddView("app", "vuu", "select `app`.`vu`.`x` AS `x` from `app`.`vu`")
	up.AddView("app", "vvi", "select `app`.`vi`.`n` AS `n` from `app`.`vi`")
	up.AddView("app", "vn", "select now() AS `n`, abs(-1) AS `a`, nosuch(1) AS `z`")
	up.AddView("performance_schema", "pv", "")
	return up
}

func TestObject(t *testing.T) {
	ctx := context.Background()
	c := objectsOn(t, catalogUpstream())
	for _, tc := range []struct {
		name                string
		kind, engine        string
		hazard, wide, calls string // parts of them; "" none
		view                bool   // a readable definition
	}{
		{name: "t", kind: "BASE TABLE", engine: "InnoDB"},
		{name: "my", kind: "BASE TABLE", engine: "MyISAM"},
		{name: "seq", kind: "SEQUENCE", engine: "InnoDB"},
		{name: "nosuch"},
		{name: "v", kind: "VIEW", view: true},
		{name: "vf", kind: "VIEW", view: true, calls: "the view `app`.`vf` is defined with something the sandbox cannot hold: it calls the stored function app.price"},
		{name: "vf2", kind: "VIEW", view: true, calls: "it calls the stored function `app`.`price`"},
		{name: "vv", kind: "VIEW", view: true, calls: "the view `app`.`vv` is defined with something the sandbox cannot hold: the view `app`.`vf`"},
		{name: "vu", kind: "VIEW", view: true, hazard: "it calls the loadable function (UDF) myudf"},
		{name: "vuu", kind: "VIEW", view: true, hazard: "the view `app`.`vuu` is defined with something the sandbox cannot hold: the view `app`.`vu`"},
		{name: "vi", kind: "VIEW", view: true, wide: "lists what the whole server holds"},
		{name: "vvi", kind: "VIEW", view: true, wide: "the view `app`.`vvi` is defined with something the sandbox cannot hold: the view `app`.`vi`"},
		{name: "vp", kind: "VIEW", view: true, wide: "holds what the whole server holds"},
		{name: "vs", kind: "VIEW", view: true, hazard: "reading the view `app`.`vs` changes `app`.`seq` (a sequence)"},
		{name: "vhidden", kind: "VIEW", hazard: "cannot read the definition of the view `app`.`vhidden` (grant its account SHOW VIEW)"},
		{name: "vbad", kind: "VIEW", view: true, hazard: "cannot analyse the definition of the view `app`.`vbad`"},
		{name: "vn", kind: "VIEW", view: true},
		{name: "deep0", kind: "VIEW", view: true, hazard: "built on views more than 10 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := c.Object(ctx, rewrite.Table{DB: "app", Name: tc.name})
			if err != nil {
				t.Fatal(err)
			}
			if o.Kind != tc.kind || o.Engine != tc.engine && tc.kind != "VIEW" {
				t.Errorf("kind %q engine %q, want %q %q", o.Kind, o.Engine, tc.kind, tc.engine)
			}
			for _, f := range []struct{ what, got, want string }{
				{"hazard", o.Hazard, tc.hazard}, {"wide", o.Wide, tc.wide}, {"calls", o.Calls, tc.calls},
			} {
				if f.want == "" && f.got != "" || !strings.Contains(f.got, f.want) {
					t.Errorf("%s = %q, want %q", f.what, f.got, f.want)
				}
			}
			if (o.View != nil) != tc.view {
				t.Errorf("view definition %+v, want one: %v", o.View, tc.view)
			}
			if o.View != nil && (o.View.Def == "" || o.View.CheckOption != "NONE" || o.View.Algorithm != "UNDEFINED" ||
				o.View.Collation != "utf8mb4_general_ci") {
				t.Errorf("view definition %+v", *o.View)
			}
			if got := c.Calls(ctx, rewrite.Table{DB: "app", Name: tc.name}); got != (tc.calls != "") {
				t.Errorf("Calls = %v, want %v", got, tc.calls != "")
			}
		})
	}
}

// TestObjectViewDepth: views are followed MaxViewDepth deep: deep2 reads
// views down to deep11 (ten of them) and then the table deep12; deep1
// reads one view more.
func TestObjectViewDepth(t *testing.T) {
	for _, tc := range []struct {
		view   string
		hazard bool
	}{{"deep2", false}, {"deep1", true}} {
		c := objectsOn(t, catalogUpstream()) // nothing cached
		o, err := c.Object(context.Background(), rewrite.Table{DB: "app", Name: tc.view})
		if err != nil || (o.Hazard != "") != tc.hazard {
			t.Errorf("%s: hazard %q, %v; want one: %v", tc.view, o.Hazard, err, tc.hazard)
		}
	}
}

// TestObjectTrustedSchema: views of the server's own schemas are never
// hazards, even unreadable.
func TestObjectTrustedSchema(t *testing.T) {
	c := objectsOn(t, catalogUpstream())
	o, err := c.Object(context.Background(), rewrite.Table{DB: "performance_schema", Name: "pv"})
	if err != nil || o.Kind != "VIEW" || o.Hazard != "" || o.Wide != "" || o.View != nil {
		t.Errorf("performance_schema.pv: %+v, %v", o, err)
	}
}

// TestObjectCached: a name is looked up once while its answer is fresh,
// and a failed lookup is not remembered.
func TestObjectCached(t *testing.T) {
	ctx := context.Background()
	up := catalogUpstream()
	c := objectsOn(t, up)
	const tables = `^SELECT TABLE_TYPE, ENGINE FROM information_schema\.TABLES WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 't'$`
	for range 3 {
		if o, err := c.Object(ctx, rewrite.Table{DB: "app", Name: "t"}); err != nil || o.Kind != "BASE TABLE" {
			t.Fatalf("Object: %+v, %v", o, err)
		}
	}
	if n := up.Count(tables); n != 1 {
		t.Errorf("looked up %d times, want 1", n)
	}

	up.On(`TABLE_NAME = 'my'`).Times(1).Fail(1146, "42S02", "gone")
	if _, err := c.Object(ctx, rewrite.Table{DB: "app", Name: "my"}); err == nil || !strings.Contains(err.Error(), "look up app.my") {
		t.Errorf("failed lookup: %v", err)
	}
	if o, err := c.Object(ctx, rewrite.Table{DB: "app", Name: "my"}); err != nil || o.Engine != "MyISAM" {
		t.Errorf("after a failed lookup: %+v, %v", o, err)
	}
	// A view's lookup fails when its definition cannot be read, or a
	// table it reads cannot be looked up.
	up.On(`information_schema\.VIEWS WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 'v'$`).Times(1).Break()
	if _, err := c.Object(ctx, rewrite.Table{DB: "app", Name: "v"}); err == nil {
		t.Error("view lookup with its definition unreadable succeeded")
	}
	up.On(`TABLE_NAME = 'deep12'`).Times(1).Break()
	if _, err := c.Object(ctx, rewrite.Table{DB: "app", Name: "deep9"}); err == nil {
		t.Error("view lookup with a table it reads unreadable succeeded")
	}
	if !c.Calls(ctx, rewrite.Table{DB: "app", Name: "vv"}) {
		t.Error("Calls(vv) = false")
	}
	up.On(`TABLE_NAME = 'broken'$`).Break()
	if !c.Calls(ctx, rewrite.Table{DB: "app", Name: "broken"}) {
		t.Error("Calls on a failed lookup = false, want true (fail closed)")
	}
}

func TestFuncHazard(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		f      rewrite.Func
		db     string
		setup  func(up *sessiontest.Upstream)
		why    string // part of it; "" none
		stored bool
		err    bool
	}{
		{name: "pseudo-schema", f: rewrite.Func{Schema: "mariadb_schema", Name: "trim"}, db: "app"},
		{name: "qualified", f: rewrite.Func{Schema: "app", Name: "price"}, db: "x",
			why: "it calls the stored function app.price, whose statements would read and write production", stored: true},
		{name: "qualified, even if missing", f: rewrite.Func{Schema: "other", Name: "nope"}, db: "app", why: "other.nope", stored: true},
		{name: "native", f: rewrite.Func{Name: "abs"}, db: "app"},
		{name: "keyword written bare", f: rewrite.Func{Name: "count", Bare: true}, db: "app"},
		// (The fake compares routine names case-sensitively; the server
		// does not.)
		{name: "keyword call with a stored function of its name", f: rewrite.Func{Name: "date"}, db: "app",
			why: "it calls DATE(), the name of one of the server's own functions and of the stored function `app`.`date`", stored: true},
		{name: "keyword call without one", f: rewrite.Func{Name: "date"}, db: "other"},
		{name: "keyword call quoted reaches the stored function", f: rewrite.Func{Name: "date", Quoted: true}, db: "app",
			why: "it calls the stored function `app`.`date`", stored: true},
		{name: "loadable", f: rewrite.Func{Name: "MyUDF"}, db: "app", why: "loadable function (UDF) MyUDF"},
		{name: "stored unqualified", f: rewrite.Func{Name: "price"}, db: "app", why: "it calls the stored function `app`.`price`", stored: true},
		{name: "stored in another database", f: rewrite.Func{Name: "price"}, db: "other"},
		{name: "no database", f: rewrite.Func{Name: "price"}, db: ""},
		{name: "nothing of that name", f: rewrite.Func{Name: "nosuch"}, db: "app"},
		{name: "mysql.func unreadable", f: rewrite.Func{Name: "nosuch"}, db: "app",
			setup: func(up *sessiontest.Upstream) {
				up.On(`^SELECT name FROM mysql\.func$`).Fail(1142, "42000", "SELECT command denied")
			}, why: "nosuch(), which the proxy cannot tell from a loadable function (UDF)"},
		{name: "mysql.func lookup broken", f: rewrite.Func{Name: "nosuch"}, db: "app",
			setup: func(up *sessiontest.Upstream) { up.On(`^SELECT name FROM mysql\.func$`).Break() }, err: true},
		{name: "routines lookup broken", f: rewrite.Func{Name: "nosuch"}, db: "app",
			setup: func(up *sessiontest.Upstream) { up.On(`information_schema\.ROUTINES`).Break() }, err: true},
		{name: "routines lookup broken for a keyword call", f: rewrite.Func{Name: "date"}, db: "app",
			setup: func(up *sessiontest.Upstream) { up.On(`information_schema\.ROUTINES`).Break() }, err: true,
			why: "DATE()", stored: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := catalogUpstream()
			if tc.setup != nil {
				tc.setup(up)
			}
			c := objectsOn(t, up)
			why, stored, err := c.FuncHazard(ctx, tc.f, tc.db)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if tc.why == "" && why != "" || !strings.Contains(why, tc.why) || stored != tc.stored {
				t.Errorf("FuncHazard = %q, %v; want %q, %v", why, stored, tc.why, tc.stored)
			}
		})
	}
}

func TestStoredFunctionCache(t *testing.T) {
	ctx := context.Background()
	up := catalogUpstream()
	c := objectsOn(t, up)
	const q = `information_schema\.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION' AND ROUTINE_SCHEMA = 'app' AND ROUTINE_NAME = 'later'`
	for range 2 {
		if found, err := c.StoredFunction(ctx, "app", "later"); err != nil || found {
			t.Fatalf("StoredFunction(app.later) = %v, %v before it exists", found, err)
		}
	}
	up.AddFunction("app", "later")
	if found, _ := c.StoredFunction(ctx, "APP", "LATER"); found {
		t.Error("a fresh answer was not used (names compare in any case)")
	}
	if n := up.Count(q); n != 1 {
		t.Errorf("looked up %d times, want 1", n)
	}
	c.ForgetFunction("App", "Later")
	if found, err := c.StoredFunction(ctx, "app", "later"); err != nil || !found {
		t.Errorf("after ForgetFunction: %v, %v; want it found", found, err)
	}
	// The list of loadable functions is read once too.
	for range 3 {
		if why, err := c.UDFHazard(ctx, rewrite.Func{Name: "myudf"}); err != nil || why == "" {
			t.Fatalf("UDFHazard = %q, %v", why, err)
		}
	}
	if n := up.Count(`^SELECT name FROM mysql\.func$`); n != 1 {
		t.Errorf("mysql.func read %d times, want 1", n)
	}
}

func TestKeywordHazardSeveralDatabases(t *testing.T) {
	c := objectsOn(t, catalogUpstream())
	why, err := c.KeywordHazard(context.Background(), rewrite.Func{Name: "date"}, "other", "app")
	if err != nil || !strings.Contains(why, "`app`.`date`") {
		t.Errorf("KeywordHazard = %q, %v", why, err)
	}
	if why, err := c.KeywordHazard(context.Background(), rewrite.Func{Name: "date"}); why != "" || err != nil {
		t.Errorf("KeywordHazard without databases = %q, %v", why, err)
	}
}

func TestNativeAndKeywordCall(t *testing.T) {
	c := objectsOn(t, sessiontest.NewUpstream())
	for _, tc := range []struct {
		f               rewrite.Func
		native, keyword bool
	}{
		{rewrite.Func{Name: "abs"}, true, false},
		{rewrite.Func{Name: "JSON_EXTRACT"}, true, false},
		{rewrite.Func{Schema: "app", Name: "abs"}, false, false},
		{rewrite.Func{Name: "now", Bare: true}, true, false},
		{rewrite.Func{Name: "now"}, false, false},
		{rewrite.Func{Name: "date"}, false, true},
		{rewrite.Func{Name: "date", Quoted: true}, false, false},
		{rewrite.Func{Schema: "app", Name: "date"}, false, false},
		{rewrite.Func{Name: "nextval"}, false, true},
		{rewrite.Func{Name: "price"}, false, false},
		{rewrite.Func{Name: "avg"}, true, false},                    // spaced too: the lexer's keyword
		{rewrite.Func{Name: "ROW_NUMBER", Bare: true}, true, false}, // written tight
		{rewrite.Func{Name: "avg", Quoted: true}, false, false},     // `avg`(x): a stored or loadable function
		{rewrite.Func{Name: "count"}, false, false},                 // count (x): a stored function's name then
	} {
		if got := c.Native(tc.f); got != tc.native {
			t.Errorf("Native(%+v) = %v, want %v", tc.f, got, tc.native)
		}
		if got := KeywordCall(tc.f); got != tc.keyword {
			t.Errorf("KeywordCall(%+v) = %v, want %v", tc.f, got, tc.keyword)
		}
	}
}

func TestPseudoSchema(t *testing.T) {
	for db, want := range map[string]bool{"mariadb_schema": true, "Oracle_Schema": true, "MAXDB_SCHEMA": true,
		"mysql": false, "sys": false, "": false} {
		if PseudoSchema(db) != want {
			t.Errorf("PseudoSchema(%q) = %v", db, !want)
		}
	}
}

// TestFunctionLists: the lists are copies, upper case, without duplicates,
// and no keyword function is among the natives (an unquoted, spaced call
// of one may reach a stored function).
func TestFunctionLists(t *testing.T) {
	for _, l := range []struct {
		name string
		get  func() []string
	}{{"NativeFunctions", NativeFunctions}, {"KeywordFunctions", KeywordFunctions}} {
		a := l.get()
		if len(a) == 0 {
			t.Fatalf("%s is empty", l.name)
		}
		seen := map[string]bool{}
		for _, n := range a {
			if n != strings.ToUpper(n) || seen[n] {
				t.Errorf("%s: %q not upper case or repeated", l.name, n)
			}
			seen[n] = true
		}
		a[0] = "CHANGED"
		if l.get()[0] == "CHANGED" {
			t.Errorf("%s returns its own slice", l.name)
		}
	}
	natives := map[string]bool{}
	for _, n := range NativeFunctions() {
		natives[n] = true
	}
	for _, k := range KeywordFunctions() {
		if natives[k] {
			t.Errorf("%s is both a native and a keyword function", k)
		}
	}
}

func TestMapsNothing(t *testing.T) {
	for _, in := range []rewrite.Table{{DB: "app", Name: "t"}, {DB: "information_schema", Name: "TABLES"}, {}} {
		for _, write := range []bool{false, true} {
			got, mapped, err := MapsNothing{}.Resolve(in, write)
			if got != in || mapped || err != nil {
				t.Errorf("Resolve(%v, %v) = %v, %v, %v", in, write, got, mapped, err)
			}
		}
	}
	got, ok, err := placesNothing{}.ResolveFunction(rewrite.Func{Schema: "app", Name: "f"}, "app")
	if got != "" || ok || err != nil {
		t.Errorf("placesNothing.ResolveFunction = %q, %v, %v", got, ok, err)
	}
}

func TestTriggersRead(t *testing.T) {
	ctx := context.Background()
	up := sessiontest.NewUpstream()
	up.AddTable(sessiontest.Table{DB: "app", Name: "t"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "log"})
	up.AddTable(sessiontest.Table{DB: "app", Name: "plain", Triggers: 1})
	up.On(`^SELECT TRIGGER_NAME, .* EVENT_OBJECT_TABLE = 't' `).Rows(
		sessiontest.Row("t_ai", "AFTER", "INSERT", "INSERT INTO log (id) SELECT NEW.id FROM cfg",
			"STRICT_TRANS_TABLES,ANSI_QUOTES", "utf8mb4", "utf8mb4_general_ci"),
		sessiontest.Row("t_bu", "BEFORE", "UPDATE", "BEGIN DELETE FROM \"other\".\"gone\" WHERE id = OLD.id; END",
			"ANSI_QUOTES,IGNORE_SPACE,NO_BACKSLASH_ESCAPES", "latin1", "latin1_swedish_ci"))
	conn, err := up.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := Triggers{Engine: rewrite.NewEngine(0), CaseSensitive: true, Server: rewrite.ParseServer(sessiontest.DefaultVersion)}

	trs, err := r.Read(ctx, conn, rewrite.Table{DB: "app", Name: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if len(trs) != 2 || trs[0].Trigger.Name != "t_ai" || trs[1].Trigger.Name != "t_bu" || trs[1].Trigger.Charset != "latin1" {
		t.Fatalf("triggers %+v", trs)
	}
	tables := func(a *rewrite.Analysis) map[string]bool {
		out := map[string]bool{}
		for _, tb := range BodyTables(a) {
			out[tb.DB+"."+tb.Name] = true
		}
		return out
	}
	// Names are qualified with the table's database; ANSI_QUOTES reads
	// "…" as names.
	if got := tables(trs[0].Body); !got["app.log"] || !got["app.cfg"] || len(got) != 2 {
		t.Errorf("tables of t_ai: %v, want app.log and app.cfg", got)
	}
	if got := tables(trs[1].Body); !got["other.gone"] || len(got) != 1 {
		t.Errorf("tables of t_bu: %v, want other.gone", got)
	}
	if n := len(BodyStatements(trs[1].Body)); n != 1 {
		t.Errorf("t_bu body has %d statements, want 1", n)
	}

	// The fake's own triggers (SET NEW.id = NEW.id) name no table.
	trs, err = r.Read(ctx, conn, rewrite.Table{DB: "app", Name: "plain"})
	if err != nil || len(trs) != 1 || trs[0].Trigger.Body != "SET NEW.id = NEW.id" {
		t.Fatalf("plain: %+v, %v", trs, err)
	}
	if got := BodyTables(trs[0].Body); len(got) != 0 {
		t.Errorf("tables of SET NEW.id = NEW.id: %v", got)
	}
	if trs, err := r.Read(ctx, conn, rewrite.Table{DB: "app", Name: "nosuch"}); err != nil || len(trs) != 0 {
		t.Errorf("a table production lacks: %+v, %v", trs, err)
	}
	up.On(`^SELECT TRIGGER_NAME.* EVENT_OBJECT_TABLE = 'log' `).Fail(1142, "42000", "denied")
	if _, err := r.Read(ctx, conn, rewrite.Table{DB: "app", Name: "log"}); err == nil {
		t.Error("Read succeeded with the triggers unreadable")
	}
	// An analysis without routines has no body statements.
	if got := BodyStatements(rewrite.NewEngine(0).Analyze("SELECT 1", rewrite.Options{})); len(got) != 0 {
		t.Errorf("BodyStatements(SELECT 1) = %v", got)
	}
}
