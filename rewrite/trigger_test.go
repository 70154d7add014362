package rewrite

import (
	"cmp"
	"errors"
	"strings"
	"testing"
)

// sandboxTriggers maps the tables t, u and log of every database to
// sb_<db> and places every trigger there, as a sandbox does; a trigger
// named prod_* is production's (left as written).
type sandboxTriggers struct{}

func (sandboxTriggers) Resolve(t Table, _ bool) (Table, bool, error) {
	return inSandbox(t, "t", "u", "log")
}

func (sandboxTriggers) ResolveTrigger(st *Statement) (string, bool, error) {
	if strings.HasPrefix(st.Routine.Name, "prod_") {
		return "", false, nil
	}
	return "sb_" + st.Routine.DB(st.DB), true, nil
}

// TestTriggers: CREATE TRIGGER, DROP TRIGGER and SHOW CREATE TRIGGER are
// read by the engine (the trigger's name, table, timing, event, order and
// body, read like a procedure's with the trigger's database current) and,
// through a resolver that places triggers, rewritten: the name in the
// database it chooses, the table and every table of the body where it maps
// them, the DEFINER clause replaced by CURRENT_USER. Any other resolver
// refuses CREATE and DROP TRIGGER.
func TestTriggers(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, want, kind, writes, reads string }{
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log VALUES (NEW.id)",
			"CREATE TRIGGER `sb_app`.`tr` AFTER INSERT ON `sb_app`.`t` FOR EACH ROW INSERT INTO `sb_app`.`log` VALUES (NEW.id)",
			"CREATE TRIGGER", "app.t,app.log", ""},
		{"create or replace definer = 'root'@'localhost' trigger if not exists app.tr before update on app.t for each row follows other set NEW.a = (select max(a) from u);",
			"create or replace DEFINER = CURRENT_USER trigger if not exists `sb_app`.`tr` before update on `sb_app`.`t` for each row follows other set NEW.a = (select max(a) from `sb_app`.`u`);",
			"CREATE TRIGGER", "app.t", "app.u"},
		// A qualified trigger name: the table and the body are in its
		// database.
		{"CREATE DEFINER=CURRENT_USER() TRIGGER other.tr BEFORE DELETE ON t FOR EACH ROW PRECEDES 'x' BEGIN\n  DELETE FROM u WHERE id = OLD.id;\n  IF OLD.id > 3 THEN INSERT INTO app.log VALUES (1); END IF;\nEND",
			"CREATE DEFINER = CURRENT_USER TRIGGER `sb_other`.`tr` BEFORE DELETE ON `sb_other`.`t` FOR EACH ROW PRECEDES 'x' BEGIN\n  DELETE FROM `sb_other`.`u` WHERE id = OLD.id;\n  IF OLD.id > 3 THEN INSERT INTO `sb_app`.`log` VALUES (1); END IF;\nEND",
			"CREATE TRIGGER", "other.t,other.u,app.log", ""},
		// Comments are the server's blanks; a body that is a syntax error
		// goes as it is, for the server's 1064.
		{"CREATE /* x */ TRIGGER tr AFTER INSERT ON t FOR EACH ROW -- y\n xyzzy",
			"CREATE /* x */ TRIGGER `sb_app`.`tr` AFTER INSERT ON `sb_app`.`t` FOR EACH ROW -- y\n xyzzy", "CREATE TRIGGER", "app.t", ""},
		// JSON_TABLE in a body (sp-cursor): its document's subqueries
		// name tables.
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW FOR x IN (SELECT * FROM json_table(NULL, '$' COLUMNS(a CHAR(1) path '$.*')) tmp) DO set @a=1; END FOR",
			"CREATE TRIGGER `sb_app`.`tr` AFTER INSERT ON `sb_app`.`t` FOR EACH ROW FOR x IN (SELECT * FROM json_table(NULL, '$' COLUMNS(a CHAR(1) path '$.*')) tmp) DO set @a=1; END FOR",
			"CREATE TRIGGER", "app.t", ""},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW INSERT INTO log SELECT a FROM json_table((SELECT j FROM u LIMIT 1), '$[*]' COLUMNS(a INT PATH '$')) AS jt",
			"CREATE TRIGGER `sb_app`.`tr` AFTER INSERT ON `sb_app`.`t` FOR EACH ROW INSERT INTO `sb_app`.`log` SELECT a FROM json_table((SELECT j FROM `sb_app`.`u` LIMIT 1), '$[*]' COLUMNS(a INT PATH '$')) AS jt",
			"CREATE TRIGGER", "app.t,app.log", "app.u"},
		{"DROP TRIGGER IF EXISTS tr", "DROP TRIGGER IF EXISTS `sb_app`.`tr`", "DROP TRIGGER", "", ""},
		{"DROP TRIGGER other.`tr`;", "DROP TRIGGER `sb_other`.`tr`;", "DROP TRIGGER", "", ""},
		{"SHOW CREATE TRIGGER tr", "SHOW CREATE TRIGGER `sb_app`.`tr`", "SHOW CREATE TRIGGER", "", ""},
		{"SHOW CREATE TRIGGER app.prod_tr", "SHOW CREATE TRIGGER app.prod_tr", "SHOW CREATE TRIGGER", "", ""},
	} {
		a := e.Analyze(c.sql, opts)
		st := a.Statements[0]
		if string(st.Kind) != c.kind || st.Trigger == nil || st.Routine == nil {
			t.Errorf("%q: kind %q, trigger %v", c.sql, st.Kind, st.Trigger)
			continue
		}
		if w, r := tables(uniqueTables(st.Writes)), tables(uniqueTables(st.Reads)); w != sortedList(c.writes) || r != sortedList(c.reads) {
			t.Errorf("%q: writes %q reads %q, want %q %q", c.sql, w, r, sortedList(c.writes), sortedList(c.reads))
		}
		res, err := a.Rewrite(sandboxTriggers{})
		wantSQL(t, c.sql, res, err, c.want)
		_, err = a.Rewrite(mapResolver{{DB: "app", Name: "t"}: {DB: "sb_app", Name: "t"}})
		if c.kind != "SHOW CREATE TRIGGER" && (err == nil || !strings.Contains(err.Error(), "acts on a trigger")) {
			t.Errorf("%q without a trigger resolver: %v", c.sql, err)
		}
	}
}

