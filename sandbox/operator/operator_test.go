package operator

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

func ttl(d time.Duration) *time.Duration { return &d }

// TestMissingSandbox: every request by name of a sandbox neither this
// process nor the registry has is ErrNoSandbox, named.
func TestMissingSandbox(t *testing.T) {
	e := newEnv(t, registry.Limits{MaxTTL: 48 * time.Hour, DefaultTTL: time.Hour})
	e.open("ops", "alice")
	ctx := e.ctx
	for name, call := range map[string]func() error{
		"show":         func() error { _, err := e.op.Show(ctx, "x"); return err },
		"keep":         func() error { _, err := e.op.Keep(ctx, "x", nil); return err },
		"keep for 1h":  func() error { _, err := e.op.Keep(ctx, "x", ttl(time.Hour)); return err },
		"discard":      func() error { return e.op.Discard(ctx, "x") },
		"diff":         func() error { _, err := e.op.Diff(ctx, "x", true, nil); return err },
		"diff of one":  func() error { _, err := e.op.Diff(ctx, "x", false, &rewrite.Table{DB: "app", Name: "t"}); return err },
		"export":       func() error { _, err := e.op.Export(ctx, "x"); return err },
		"promote":      func() error { _, err := e.op.Promote(ctx, "x", ""); return err },
		"promote ours": func() error { _, err := e.op.Promote(ctx, "x", "ours"); return err },
		"dry run":      func() error { _, err := e.op.PromoteWith(ctx, "x", review.PromoteOptions{DryRun: true}); return err },
	} {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !errors.Is(err, ErrNoSandbox) || err.Error() != `no such sandbox: "x"` {
				t.Errorf("error %v, want ErrNoSandbox", err)
			}
			if errors.Is(err, ErrRefused) || errors.Is(err, ErrForbidden) {
				t.Errorf("error %v marked as a refusal", err)
			}
		})
	}
}

// TestLookupFails: a registry that cannot be read is the error, not a
// missing sandbox.
func TestLookupFails(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	e.up.On("^SELECT id, name, owner, kept, created_at, expires_at, last_active, changed_at, promoted_at, clean_at FROM ").Fail(1146, "42S02", "registry gone")
	_, err := e.op.Show(e.ctx, "x")
	if code, _, _, ok := sessiontest.Code(err); !ok || code != 1146 || errors.Is(err, ErrNoSandbox) ||
		!strings.HasPrefix(err.Error(), "read registry: ") {
		t.Errorf("error %v, want the registry's", err)
	}
}

// TestShow: a sandbox with its tables, whoever holds it; one only the
// registry has is read, not taken into this process.
func TestShow(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	sb := e.open("ops", "alice")
	e.entry(sb, "u", sandbox.KindSchema, 50)
	e.entry(sb, "t", sandbox.KindFork, 100)
	e.entry(sb, "d", sandbox.KindDropped, 0)
	in, err := e.op.Show(e.ctx, "ops")
	if err != nil || in.ID != sb.ID || in.Name != "ops" || in.Owner != "alice" || in.State != "active" || in.Connections != 1 ||
		in.TableCount != 2 || in.Bytes != 150 || in.Expires != nil {
		t.Fatalf("Show = %+v, %v", in, err)
	}
	want := []registry.TableInfo{{Table: "app.d", State: "dropped", Rows: 3}, {Table: "app.t", State: "fork", Rows: 3, Bytes: 100},
		{Table: "app.u", State: "schema", Rows: 3, Bytes: 50}}
	if !slices.Equal(in.Tables, want) {
		t.Errorf("tables %+v, want %+v", in.Tables, want)
	}

	p := process(t, e.up, registry.Limits{})
	far := p.open("far", "bob")
	p.entry(far, "t", sandbox.KindFork, 10)
	p.keep(far, time.Hour)
	in, err = e.op.Show(e.ctx, "far")
	if err != nil || in.Owner != "bob" || in.State != "kept" || in.Expires == nil || in.Connections != 0 ||
		len(in.Tables) != 1 || in.Tables[0].Table != "app.t" {
		t.Errorf("Show of another process's sandbox = %+v, %v", in, err)
	}
	if n := len(e.reg.Sandboxes()); n != 1 {
		t.Errorf("this process holds %d sandboxes after Show, want 1 (ops)", n)
	}
}

