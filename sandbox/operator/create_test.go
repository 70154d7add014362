package operator

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// TestCreate: a sandbox made for an owner is kept (for the TTL asked, the
// default one, or for ever) with no connection, in memory and in the
// registry; its owner attaches it, another user does not; a process that
// never saw it finds it kept.
func TestCreate(t *testing.T) {
	tests := []struct {
		name string
		keep *time.Duration
		want time.Duration // 0: until discarded
	}{
		{"default TTL", nil, time.Hour},
		{"a TTL", ttl(2 * time.Hour), 2 * time.Hour},
		{"for ever", ttl(0), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, registry.Limits{DefaultTTL: time.Hour})
			before := time.Now()
			in, err := e.op.Create(e.ctx, "fix", "alice", tt.keep)
			if err != nil || in.Name != "fix" || in.Owner != "alice" || in.State != "kept" || in.Connections != 0 || in.ID != registry.NameID("fix") {
				t.Fatalf("Create = %+v, %v", in, err)
			}
			kept, exp, ok := e.row("fix")
			switch {
			case !ok || kept != "1":
				t.Errorf("registry: recorded %v, kept %q", ok, kept)
			case tt.want == 0 && (exp != nil || in.Expires != nil):
				t.Errorf("expires %v (registry %v), want no end", in.Expires, sideconn.Str(exp))
			case tt.want != 0 && (in.Expires == nil || !around(*in.Expires, before, tt.want) ||
				!sideconn.ParseTime(exp).Equal(in.Expires.Truncate(time.Microsecond))):
				t.Errorf("expires %v (registry %v), want in %s", in.Expires, sideconn.Str(exp), tt.want)
			}
			if _, err := e.reg.Acquire(e.ctx, "fix", "mallory", false); err == nil || !strings.Contains(err.Error(), `no sandbox named "fix"`) {
				t.Errorf("another user attached it: %v", err)
			}
			sb, err := e.reg.Acquire(e.ctx, "fix", "alice", false)
			if err != nil || sb == nil || sb.Info(false).Connections != 1 {
				t.Fatalf("the owner's attach: %v, %v", sb, err)
			}
			if left := e.reg.Detach(sb); left != registry.LeftInUse || sb.IsDiscarded() {
				t.Errorf("the owner's detach: %v, discarded %v", left, sb.IsDiscarded())
			}
			p := process(t, e.up, registry.Limits{})
			if far, err := p.op.Show(e.ctx, "fix"); err != nil || far.State != "kept" || far.Owner != "alice" {
				t.Errorf("another process shows %+v, %v", far, err)
			}
		})
	}
}

// TestCreateRefused: a name taken (here, or by another process), a bad
// name or owner, a TTL beyond max-sandbox-ttl and max-sandboxes are
// refused with their marks, and leave nothing behind.
func TestCreateRefused(t *testing.T) {
	e := newEnv(t, registry.Limits{MaxTTL: 48 * time.Hour, DefaultTTL: time.Hour, MaxSandboxes: 3})
	e.open("mine", "bob")
	p := process(t, e.up, registry.Limits{})
	p.keep(p.open("far", "carol"), time.Hour)
	tests := []struct {
		name, sandbox, owner string
		keep                 *time.Duration
		kind                 error
		msg                  string
	}{
		{"a name held here", "mine", "alice", nil, ErrExists, `sandbox exists: a sandbox named "mine" already exists (owner bob); discard it`},
		{"a name another process keeps", "far", "alice", nil, ErrExists, `a sandbox named "far" already exists (owner carol)`},
		{"an empty name", "", "alice", nil, ErrBadName, "must be 1 to 48 characters"},
		{"a long name", strings.Repeat("x", 49), "alice", nil, ErrBadName, "must be 1 to 48 characters"},
		{"a name with a space", "my box", "alice", nil, ErrBadName, "may hold only letters, digits, '_' and '-'"},
		{"a name with an escape", "box\x1b[2J", "alice", nil, ErrBadName, "may hold only letters"},
		{"no owner", "box", "", nil, ErrBadName, "the owner must be named"},
		{"an owner with an escape", "box", "al\x1b[2Jice", nil, ErrBadName, `owner al\x1b[2Jice holds`},
		{"an owner with a space", "box", "al ice", nil, ErrBadName, "holds white space"},
		{"a long owner", "box", strings.Repeat("a", 129), nil, ErrBadName, "longer than 128 bytes"},
		{"beyond max-sandbox-ttl", "box", "alice", ttl(49 * time.Hour), ErrTTL, "at most 2d (max-sandbox-ttl), not 49h"},
		{"for ever past a limit", "box", "alice", ttl(0), ErrTTL, "not no end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := e.op.Create(e.ctx, tt.sandbox, tt.owner, tt.keep)
			if !errors.Is(err, tt.kind) || !strings.Contains(err.Error(), tt.msg) || in.Name != "" {
				t.Errorf("Create = %+v, %v; want %v %q", in, err, tt.kind, tt.msg)
			}
			if _, _, ok := e.row("box"); ok {
				t.Error("the registry has box")
			}
		})
	}
	if n := len(e.reg.Sandboxes()); n != 1 {
		t.Errorf("this process holds %d sandboxes, want 1 (mine)", n)
	}
	// max-sandboxes counts what this process holds: mine, box2, box3.
	for _, name := range []string{"box2", "box3"} {
		if _, err := e.op.Create(e.ctx, name, "alice", nil); err != nil {
			t.Fatalf("Create(%s): %v", name, err)
		}
	}
	in, err := e.op.Create(e.ctx, "box4", "alice", nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "the proxy already holds 3 sandboxes (its limit)") {
		t.Errorf("Create past max-sandboxes = %+v, %v", in, err)
	}
	if _, _, ok := e.row("box4"); ok {
		t.Error("the registry has box4")
	}
}