// TestTriggerDetails: what CREATE TRIGGER says of its trigger.
func TestTriggerDetails(t *testing.T) {
	e := NewEngine(0)
	st := e.Analyze("CREATE OR REPLACE DEFINER=`u`@`%` TRIGGER `a b` AFTER UPDATE ON other.t FOR EACH ROW FOLLOWS `x y` SET @n = 1",
		Options{DB: "app", Server: maria1011}).Statements[0]
	tr := st.Trigger
	got := strings.Join([]string{st.Routine.DB(st.DB), st.Routine.Name, tr.Table.String(), tr.Timing, tr.Event, tr.Order, tr.Other, tr.Definer}, "|")
	if want := "app|a b|other.t|AFTER|UPDATE|FOLLOWS|x y|`u`@`%`"; got != want || !tr.OrReplace || tr.IfNotExists {
		t.Errorf("got %s %+v, want %s", got, tr, want)
	}
	// A SHOW CREATE TRIGGER the engine cannot read names no table: as
	// written.
	const odd = "SHOW CREATE TRIGGER tr FROM x"
	if res, err := e.Rewrite(odd, Options{DB: "app", Server: maria1011}, sandboxTriggers{}); err != nil || res.SQL != odd {
		t.Errorf("%q: %v %v", odd, res, err)
	}
}

// TestTriggerCalls: a trigger body's CALL names the procedure where the
// trigger is placed (the sandbox's database for its own).
func TestTriggerCalls(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	res, err := e.Rewrite("CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW CALL p(NEW.a)", opts, sandboxTriggers{})
	if err != nil || !strings.Contains(res.SQL, "FOR EACH ROW CALL `") || strings.Contains(res.SQL, "CALL p(") {
		t.Errorf("%v, %v; want the CALL placed", res, err)
	}
}

// triggerFunctions places triggers as sandboxTriggers does and every
// function in sb_<db>.
type triggerFunctions struct{ sandboxTriggers }

func (triggerFunctions) ResolveFunction(f Func, db string) (string, bool, error) {
	return "sb_" + cmp.Or(f.Schema, db), true, nil
}

// TestTriggerBodyFunctions: a function a trigger's body calls is placed
// once, by the body's statement (the trigger statement, which holds the
// body's calls too, places none: two rewrites of one place once broke the
// text).
func TestTriggerBodyFunctions(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	res, err := e.Rewrite("CREATE TRIGGER tr BEFORE DELETE ON t FOR EACH ROW SET @d = note(CONCAT('del ', OLD.id))", opts, triggerFunctions{})
	if err != nil || strings.Count(res.SQL, "`sb_app`.`note`(") != 1 {
		t.Errorf("%v, %v; want note placed once", res, err)
	}
}

