package objects

import (
	"errors"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// routine scripts production's routine app.name of kind, defined by
// create (SHOW CREATE's text), and no routine dropped in the sandbox.
func routine(up *sessiontest.Upstream, kind, name, create string) {
	up.On("^SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = '" + kind + "' AND ROUTINE_NAME = '" + name + "' AND ROUTINE_SCHEMA IN \\(.*'app'\\)$").
		Rows(sessiontest.Row("app"))
	up.On("^SHOW CREATE " + kind + " `app`.`" + name + "`$").
		Rows(sessiontest.Row(name, "STRICT_TRANS_TABLES", create, "utf8mb4", "utf8mb4_general_ci", "utf8mb4_general_ci"))
	up.On("^CREATE (FUNCTION|PROCEDURE) ").Affected(0)
	up.On("^SET SESSION ").Affected(0)
}

// noneDropped answers the sandbox's record of dropped routines: none yet.
func noneDropped(up *sessiontest.Upstream) {
	up.On("dropped_routines` WHERE").Fail(1146, "42S02", "Table 'x.dropped_routines' doesn't exist")
}

// TestFunctionCopied: a call of production's stored function copies it
// into the sandbox first — its body checked, its tables forked, its text
// rewritten to them, without its definer —, once; the call then names the
// copy.
func TestFunctionCopied(t *testing.T) {
	r := newRig(t, func(up *sessiontest.Upstream) {
		up.AddFunction("app", "price")
		routine(up, "FUNCTION", "price", "CREATE DEFINER=`root`@`localhost` FUNCTION `price`(x INT) RETURNS INT RETURN x + (SELECT COUNT(*) FROM t)")
		noneDropped(up)
	})
	placed, err := r.p.PlaceFunctions(r.ctx, r.stmt("SELECT price(1), ABS(2), NOW()"))
	if err != nil || !placed {
		t.Fatalf("PlaceFunctions = %v, %v", placed, err)
	}
	if r.kind("t") != sandbox.KindFork || r.h.confined != 1 {
		t.Errorf("t %q, %d definitions checked: want a fork, 1", r.kind("t"), r.h.confined)
	}
	want := "CREATE FUNCTION `" + r.db() + "`.`price`(x INT) RETURNS INT RETURN x + (SELECT COUNT(*) FROM `" + r.db() + "`.`t`)"
	if n := r.up.Count("^" + regexpQuote(want) + "$"); n != 1 {
		t.Errorf("copy made %d times: %q", n, r.up.Matching("^CREATE FUNCTION"))
	}
	if phys, ok, err := r.p.ResolveFunction(rewrite.Func{Name: "price"}, "app"); phys != r.db() || !ok || err != nil {
		t.Errorf("ResolveFunction = %q, %v, %v", phys, ok, err)
	}
	for _, f := range []rewrite.Func{{Name: "abs"}, {Name: "other"}, {Schema: "information_schema", Name: "x"}} {
		if _, ok, _ := r.p.ResolveFunction(f, "app"); ok {
			t.Errorf("ResolveFunction(%+v) placed", f)
		}
	}
	if _, ok, _ := r.p.ResolveFunction(rewrite.Func{Name: "price"}, ""); ok {
		t.Error("placed without a database")
	}
	if _, err := r.p.PlaceFunctions(r.ctx, r.stmt("SELECT app.price(2)")); err != nil {
		t.Fatal(err)
	}
	if n := r.up.Count("^SHOW CREATE FUNCTION"); n != 1 {
		t.Errorf("definition read %d times", n)
	}
	// Hazards: the sandbox's copy runs, so the call is no hazard; a UDF is.
	if why, err := r.p.Hazard(r.ctx, r.analyze("SELECT price(1)"), r.sb); why != "" || err != nil {
		t.Errorf("Hazard = %q, %v", why, err)
	}
}

// TestFunctionRefused: a function whose definition the proxy cannot read,
// or the account may not execute, is not copied.
func TestFunctionRefused(t *testing.T) {
	r := newRig(t, func(up *sessiontest.Upstream) {
		up.AddFunction("app", "price")
		up.On("^SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES").Rows(sessiontest.Row("app"))
		up.On("^SHOW CREATE FUNCTION").Fail(1305, "42000", "FUNCTION app.price does not exist")
		noneDropped(up)
	})
	_, err := r.p.PlaceFunctions(r.ctx, r.stmt("SELECT price(1)"))
	wantRefusal(t, err, 1290, "grant its account SELECT ON mysql.proc")
	r.h.mayExecute = errors.New("no EXECUTE")
	if _, err := r.p.PlaceFunctions(r.ctx, r.stmt("SELECT price(1)")); err == nil || err.Error() != "no EXECUTE" {
		t.Errorf("PlaceFunctions = %v, want the session's refusal", err)
	}
}

// TestProcedureCalled: CALL of production's procedure copies it, with the
// tables its body names forked whole and its functions placed; a
// procedure neither has is left to the server.
func TestProcedureCalled(t *testing.T) {
	r := newRig(t, func(up *sessiontest.Upstream) {
		routine(up, "PROCEDURE", "p", "CREATE DEFINER=`root`@`%` PROCEDURE `p`()\nBEGIN\n  UPDATE u SET t_id = 1;\n  SELECT * FROM information_schema.TABLES;\nEND")
		up.On("^SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'PROCEDURE' AND ROUTINE_NAME = 'nosuch'").Rows()
		noneDropped(up)
	})
	if err := r.p.CheckCall(r.ctx, r.stmt("CALL p()")); err != nil {
		t.Fatal(err)
	}
	if r.kind("u") != sandbox.KindFork || r.h.stops != 2 || r.h.infoViews != 1 {
		t.Errorf("u %q, %d capture stops, %d info views", r.kind("u"), r.h.stops, r.h.infoViews)
	}
	if n := r.up.Count("^CREATE PROCEDURE `" + r.db() + "`.`p`\\(\\)\nBEGIN\n  UPDATE `" + r.db() + "`.`u` SET"); n != 1 {
		t.Errorf("copy made %d times: %q", n, r.up.Matching("^CREATE PROCEDURE"))
	}
	if !r.up.HasSchema(r.db()) {
		t.Error("no sandbox database for the procedure")
	}
	if err := r.p.CheckCall(r.ctx, r.stmt("CALL nosuch()")); err != nil {
		t.Fatal(err)
	}
	if err := r.p.CheckCall(r.ctx, r.engine.Analyze("CALL p()", rewrite.Options{}).Statements[0]); err != nil {
		t.Errorf("CALL without a database: %v", err)
	}
	st := r.stmt("CALL p()")
	if phys, err := r.p.ResolveRoutine(&st); phys != r.db() || err != nil {
		t.Errorf("ResolveRoutine = %q, %v", phys, err)
	}
	st = r.engine.Analyze("CALL p()", rewrite.Options{}).Statements[0]
	_, err := r.p.ResolveRoutine(&st)
	wantRefusal(t, err, 1046, "No database selected")
}

// TestRoutineChanging: DROP of production's function copies it first, then
// records it dropped; SHOW CREATE shows the sandbox's from then on, and
// production's for a name the sandbox never touched.
func TestRoutineChanging(t *testing.T) {
	r := newRig(t, func(up *sessiontest.Upstream) {
		up.AddFunction("app", "price")
		routine(up, "FUNCTION", "price", "CREATE DEFINER=`root`@`localhost` FUNCTION `price`() RETURNS INT RETURN 1")
		up.On("^SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'PROCEDURE'").Rows()
		noneDropped(up)
		up.On("^INSERT IGNORE INTO .*dropped_routines").Affected(1)
	})
	if err := r.p.RoutineChanging(r.ctx, r.stmt("DROP FUNCTION price")); err != nil {
		t.Fatal(err)
	}
	if n := r.up.Count("^INSERT IGNORE INTO .*dropped_routines.* VALUES \\('app', 'price', 'FUNCTION'\\)$"); n != 1 || r.h.infoViews != 1 {
		t.Errorf("drop recorded %d times, %d info views", n, r.h.infoViews)
	}
	st := r.stmt("SHOW CREATE FUNCTION price")
	if err := r.p.ShowsOwnRoutine(r.ctx, st); err != nil {
		t.Fatal(err)
	}
	if phys, err := r.p.ResolveRoutine(&st); phys != r.db() || err != nil {
		t.Errorf("ResolveRoutine = %q, %v", phys, err)
	}
	st = r.stmt("SHOW CREATE PROCEDURE other")
	if err := r.p.ShowsOwnRoutine(r.ctx, st); err != nil {
		t.Fatal(err)
	}
	if phys, err := r.p.ResolveRoutine(&st); phys != "" || err != nil {
		t.Errorf("ResolveRoutine of production's = %q, %v", phys, err)
	}
	if err := r.p.ShowsOwnRoutine(r.ctx, r.engine.Analyze("SHOW CREATE PROCEDURE p", rewrite.Options{}).Statements[0]); err != nil {
		t.Error(err)
	}
	// A procedure neither has: the sandbox's name from now on.
	if err := r.p.RoutineChanging(r.ctx, r.stmt("CREATE PROCEDURE mine() SELECT 1")); err != nil {
		t.Fatal(err)
	}
	if known, own := r.sb.RoutineKnown(routineKey("PROCEDURE", r.db(), "mine")); !known || !own {
		t.Errorf("mine: known %v, own %v", known, own)
	}
}

// TestOwnFunction: a function the sandbox made, production has none of,
// is the sandbox's; a dropped one stays dropped.
func TestOwnFunction(t *testing.T) {
	var r *rig
	r = newRig(t, func(up *sessiontest.Upstream) {
		up.On("^SELECT ROUTINE_SCHEMA FROM information_schema.ROUTINES WHERE ROUTINE_TYPE = 'FUNCTION' AND ROUTINE_NAME = 'gone'").
			Rows(sessiontest.Row("app"))
		up.On("dropped_routines` WHERE").Rows(sessiontest.Row(1))
	})
	r.up.AddFunction(r.db(), "mine")
	r.up.AddFunction("app", "gone")
	placed, err := r.p.PlaceFunctions(r.ctx, r.stmt("SELECT mine(), gone()"))
	if err != nil || !placed {
		t.Fatalf("PlaceFunctions = %v, %v", placed, err)
	}
	if n := r.up.Count("^SHOW CREATE"); n != 0 {
		t.Errorf("%d definitions read", n)
	}
}