// TestKeep: a TTL within max-sandbox-ttl (nil: the default TTL; 0: until
// discarded, when there is no limit) keeps the sandbox in memory and in
// the registry; one beyond it is ErrTTL and changes nothing.
func TestKeep(t *testing.T) {
	limited := registry.Limits{MaxTTL: 48 * time.Hour, DefaultTTL: time.Hour}
	tests := []struct {
		name string
		lim  registry.Limits
		keep *time.Duration
		want time.Duration // how long it is kept; 0: until discarded
		err  string        // an ErrTTL's text contains it
	}{
		{name: "default TTL", lim: limited, want: time.Hour},
		{name: "a TTL", lim: limited, keep: ttl(2 * time.Hour), want: 2 * time.Hour},
		{name: "the limit", lim: limited, keep: ttl(48 * time.Hour), want: 48 * time.Hour},
		{name: "beyond the limit", lim: limited, keep: ttl(49 * time.Hour), err: "at most 2d (max-sandbox-ttl), not 49h"},
		{name: "for ever past a limit", lim: limited, keep: ttl(0), err: "at most 2d (max-sandbox-ttl), not no end"},
		{name: "default beyond the limit", lim: registry.Limits{MaxTTL: time.Hour, DefaultTTL: 2 * time.Hour}, err: "not 2h"},
		{name: "for ever", keep: ttl(0)},
		{name: "default for ever"},
		{name: "a TTL without limit", keep: ttl(1000 * time.Hour), want: 1000 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.lim)
			e.open("ops", "alice")
			before := time.Now()
			in, err := e.op.Keep(e.ctx, "ops", tt.keep)
			kept, exp, _ := e.row("ops")
			if tt.err != "" {
				var r *rewrite.Refusal
				if !errors.Is(err, ErrTTL) || !strings.HasPrefix(err.Error(), "TTL beyond max-sandbox-ttl: a kept sandbox may live at most ") ||
					!strings.Contains(err.Error(), tt.err) || !errors.As(err, &r) {
					t.Errorf("error %v, want ErrTTL %q", err, tt.err)
				}
				if now, _ := e.op.Show(e.ctx, "ops"); now.State != "active" || kept != "0" {
					t.Errorf("refused, yet %s here and kept = %s in the registry", now.State, kept)
				}
				return
			}
			if err != nil || in.State != "kept" || in.Name != "ops" || in.Connections != 1 {
				t.Fatalf("Keep = %+v, %v", in, err)
			}
			if tt.want == 0 {
				if in.Expires != nil || kept != "1" || exp != nil {
					t.Errorf("expires %v (registry: kept %s until %v), want no end", in.Expires, kept, sideconn.Str(exp))
				}
				return
			}
			if in.Expires == nil || !around(*in.Expires, before, tt.want) {
				t.Errorf("expires %v, want in %s", in.Expires, tt.want)
			}
			if got := sideconn.ParseTime(exp); kept != "1" || in.Expires == nil || !got.Equal(in.Expires.Truncate(time.Microsecond)) {
				t.Errorf("registry: kept %s until %v, want until %v", kept, got, in.Expires)
			}
		})
	}
}

// TestKeepAnotherProcess: a sandbox another process holds in its grace is
// kept, and this process holds it from then on.
func TestKeepAnotherProcess(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	p := process(t, e.up, registry.Limits{Grace: time.Hour})
	p.reg.Detach(p.open("far", "bob"))
	if _, exp, _ := e.row("far"); exp == nil {
		t.Fatal("no grace recorded")
	}
	in, err := e.op.Keep(e.ctx, "far", ttl(time.Hour))
	if err != nil || in.State != "kept" || in.Owner != "bob" || in.Expires == nil {
		t.Fatalf("Keep = %+v, %v", in, err)
	}
	if kept, _, _ := e.row("far"); kept != "1" {
		t.Errorf("registry: kept = %s", kept)
	}
	if sbs := e.reg.Sandboxes(); len(sbs) != 1 || sbs[0].Name != "far" {
		t.Errorf("this process holds %v, want far", sbs)
	}
}