// TestTriggersRefused: trigger statements the engine cannot read, or whose
// body it cannot confine, are refused with the reason.
func TestTriggersRefused(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, refuse string }{
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW SET @a = 1 junk; SELECT 1", "cannot parse the statement SET @a = 1 junk"},
		{`SELECT 1; CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW SET @a = 1\`, "cannot read where this CREATE TRIGGER ends"},
		{"CREATE TRIGGER tr DURING INSERT ON t FOR EACH ROW SET @a = 1", "when this trigger runs"},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR ROW SET @a = 1", "table of this trigger"},
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW FOLLOWS (x) SET @a = 1", "the trigger this one FOLLOWS"},
		{"DROP TRIGGER tr, tr2", "cannot read the name"},
	} {
		_, err := e.Rewrite(c.sql, opts, sandboxTriggers{})
		if err == nil || !strings.Contains(err.Error(), c.refuse) {
			t.Errorf("%q: %v, want a refusal containing %q", c.sql, err, c.refuse)
		}
	}
}

// TestTriggerPieces: CREATE TRIGGER with other statements before or after
// it in one input is split as the server reads it — a body that is one
// statement ends at its ';' — and each piece read as when sent alone.
func TestTriggerPieces(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, want, kinds string }{
		{"create trigger a before insert on t for each row set @a:=1;select 2",
			"create trigger `sb_app`.`a` before insert on `sb_app`.`t` for each row set @a:=1;select 2", "CREATE TRIGGER SELECT"},
		{"DROP TRIGGER IF EXISTS tr; CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW BEGIN INSERT INTO log VALUES (1); DELETE FROM u; END; INSERT INTO t VALUES (1)",
			"DROP TRIGGER IF EXISTS `sb_app`.`tr`; CREATE TRIGGER `sb_app`.`tr` AFTER INSERT ON `sb_app`.`t` FOR EACH ROW BEGIN INSERT INTO `sb_app`.`log` VALUES (1); " +
				"DELETE FROM `sb_app`.`u`; END; INSERT INTO `sb_app`.`t` VALUES (1)", "DROP TRIGGER CREATE TRIGGER INSERT"},
		{"USE other; CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW DELETE FROM u; CREATE TRIGGER tr2 AFTER INSERT ON t FOR EACH ROW SET @b = 2;",
			"USE other; CREATE TRIGGER `sb_other`.`tr` AFTER DELETE ON `sb_other`.`t` FOR EACH ROW DELETE FROM `sb_other`.`u`; " +
				"CREATE TRIGGER `sb_other`.`tr2` AFTER INSERT ON `sb_other`.`t` FOR EACH ROW SET @b = 2;", "USE CREATE TRIGGER CREATE TRIGGER"},
		// Alone, with its ';': read as before.
		{"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW SET @a = 1; ",
			"CREATE TRIGGER `sb_app`.`tr` AFTER INSERT ON `sb_app`.`t` FOR EACH ROW SET @a = 1; ", "CREATE TRIGGER"},
	} {
		wantRewrite(t, e, c.sql, opts, sandboxTriggers{}, c.want, c.kinds)
	}
}

// sortedList is a comma-separated list of tables sorted as uniqueTables
// sorts them.
func sortedList(s string) string {
	if s == "" {
		return ""
	}
	var ts []Table
	for _, n := range strings.Split(s, ",") {
		db, name, _ := strings.Cut(n, ".")
		ts = append(ts, Table{DB: db, Name: name})
	}
	return tables(uniqueTables(ts))
}

// TestShowTriggers: SHOW TRIGGERS is a SHOW the proxy may answer itself
// (Statement.Show), with its database, pattern and condition.
func TestShowTriggers(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	for _, c := range []struct{ sql, db, like, where string }{
		{"SHOW TRIGGERS", "", "", ""},
		{"SHOW TRIGGERS FROM other LIKE 't%'", "other", "t%", ""},
		{"SHOW TRIGGERS IN other WHERE `Trigger` = 'x'", "other", "", "`Trigger` = 'x'"},
	} {
		sh := e.Analyze(c.sql, opts).Statements[0].Show
		if sh == nil || sh.What != "TRIGGERS" || sh.DB != c.db || sh.Where != c.where || (sh.Like == nil) != (c.like == "") ||
			sh.Like != nil && *sh.Like != c.like {
			t.Errorf("%q: %+v", c.sql, sh)
		}
	}
}

// TestTriggerServerCheck: a trigger statement the engine cannot read that
// is its text's one statement — sent alone or held by PREPARE … FROM '…' —
// is refused for the server's own verdict (a syntax error in its body is
// the server's 1064); one after other statements is not (main.parser).
func TestTriggerServerCheck(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	body := `CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW SET @a = 1\`
	for _, c := range []struct {
		sql, checkText string
		check          bool
	}{
		{body, "", true},
		{`PREPARE stmt FROM 'CREATE TRIGGER tr AFTER DELETE ON t FOR EACH ROW SET @a = 1\\'`, body, true},
		{"SELECT 1; " + body, "", false},
	} {
		_, err := e.Rewrite(c.sql, opts, sandboxTriggers{})
		var r *Refusal
		if !errors.As(err, &r) || r.ServerCheck != c.check || r.CheckText != c.checkText {
			t.Errorf("%q: %+v, want ServerCheck %v CheckText %q", c.sql, err, c.check, c.checkText)
		}
	}
}
