package objects

import (
	"errors"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
)

// views adds app.v, a view of app.t, and app.vv, a view of app.v.
func views(up *sessiontest.Upstream) {
	up.AddView("app", "v", "select `app`.`t`.`id` AS `id` from `app`.`t`")
	up.AddView("app", "vv", "select `app`.`v`.`id` AS `id` from `app`.`v`")
}

// TestViewLazy: a view reading nothing the sandbox holds is production's;
// once a table it reads (through another view too) is forked, the sandbox
// gets copies reading the fork, remade only when their definition changes.
func TestViewLazy(t *testing.T) {
	r := newRig(t, views)
	v, err := r.p.PrepareViews(r.ctx, r.stmt("SELECT * FROM vv"), nil)
	if err != nil || !v.Names[r.names.Key(rewrite.Table{DB: "app", Name: "vv"})] || v.Calls || len(v.Adopt) > 0 {
		t.Fatalf("PrepareViews = %+v, %v", v, err)
	}
	if r.kind("v") != "" || r.kind("vv") != "" {
		t.Errorf("copies made of views reading production: %q %q", r.kind("v"), r.kind("vv"))
	}
	if _, _, err := r.h.Ensure(r.ctx, rewrite.Table{DB: "app", Name: "t"}, forker.Full); err != nil {
		t.Fatal(err)
	}
	if _, err := r.p.PrepareViews(r.ctx, r.stmt("SELECT * FROM vv"), nil); err != nil {
		t.Fatal(err)
	}
	if r.kind("v") != sandbox.KindView || r.kind("vv") != sandbox.KindView {
		t.Fatalf("copies: %q %q, want views", r.kind("v"), r.kind("vv"))
	}
	want := "CREATE OR REPLACE SQL SECURITY INVOKER VIEW `" + r.db() + "`.`v` AS select `" + r.db() + "`.`t`.`id` AS `id` from `" + r.db() + "`.`t`"
	if n := r.up.Count("^" + regexpQuote(want) + "$"); n != 1 {
		t.Errorf("copy of v made %d times; statements %q", n, r.up.Matching("VIEW"))
	}
	// Unchanged: not remade.
	if _, err := r.p.PrepareViews(r.ctx, r.stmt("SELECT * FROM vv"), nil); err != nil {
		t.Fatal(err)
	}
	if n := r.up.Count("^CREATE OR REPLACE .*VIEW"); n != 2 {
		t.Errorf("%d views made, want 2: %q", n, r.up.Matching("VIEW"))
	}
	// SHOW CREATE VIEW reads production's.
	if v, err := r.p.PrepareViews(r.ctx, r.stmt("SHOW CREATE VIEW v"), nil); err != nil || len(v.Names) != 0 {
		t.Errorf("SHOW CREATE VIEW: %+v, %v", v, err)
	}
}

// TestViewForce: a write through a view forks what it reads, then copies
// it; DROP VIEW gets a stand-in copy, which AdoptViews makes the
// sandbox's own view.
func TestViewForce(t *testing.T) {
	r := newRig(t, views)
	v, err := r.p.PrepareViews(r.ctx, r.stmt("UPDATE v SET id = 2"), nil)
	if err != nil || !v.Names[r.names.Key(rewrite.Table{DB: "app", Name: "v"})] {
		t.Fatalf("PrepareViews = %+v, %v", v, err)
	}
	if r.kind("t") != sandbox.KindFork || r.kind("v") != sandbox.KindView {
		t.Errorf("t %q, v %q: want a fork and a copy", r.kind("t"), r.kind("v"))
	}
	v, err = r.p.PrepareViews(r.ctx, r.stmt("DROP VIEW vv"), nil)
	if err != nil || len(v.Adopt) != 1 || v.Adopt[0].Name != "vv" {
		t.Fatalf("DROP VIEW: %+v, %v", v, err)
	}
	if n := r.up.Count("VIEW `" + r.db() + "`.`vv` AS SELECT 1 AS `1`$"); n != 1 {
		t.Errorf("stand-in made %d times: %q", n, r.up.Matching("VIEW"))
	}
	// Held: no second stand-in.
	if _, err := r.p.PrepareViews(r.ctx, r.stmt("CREATE OR REPLACE VIEW vv AS SELECT 2"), nil); err != nil {
		t.Fatal(err)
	}
	if err := r.p.AdoptViews(r.ctx, append(v.Adopt, rewrite.Table{DB: "app", Name: "gone"})); err != nil {
		t.Fatal(err)
	}
	if r.kind("vv") != sandbox.KindCreated {
		t.Errorf("adopted vv: %q, want created", r.kind("vv"))
	}
	// RENAME TABLE of a view: a copy whatever it reads.
	r2 := newRig(t, views)
	if _, err := r2.p.PrepareViews(r2.ctx, r2.stmt("RENAME TABLE v TO w"), nil); err != nil {
		t.Fatal(err)
	}
	if r2.kind("v") != sandbox.KindView {
		t.Errorf("renamed v: %q", r2.kind("v"))
	}
}

// TestViewRefused: views the sandbox cannot copy are refused with the
// reason; a copy the server rejects is the server's 1356 with its cause.
func TestViewRefused(t *testing.T) {
	r := newRig(t, func(up *sessiontest.Upstream) {
		views(up)
		up.AddView("app", "vhidden", "")
		up.AddView("app", "vi", "select `information_schema`.`TABLES`.`TABLE_NAME` AS `n` from `information_schema`.`TABLES`")
		up.AddTable(sessiontest.Table{DB: "app", Name: "seq", Type: "SEQUENCE"})
		up.AddView("app", "vs", "select nextval(`app`.`seq`) AS `n`")
		for i := range 12 {
			up.AddView("app", "deep"+string(rune('a'+i)), "select `x` AS `x` from `app`.`deep"+string(rune('a'+i+1))+"`")
		}
		up.AddTable(sessiontest.Table{DB: "app", Name: "deepm"})
	})
	for sql, msg := range map[string]string{
		"UPDATE vhidden SET x = 1": "grant its account SHOW VIEW",
		"UPDATE vi SET n = 1":      "which a sandbox must not see",
		"UPDATE vs SET n = 1":      "changes `app`.`seq`",
		"UPDATE deepa SET x = 1":   "more than 10 deep",
	} {
		_, err := r.p.PrepareViews(r.ctx, r.stmt(sql), nil)
		wantRefusal(t, err, 1105, msg)
	}
	r.up.On("^CREATE OR REPLACE .*VIEW").Fail(1054, "42S22", "Unknown column 'x' in 'field list'")
	_, err := r.p.PrepareViews(r.ctx, r.stmt("UPDATE vv SET id = 1"), nil)
	wantRefusal(t, err, 1356, "View 'app.vv' references invalid table(s)")
	var vi *viewInvalid
	if !errors.As(err, &vi) {
		t.Fatalf("%v is no viewInvalid", err)
	}
	diags := vi.Diagnostics()
	if len(diags) != 2 || diags[0].Code != 1054 || diags[1].Code != 1356 || !strings.Contains(diags[1].Message, "app.vv") {
		t.Errorf("diagnostics %+v", diags)
	}
	if vi.Unwrap() == nil {
		t.Error("no refusal")
	}
}