// TestKeepNotRecorded: a registry that cannot record the keep is the error.
func TestKeepNotRecorded(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	e.open("ops", "alice")
	e.up.On("^UPDATE `_sqlfork_meta`\\.sandboxes SET kept = 1").Fail(1205, "HY000", "lock wait")
	in, err := e.op.Keep(e.ctx, "ops", nil)
	if code, _, _, ok := sessiontest.Code(err); !ok || code != 1205 || in.Name != "" {
		t.Errorf("Keep = %+v, %v; want the registry's error", in, err)
	}
}

// TestDiscard: the sandbox goes, whatever holds it: connections of this
// process, or another process only.
func TestDiscard(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	p := process(t, e.up, registry.Limits{})
	mine := e.open("ops", "alice")
	e.entry(mine, "t", sandbox.KindFork, 10)
	p.keep(p.open("far", "bob"), 0)
	for _, name := range []string{"ops", "far"} {
		if err := e.op.Discard(e.ctx, name); err != nil {
			t.Fatalf("Discard(%s): %v", name, err)
		}
		if _, err := e.op.Show(e.ctx, name); !errors.Is(err, ErrNoSandbox) {
			t.Errorf("Show(%s) after Discard: %v", name, err)
		}
		if _, _, ok := e.row(name); ok {
			t.Errorf("the registry still has %s", name)
		}
	}
	if !mine.IsDiscarded() || len(e.reg.Sandboxes()) != 0 {
		t.Errorf("ops discarded: %v; this process holds %d", mine.IsDiscarded(), len(e.reg.Sandboxes()))
	}
}

// TestList: this process's sandboxes as it holds them, and the others the
// registry has — kept (with or without an end), in a grace, held — sorted
// by name.
func TestList(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	p := process(t, e.up, registry.Limits{Grace: time.Hour})
	before := time.Now()
	mine := e.open("mine", "alice")
	e.entry(mine, "t", sandbox.KindFork, 1)
	e.keep(mine, time.Hour) // kept in memory too: the row is not read
	kept := p.open("kept", "bob")
	p.entry(kept, "t", sandbox.KindFork, 10)
	p.entry(kept, "u", sandbox.KindSchema, 20)
	p.entry(kept, "d", sandbox.KindDropped, 5)
	p.keep(kept, 2*time.Hour)
	p.keep(p.open("forever", "bob"), 0)
	p.reg.Detach(p.open("graced", "carol"))
	p.open("held", "dave")

	list, err := e.op.List(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, owner, state string
		expires            time.Duration // 0: none
		conns, tables      int
		bytes              int64
	}{
		{"forever", "bob", "kept", 0, 0, 0, 0},
		{"graced", "carol", "grace", time.Hour, 0, 0, 0},
		{"held", "dave", "active", 0, 0, 0, 0},
		{"kept", "bob", "kept", 2 * time.Hour, 0, 2, 30},
		{"mine", "alice", "kept", time.Hour, 1, 1, 1},
	}
	if len(list) != len(tests) {
		t.Fatalf("List = %+v, want %d sandboxes", list, len(tests))
	}
	for i, tt := range tests {
		in := list[i]
		if in.Name != tt.name || in.Owner != tt.owner || in.State != tt.state || in.Connections != tt.conns ||
			in.TableCount != tt.tables || in.Bytes != tt.bytes || in.Tables != nil || in.Created.Before(before.Add(-time.Second)) {
			t.Errorf("%d: %+v, want %+v", i, in, tt)
		}
		if (in.Expires != nil) != (tt.expires != 0) || in.Expires != nil && !around(*in.Expires, before, tt.expires) {
			t.Errorf("%s expires %v, want in %s", tt.name, in.Expires, tt.expires)
		}
	}
	if list[4].ID != mine.ID || list[3].ID != kept.ID {
		t.Errorf("ids %s, %s; want %s, %s", list[4].ID, list[3].ID, mine.ID, kept.ID)
	}
}

// TestListEmpty: no sandbox is an empty list, not nil (the admin API
// answers []).
func TestListEmpty(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	if list, err := e.op.List(e.ctx); err != nil || list == nil || len(list) != 0 {
		t.Errorf("List = %#v, %v", list, err)
	}
}

// TestListFails: a registry that cannot be read is the error.
func TestListFails(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	e.open("ops", "alice")
	e.up.On(`^SELECT s\.id, s\.name, s\.kept, `).Fail(1146, "42S02", "Table '_sqlfork_meta.tables' doesn't exist")
	list, err := e.op.List(e.ctx)
	if code, _, _, ok := sessiontest.Code(err); !ok || code != 1146 || list != nil || !strings.HasPrefix(err.Error(), "read registry: ") {
		t.Errorf("List = %+v, %v; want the registry's error", list, err)
	}
}

