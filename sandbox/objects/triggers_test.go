package objects

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// TestForkTrigger: SHOW CREATE TRIGGER of production's trigger is
// production's; DROP TRIGGER forks the table of production's trigger of
// the name; CREATE TRIGGER forks its table and the tables its body names,
// and copies a production view it is on.
func TestForkTrigger(t *testing.T) {
	r := newRig(t, func(up *sessiontest.Upstream) {
		up.AddTable(sessiontest.Table{DB: "app", Name: "x", Triggers: 2})
		views(up)
	})
	st := r.stmt("SHOW CREATE TRIGGER x_trg1")
	if prod, err := r.p.ForkTrigger(r.ctx, st); !prod || err != nil {
		t.Fatalf("ForkTrigger(SHOW) = %v, %v", prod, err)
	}
	if phys, placed, err := r.p.ResolveTrigger(&st, true); phys != "" || placed || err != nil {
		t.Errorf("ResolveTrigger of production's = %q, %v, %v", phys, placed, err)
	}
	if r.kind("x") != "" {
		t.Errorf("SHOW CREATE TRIGGER forked x")
	}
	if prod, err := r.p.ForkTrigger(r.ctx, r.stmt("DROP TRIGGER IF EXISTS x_trg0")); prod || err != nil {
		t.Fatalf("ForkTrigger(DROP) = %v, %v", prod, err)
	}
	if r.kind("x") != sandbox.KindFork {
		t.Errorf("x %q, want a fork", r.kind("x"))
	}
	if prod, _ := r.p.ForkTrigger(r.ctx, st); prod {
		t.Error("the sandbox's copy of the trigger reported production's")
	}
	if phys, placed, err := r.p.ResolveTrigger(&st, false); phys != r.db() || !placed || err != nil {
		t.Errorf("ResolveTrigger = %q, %v, %v", phys, placed, err)
	}
	if _, err := r.p.ForkTrigger(r.ctx, r.stmt("CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO u VALUES (NEW.id, 1)")); err != nil {
		t.Fatal(err)
	}
	if r.kind("t") != sandbox.KindFork || r.kind("u") != sandbox.KindFork || r.h.stops != 1 {
		t.Errorf("t %q, u %q, %d capture stops", r.kind("t"), r.kind("u"), r.h.stops)
	}
	if _, err := r.p.ForkTrigger(r.ctx, r.stmt("CREATE TRIGGER v_bi BEFORE INSERT ON v FOR EACH ROW SET @a = 1")); err != nil {
		t.Fatal(err)
	}
	if r.kind("v") != sandbox.KindView {
		t.Errorf("v %q, want a copy", r.kind("v"))
	}
	// Without a database: the server's 1046.
	st = r.engine.Analyze("DROP TRIGGER x_trg0", rewrite.Options{}).Statements[0]
	_, err := r.p.ForkTrigger(r.ctx, st)
	wantRefusal(t, err, 1046, "No database selected")
	_, _, err = r.p.ResolveTrigger(&st, false)
	wantRefusal(t, err, 1046, "No database selected")
	// The proxy's own databases have no production triggers.
	if tables, err := r.p.productionTriggers(r.ctx, prefix+"_meta", "x"); len(tables) != 0 || err != nil {
		t.Errorf("productionTriggers of the registry = %v, %v", tables, err)
	}
}