// cells are r's rows as text.
func cells(r *reply.Reply) []string {
	var out []string
	for _, row := range r.Rows {
		s := make([]string, len(row))
		for i, v := range row {
			s[i] = sideconn.Str(v)
		}
		out = append(out, strings.Join(s, " | "))
	}
	return out
}

// TestDiff: the reviewer's diff of the sandbox called name, in summary or
// in detail, of every table or of one.
func TestDiff(t *testing.T) {
	other := &rewrite.Table{DB: "app", Name: "u"}
	added := []string{`app.t | insert | {"v": 7} |  | {"v": 7} | `, `app.t | insert | {"v": 7} |  | {"v": 7} | `}
	tests := []struct {
		name    string
		summary bool
		only    *rewrite.Table
		columns []string
		rows    []string
	}{
		{"summary", true, nil, review.DiffSummaryColumns, []string{"app.t | forked | 2 | 0 | 0 | 0 | row | compare | forked before changes were captured"}},
		{"detail", false, nil, review.DiffColumns, added},
		{"of the table", false, &rewrite.Table{DB: "app", Name: "t"}, review.DiffColumns, added},
		{"of another table", false, other, review.DiffColumns, nil},
		{"summary of another table", true, other, review.DiffSummaryColumns, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, registry.Limits{})
			e.keyless(e.open("ops", "alice"), 2)
			r, err := e.op.Diff(e.ctx, "ops", tt.summary, tt.only)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Columns, tt.columns) || !slices.Equal(cells(r), tt.rows) {
				t.Errorf("diff %v %q\nwant %v %q", r.Columns, cells(r), tt.columns, tt.rows)
			}
		})
	}
}

// TestExport: the statements of the reviewer's export, one a row.
func TestExport(t *testing.T) {
	e := newEnv(t, registry.Limits{})
	sb := e.open("ops", "alice")
	e.keyless(sb, 2)
	got, err := e.op.Export(e.ctx, "ops")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.rev.Export(e.ctx, sb)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, cells(r)) {
		t.Errorf("export %q\nwant the reviewer's %q", got, cells(r))
	}
	if !slices.Contains(got, "INSERT INTO `app`.`t` (`v`) VALUES (7), (7)") || !slices.ContainsFunc(got, func(s string) bool {
		return strings.HasPrefix(s, "-- app.t has no key")
	}) {
		t.Errorf("export %q, want the rows' INSERT and the note on app.t", got)
	}
}

// TestPromote: FAIL, OURS and THEIRS in any case ("" is FAIL) promote as
// AdminUser, a sandbox admin, via "api" — another user's sandbox too;
// another strategy is ErrStrategy before anything is read, even of a
// sandbox that does not exist.
func TestPromote(t *testing.T) {
	tests := []struct {
		strategy, want string // want: the strategy promoted by, or ErrStrategy's text
	}{
		{"", "FAIL"},
		{"fail", "FAIL"},
		{"Ours", "OURS"},
		{"THEIRS", "THEIRS"},
		{"theirs", "THEIRS"},
		{"mine", `unknown PROMOTE strategy: "MINE" (FAIL, OURS or THEIRS)`},
		{"FAILS", `unknown PROMOTE strategy: "FAILS" (FAIL, OURS or THEIRS)`},
		{" ours", `unknown PROMOTE strategy: " OURS" (FAIL, OURS or THEIRS)`},
	}
	for _, tt := range tests {
		t.Run(tt.strategy, func(t *testing.T) {
			e := newEnv(t, registry.Limits{})
			e.rev.SetPromoteDialer(e.up.Dialer())
			e.open("ops", "alice")
			if strings.HasPrefix(tt.want, "unknown") {
				e.up.ClearLog()
				for _, name := range []string{"ops", "x"} {
					r, err := e.op.Promote(e.ctx, name, tt.strategy)
					if !errors.Is(err, ErrStrategy) || err.Error() != tt.want || r != nil {
						t.Errorf("Promote(%s) = %v, %v; want %q", name, r, err, tt.want)
					}
				}
				if log := e.up.Log(); len(log) != 0 {
					t.Errorf("read %+v before refusing the strategy", log)
				}
				return
			}
			r, err := e.op.Promote(e.ctx, "ops", tt.strategy)
			if err != nil || !strings.HasPrefix(r.Info, "promoted sandbox ops: ") {
				t.Fatalf("Promote = %+v, %v", r, err)
			}
			audit := e.up.Matching("^INSERT INTO `_sqlfork_meta`\\.promotes ")
			if len(audit) != 1 || !strings.Contains(audit[0], "'alice', '"+AdminUser+"', 'api', '"+tt.want+"', ") {
				t.Errorf("audit %q, want alice's sandbox promoted by %s via api, %s", audit, AdminUser, tt.want)
			}
		})
	}
}

// TestRefusals: the reviewer's refusals are marked for the admin API —
// ErrForbidden for who may promote, ErrRefused for the others — their
// text without a client's error's prefix; its other errors are left as
// they are.
func TestRefusals(t *testing.T) {
	const tooLarge = "the diff has more than 200000 rows; use SANDBOX DIFF SUMMARY or SANDBOX DIFF … FOR db.table"
	diff := func(e *env) error { _, err := e.op.Diff(e.ctx, "ops", false, nil); return err }
	export := func(e *env) error { _, err := e.op.Export(e.ctx, "ops"); return err }
	promote := func(e *env) error { _, err := e.op.Promote(e.ctx, "ops", "ours"); return err }
	tests := []struct {
		name  string
		setup func(e *env, sb *registry.Sandbox)
		call  func(e *env) error
		kind  error  // nil: not marked
		code  uint16 // the refusal's, or the server's error's
		want  string // the error's text starts so
	}{
		{"diff too large", func(e *env, sb *registry.Sandbox) { e.keyless(sb, 200001) }, diff, ErrRefused, wire.ErUnknown, tooLarge},
		{"export too large", func(e *env, sb *registry.Sandbox) { e.keyless(sb, 200001) }, export, ErrRefused, wire.ErUnknown, tooLarge},
		{"no promote account", func(*env, *registry.Sandbox) {}, promote, ErrForbidden, wire.ErOptionPreventsStatement,
			"SANDBOX PROMOTE needs a promote account: start the proxy with --promote-user"},
		{"another promote", func(e *env, sb *registry.Sandbox) {
			e.rev.SetPromoteDialer(e.up.Dialer())
			e.up.On(`^SELECT GET_LOCK\('` + e.reg.LockName(sb.ID, "\x00promote") + `', `).Rows(sessiontest.Row("0"))
		}, promote, ErrRefused, wire.ErLockWaitTimeout, `another PROMOTE of sandbox "ops" is running; retry when it is done`},
		{"diff unread", func(e *env, sb *registry.Sandbox) {
			e.up.On(`^SELECT db, tbl, state, reason, `).Fail(1205, "HY000", "Lock wait timeout exceeded")
		}, diff, nil, 1205, "read the captures of the sandbox: "},
		{"export unread", func(e *env, sb *registry.Sandbox) {
			e.up.On(`^SELECT db, tbl, state, reason, `).Fail(1205, "HY000", "Lock wait timeout exceeded")
		}, export, nil, 1205, "read the captures of the sandbox: "},
		{"no promote connection", func(e *env, sb *registry.Sandbox) {
			e.rev.SetPromoteDialer(func(context.Context) (sideconn.Conn, error) {
				return nil, sessiontest.Err(1045, "28000", "Access denied for user 'promoter'")
			})
		}, promote, nil, 1045, "connect with the promote account: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, registry.Limits{})
			tt.setup(e, e.open("ops", "alice"))
			err := tt.call(e)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			for _, kind := range []error{ErrRefused, ErrForbidden} {
				if errors.Is(err, kind) != (kind == tt.kind) {
					t.Errorf("errors.Is(%v) = %v", kind, !(kind == tt.kind))
				}
			}
			var r *rewrite.Refusal
			code, _, _, server := sessiontest.Code(err)
			if tt.kind != nil && (!errors.As(err, &r) || r.Code != tt.code) || tt.kind == nil && (!server || code != tt.code) {
				t.Errorf("error %v, want code %d in its chain", err, tt.code)
			}
		})
	}
}
