package registry_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry/registrytest"
	"github.com/sqlfork/sqlfork-proxy/session/sessiontest"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

const prefix = registrytest.Prefix

var names = registrytest.Names

// recorder is an Observer that remembers what it was told.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.events = append(r.events, s); r.mu.Unlock() }
func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.events...)
}
func (r *recorder) has(s string) bool                { return slices.Contains(r.all(), s) }
func (r *recorder) Discarded(reason string)          { r.add("discarded:" + reason) }
func (r *recorder) SideConnTimedOut()                { r.add("timeout") }
func (r *recorder) RegistryChecked(result string)    { r.add("checked:" + result) }
func (r *recorder) LeasesAwaited(took time.Duration) { r.add("awaited") }

// proc is one proxy process's registry on the fake upstream.
type proc struct {
	t   *testing.T
	ctx context.Context
	up  *sessiontest.Upstream
	reg *registry.Registry
	obs *recorder
}

// config is a registry whose leases outlast any test.
var config = registrytest.Config

// start makes a registry on up as the session manager does: New, names,
// limits, Init on a side connection, Start; it is closed with the test.
func start(t *testing.T, up *sessiontest.Upstream, cfg registry.Config, lim registry.Limits,
	room func(string, int) error) *proc {
	t.Helper()
	ctx := context.Background()
	if room == nil {
		room = func(string, int) error { return nil } // New needs one (session's userRoom)
	}
	reg := registry.New(cfg, up.Dialer(), zap.NewNop(), room)
	reg.SetNames(names)
	// As session does: the pool's settings with the limits (see
	// TestSetLimitsKeepsConfiguredPool).
	if lim.SideConnections == 0 {
		lim.SideConnections, lim.ForkQueueTimeout = cfg.SideConnections, cfg.ForkQueueTimeout
	}
	reg.SetLimits(lim)
	obs := &recorder{}
	reg.SetObserver(obs)
	reg.SetObserver(nil) // keeps obs
	registrytest.Start(t, reg)
	return &proc{t: t, ctx: ctx, up: up, reg: reg, obs: obs}
}

func newProc(t *testing.T) *proc {
	return start(t, sessiontest.NewUpstream(), config(), registry.Limits{}, nil)
}

// query runs sql on the fake's state.
func (p *proc) query(sql string) [][]*string {
	p.t.Helper()
	rows, err := p.up.Query(sql)
	if err != nil {
		p.t.Fatalf("%s: %v", sql, err)
	}
	return rows
}

// count is how many rows of the registry table tbl are sandbox id's.
func (p *proc) count(tbl, id string) int {
	p.t.Helper()
	col := "sandbox_id"
	if tbl == "sandboxes" {
		col = "id"
	}
	return len(p.query("SELECT " + col + " FROM `_sqlfork_meta`." + tbl + " WHERE " + col + " = '" + id + "'"))
}

// with runs f on a side connection of p's pool.
func (p *proc) with(f func(c sideconn.Conn) error) {
	p.t.Helper()
	if err := p.reg.WithConn(p.ctx, f); err != nil {
		p.t.Fatal(err)
	}
}

func (p *proc) persist(sb *registry.Sandbox) {
	p.t.Helper()
	p.with(func(c sideconn.Conn) error { return p.reg.Persist(p.ctx, c, sb) })
}

// entry is a fork of app.name in sb.
func entry(sb *registry.Sandbox, name string, kind sandbox.Kind, bytes int64) *sandbox.Entry {
	l := rewrite.Table{DB: "app", Name: name}
	return &sandbox.Entry{Logical: l, Phys: names.Physical(sb.ID, l), Kind: kind, Rows: 3, Bytes: bytes,
		Created: time.Now().UTC().Truncate(time.Microsecond)}
}

func (p *proc) save(sb *registry.Sandbox, e *sandbox.Entry) {
	p.t.Helper()
	p.with(func(c sideconn.Conn) error { return p.reg.SaveEntry(p.ctx, c, sb, e) })
	p.reg.SetEntry(sb, names.Key(e.Logical), e)
}

func refusal(t *testing.T, err error, code uint16, part string) {
	t.Helper()
	var r *rewrite.Refusal
	if !errors.As(err, &r) || r.Code != code || !strings.Contains(r.Message, part) {
		t.Fatalf("error %v, want refusal %d containing %q", err, code, part)
	}
}

func TestInit(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, config(), registry.Limits{}, nil)
	for _, tbl := range []string{"sandboxes", "tables", "holders", "generations", "readers", "captures", "promotes", "settings"} {
		if !up.HasTable("_sqlfork_meta", tbl) {
			t.Errorf("no registry table %s", tbl)
		}
	}
	secret := a.query("SELECT value FROM `_sqlfork_meta`.settings WHERE name = 'lock_secret'")
	if len(secret) != 1 || len(*secret[0][0]) != 64 {
		t.Fatalf("lock secret %v", secret)
	}
	// A second process reads the first's secret: their lock names agree,
	// and they depend on the secret, the sandbox and the key.
	b := start(t, up, config(), registry.Limits{}, nil)
	if a.reg.LockName("x", "life") != b.reg.LockName("x", "life") || a.reg.LifeLock("x") != a.reg.LockName("x", "life") {
		t.Error("two processes name the same lock differently")
	}
	if l := a.reg.LockName("x", "life"); len(l) > 64 || !strings.HasPrefix(l, "sqlfork:") ||
		l == a.reg.LockName("y", "life") || l == a.reg.LockName("x", "alive") {
		t.Errorf("lock name %q", l)
	}
	if w := up.ProductionWrites(prefix); len(w) > 0 {
		t.Errorf("wrote production: %q", w)
	}
	if u := up.Unknown(); len(u) > 0 {
		t.Errorf("statements the fake does not know: %q", u)
	}
}

func TestInitFails(t *testing.T) {
	for _, tc := range []struct {
		rule, want string
		rows       bool // answer with no rows rather than fail
	}{
		{rule: `^CREATE DATABASE`, want: "the upstream account needs all privileges on `\\_sqlfork%`"},
		{rule: `^CREATE TABLE IF NOT EXISTS .*\.captures`, want: "create sandbox registry in _sqlfork_meta"},
		{rule: `^SELECT value FROM`, want: "read the registry's lock secret"},
		{rule: `^SELECT value FROM`, rows: true, want: "lock secret is missing"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			up := sessiontest.NewUpstream()
			if tc.rows {
				up.On(tc.rule).Rows()
			} else {
				up.On(tc.rule).Fail(1044, "42000", "Access denied")
			}
			reg := registry.New(config(), up.Dialer(), zap.NewNop(), nil) // not started: not closed (see TestCloseWithoutStart)
			c, err := up.Dial(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if err := reg.Init(context.Background(), c); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Init: %v, want %q", err, tc.want)
			}
		})
	}
}

// TestStartFails: a registry that cannot be read fails Start, which closes
// its side connections.
func TestStartFails(t *testing.T) {
	up := sessiontest.NewUpstream()
	reg := registry.New(config(), up.Dialer(), zap.NewNop(), nil)
	reg.SetNames(names)
	// No Init: the registry's tables are missing.
	if err := reg.Start(context.Background()); err == nil || !strings.Contains(err.Error(), "read registry") {
		t.Fatalf("Start: %v", err)
	}
	if n := up.OpenConns(); n != 0 {
		t.Errorf("%d connections left open", n)
	}
}

// TestCloseWithoutStart: Close of a registry that never started (its Init
// or Start failed) returns, as "later calls do nothing" suggests.
func TestCloseWithoutStart(t *testing.T) {
	up := sessiontest.NewUpstream()
	reg := registry.New(config(), up.Dialer(), zap.NewNop(), nil)
	closed := make(chan struct{})
	go func() { reg.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(testkit.WaitLimit):
		t.Fatal("Close of a registry never started did not return")
	}
}

func TestCheckTTL(t *testing.T) {
	for _, tc := range []struct {
		max, ttl time.Duration
		want     string // "" allowed
	}{
		{0, 0, ""},
		{0, time.Hour, ""},
		{time.Hour, time.Hour, ""},
		{time.Hour, time.Minute, ""},
		{time.Hour, 2 * time.Hour, "at most 1h (max-sandbox-ttl), not 2h"},
		{time.Hour, 0, "not no end"},
	} {
		err := registry.Limits{MaxTTL: tc.max}.CheckTTL(tc.ttl)
		if tc.want == "" {
			if err != nil {
				t.Errorf("CheckTTL(max %s, %s) = %v", tc.max, tc.ttl, err)
			}
			continue
		}
		refusal(t, err, wire.ErUnknown, tc.want)
	}
}

func TestSetLimits(t *testing.T) {
	p := newProc(t)
	p.reg.SetLimits(registry.Limits{MaxSandboxes: 3, Grace: time.Second, SideConnections: 7, ForkQueueTimeout: time.Hour})
	l := p.reg.Limits()
	// The queue timeout is at most the fork timeout.
	if l.MaxSandboxes != 3 || l.Grace != time.Second || l.SideConnections != 7 || l.ForkQueueTimeout != time.Minute {
		t.Errorf("limits %+v", l)
	}
	if st := p.reg.PoolStats(); st.Size != 7 {
		t.Errorf("pool size %d, want 7", st.Size)
	}
	// Zero keeps the pool's settings.
	p.reg.SetLimits(registry.Limits{MaxSandboxes: 1})
	if l := p.reg.Limits(); l.SideConnections != 7 || l.ForkQueueTimeout != time.Minute || l.MaxSandboxes != 1 {
		t.Errorf("limits %+v after zero pool settings", l)
	}
}

// TestSetLimitsKeepsConfiguredPool: limits without pool settings leave the
// pool as Config sized it ("otherwise the pool keeps its own").
func TestSetLimitsKeepsConfiguredPool(t *testing.T) {
	reg := registry.New(config(), sessiontest.NewUpstream().Dialer(), zap.NewNop(), nil)
	if st := reg.PoolStats(); st.Size != 4 {
		t.Fatalf("pool size %d before SetLimits, want Config's 4", st.Size)
	}
	reg.SetLimits(registry.Limits{MaxSandboxes: 1})
	if st := reg.PoolStats(); st.Size != 4 {
		t.Errorf("pool size %d after SetLimits without pool settings, want 4", st.Size)
	}
}

func TestNewSandbox(t *testing.T) {
	errRoom := rewrite.Refuse(wire.ErUserLimitReached, "too many of yours")
	p := start(t, sessiontest.NewUpstream(), config(), registry.Limits{MaxSandboxes: 3}, func(owner string, owned int) error {
		if owner == "capped" && owned >= 1 {
			return errRoom
		}
		return nil
	})
	anon, err := p.reg.NewSandbox("", "u")
	if err != nil {
		t.Fatal(err)
	}
	if anon.Name != "sb-"+anon.ID || len(anon.ID) != 8 || anon.Owner != "u" || anon.Created.IsZero() {
		t.Errorf("anonymous sandbox %+v", anon)
	}
	named, err := p.reg.NewSandbox("pool", "capped")
	if err != nil {
		t.Fatal(err)
	}
	if named.ID != registry.NameID("pool") || registry.NameID("pool") == registry.NameID("pool2") {
		t.Errorf("named sandbox id %s, NameID %s", named.ID, registry.NameID("pool"))
	}
	_, err = p.reg.NewSandbox("pool", "u")
	refusal(t, err, wire.ErUnknown, `a sandbox named "pool" already exists`)
	if _, err := p.reg.NewSandbox("other", "capped"); !errors.Is(err, errRoom) {
		t.Errorf("past the owner's cap: %v", err)
	}
	if _, err := p.reg.NewSandbox("", "v"); err != nil {
		t.Fatal(err)
	}
	_, err = p.reg.NewSandbox("", "w")
	refusal(t, err, wire.ErConCount, "already holds 3 sandboxes")
	if n := len(p.reg.Sandboxes()); n != 3 {
		t.Errorf("%d sandboxes, want 3", n)
	}
	if c := p.reg.Counts(); c["active"] != 3 || c["kept"] != 0 || c["grace"] != 0 {
		t.Errorf("counts %v", c)
	}
}

func TestAuthorize(t *testing.T) {
	cfg := config()
	cfg.Admins = []string{"root"}
	p := start(t, sessiontest.NewUpstream(), cfg, registry.Limits{}, nil)
	sb, err := p.reg.NewSandbox("mine", "u")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user  string
		admin bool
		ok    bool
	}{{"u", false, true}, {"root", true, true}, {"v", false, false}} {
		if got := p.reg.IsAdmin(tc.user); got != tc.admin {
			t.Errorf("IsAdmin(%s) = %v", tc.user, got)
		}
		err := p.reg.Authorize(tc.user, sb)
		if tc.ok && err != nil {
			t.Errorf("Authorize(%s): %v", tc.user, err)
		}
		if !tc.ok {
			refusal(t, err, wire.ErUnknown, `no sandbox named "mine"`)
		}
	}
	// Another user cannot acquire it, and gets the same error as for none.
	_, err = p.reg.Acquire(p.ctx, "mine", "v", true)
	refusal(t, err, wire.ErUnknown, `no sandbox named "mine"`)
}

// TestSandboxState: what a sandbox holds in memory, without the registry.
func TestSandboxState(t *testing.T) {
	p := newProc(t)
	sb, err := p.reg.NewSandbox("s", "u")
	if err != nil {
		t.Fatal(err)
	}
	v0 := sb.SnapshotVersion()
	start := p.reg.Epoch()
	fork := entry(sb, "t", sandbox.KindFork, 100)
	fork.Epoch = p.reg.NextEpoch()
	k := names.Key(fork.Logical)
	p.reg.SetEntry(sb, k, fork)
	created := entry(sb, "n", sandbox.KindCreated, 10)
	p.reg.SetEntry(sb, names.Key(created.Logical), created)
	p.reg.SetEntry(sb, "absent", &sandbox.Entry{Logical: rewrite.Table{DB: "app", Name: "a"}, Kind: sandbox.KindAbsent})
	if e, ok := sb.Resolve(k); !ok || e != fork {
		t.Errorf("Resolve = %v, %v", e, ok)
	}
	if _, ok := sb.Resolve("nothing"); ok {
		t.Error("Resolve of an unknown key")
	}
	if sb.SnapshotVersion() != v0+3 || !sb.ChangedSince(start) || sb.ChangedSince(fork.Epoch) {
		t.Errorf("version %d (from %d), changed since %d: %v", sb.SnapshotVersion(), v0, start, sb.ChangedSince(start))
	}
	if sb.ForkedBytes() != 110 || len(sb.Entries()) != 3 {
		t.Errorf("bytes %d, entries %d", sb.ForkedBytes(), len(sb.Entries()))
	}
	// A new entry for the key replaces the old one's bytes.
	p.reg.SetEntry(sb, k, entry(sb, "t", sandbox.KindDropped, 0))
	if sb.ForkedBytes() != 10 {
		t.Errorf("bytes %d after replacing the fork, want 10", sb.ForkedBytes())
	}
	dbs := sb.LogicalDBs()
	if dbs[sandbox.Schema(prefix, sb.ID, "app")] != "app" {
		t.Errorf("LogicalDBs %v", dbs)
	}
	in := sb.Info(true)
	if in.Name != "s" || in.State != "active" || in.TableCount != 1 || len(in.Tables) != 2 || in.Expires != nil ||
		in.Tables[0].Table != "app.n" || in.Tables[1].State != "dropped" {
		t.Errorf("info %+v", in)
	}
	if in := sb.Info(false); in.Tables != nil || in.TableCount != 1 {
		t.Errorf("info without tables %+v", in)
	}
	// DropEntry forgets only the entry it is given.
	p.reg.SetEntry(sb, k, fork)
	sb.DropEntry(k, created)
	if _, ok := sb.Resolve(k); !ok {
		t.Error("DropEntry of another entry dropped the key's")
	}
	sb.DropEntry(k, fork)
	if _, ok := sb.Resolve(k); ok || sb.ForkedBytes() != 10 {
		t.Errorf("after DropEntry: bytes %d", sb.ForkedBytes())
	}
	sb.ForgetEntry(names.Key(created.Logical))
	if _, ok := sb.Resolve(names.Key(created.Logical)); ok {
		t.Error("ForgetEntry left the entry")
	}

	// Routines, needs, flags.
	if known, own := sb.RoutineKnown("p"); known || own {
		t.Error("unknown routine known")
	}
	sb.NoteRoutine("p", true)
	sb.NoteRoutine("p", false) // stays own
	sb.NoteRoutine("q", false)
	if known, own := sb.RoutineKnown("p"); !known || !own {
		t.Errorf("p: %v %v", known, own)
	}
	if known, own := sb.RoutineKnown("q"); !known || own {
		t.Errorf("q: %v %v", known, own)
	}
	sb.NeedRoutines([]registry.RoutineRef{{Kind: "FUNCTION", DB: "app", Name: "f"}})
	sb.NeedRoutines([]registry.RoutineRef{{Kind: "PROCEDURE", DB: "app", Name: "p"}})
	if got := sb.TakeNeeded(); len(got) != 2 || got[1].Name != "p" {
		t.Errorf("TakeNeeded = %v", got)
	}
	if got := sb.TakeNeeded(); got != nil {
		t.Errorf("TakeNeeded again = %v", got)
	}
	if sb.HasInfoViews() || sb.SideDBMade() {
		t.Error("flags set from the start")
	}
	sb.MarkInfoViews()
	sb.MarkSideDB()
	if !sb.HasInfoViews() || !sb.SideDBMade() {
		t.Error("flags not set")
	}
	unlock := sb.LockForks()
	unlock()
	if sb.SyncWaiters() != 0 || sb.IsDiscarded() || sb.IsRetired() {
		t.Error("fresh sandbox waits, discarded or retired")
	}
	// Named sandboxes are shareable; anonymous ones are not.
	anon, _ := p.reg.NewSandbox("", "u")
	if !sb.Shareable() || anon.Shareable() {
		t.Errorf("shareable: named %v, anonymous %v", sb.Shareable(), anon.Shareable())
	}
	sb.Touch()
	ft := registry.ForTest("0badcafe", map[string]*sandbox.Entry{k: fork})
	if e, ok := ft.Resolve(k); !ok || e != fork || ft.Name != "sb-0badcafe" {
		t.Errorf("ForTest: %+v", ft)
	}
}

// TestAnonymousEndsWithLastConnection: an anonymous sandbox goes with its
// last connection, recorded or not: its rows, then its schemas.
func TestAnonymousEndsWithLastConnection(t *testing.T) {
	for _, recorded := range []bool{false, true} {
		t.Run(map[bool]string{false: "in memory", true: "recorded"}[recorded], func(t *testing.T) {
			p := newProc(t)
			sb, err := p.reg.NewSandbox("", "u")
			if err != nil {
				t.Fatal(err)
			}
			if err := p.reg.Attach(sb); err != nil {
				t.Fatal(err)
			}
			if err := p.reg.Attach(sb); err != nil {
				t.Fatal(err)
			}
			schema := sandbox.Schema(prefix, sb.ID, "app")
			if recorded {
				p.persist(sb)
				p.save(sb, entry(sb, "t", sandbox.KindFork, 10))
				if _, err := p.up.Exec("CREATE DATABASE IF NOT EXISTS `" + schema + "`"); err != nil {
					t.Fatal(err)
				}
				if p.count("sandboxes", sb.ID) != 1 || p.count("tables", sb.ID) != 1 || p.count("holders", sb.ID) != 1 ||
					p.count("generations", sb.ID) != 1 {
					t.Fatal("not recorded")
				}
			}
			epoch := p.reg.Epoch()
			p.reg.Detach(sb)
			if sb.IsDiscarded() {
				t.Fatal("discarded with a connection left")
			}
			p.reg.Detach(sb)
			if !sb.IsDiscarded() || !sb.IsRetired() || p.reg.Epoch() != epoch+1 {
				t.Errorf("discarded %v, epoch %d (from %d)", sb.IsDiscarded(), p.reg.Epoch(), epoch)
			}
			if !p.obs.has("discarded:last_connection") {
				t.Errorf("events %q", p.obs.all())
			}
			if len(p.reg.Sandboxes()) != 0 {
				t.Error("still in memory")
			}
			for _, tbl := range []string{"sandboxes", "tables", "holders", "generations"} {
				if p.count(tbl, sb.ID) != 0 {
					t.Errorf("rows left in %s", tbl)
				}
			}
			if p.up.HasSchema(schema) {
				t.Error("its schema is left")
			}
			// A discarded sandbox takes no connection.
			refusal(t, p.reg.Attach(sb), wire.ErUnknown, "was discarded")
			if w := p.up.ProductionWrites(prefix); len(w) > 0 {
				t.Errorf("wrote production: %q", w)
			}
		})
	}
}

// TestPersistRecords: the first Persist records the sandbox and this
// process as its holder; later ones renew its lease; PersistKeep records
// it kept.
func TestPersistRecords(t *testing.T) {
	p := newProc(t)
	sb, err := p.reg.Acquire(p.ctx, "pool", "u", true)
	if err != nil || sb == nil {
		t.Fatalf("Acquire: %v, %v", sb, err)
	}
	p.persist(sb)
	row := p.query("SELECT name, owner, kept, expires_at, lease_until FROM `_sqlfork_meta`.sandboxes WHERE id = '" + sb.ID + "'")
	if len(row) != 1 || *row[0][0] != "pool" || *row[0][1] != "u" || *row[0][2] != "0" || row[0][3] != nil || row[0][4] == nil {
		t.Fatalf("registry row %v", row)
	}
	if p.count("holders", sb.ID) != 1 {
		t.Error("not recorded as holder")
	}
	p.up.ClearLog()
	p.persist(sb)
	if p.up.Count(`^INSERT INTO .*sandboxes`) != 0 || p.up.Count(`^UPDATE .*sandboxes SET last_active = `) != 1 {
		t.Errorf("second persist ran %q", p.up.Matching(`sandboxes`))
	}
	expires := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	sb.KeepAs(expires)
	p.with(func(c sideconn.Conn) error { return p.reg.PersistKeep(p.ctx, c, sb) })
	row = p.query("SELECT kept, expires_at FROM `_sqlfork_meta`.sandboxes WHERE id = '" + sb.ID + "'")
	if *row[0][0] != "1" || !sideconn.ParseTime(row[0][1]).Equal(expires) {
		t.Errorf("kept row %q %q, want 1 %s", *row[0][0], sideconn.Str(row[0][1]), expires)
	}
	if c := p.reg.Counts(); c["kept"] != 1 {
		t.Errorf("counts %v", c)
	}
	if in := sb.Info(false); in.State != "kept" || in.Expires == nil || !in.Expires.Equal(expires) {
		t.Errorf("info %+v", in)
	}
	// A kept sandbox outlives its last connection.
	p.reg.Detach(sb)
	if sb.IsDiscarded() || p.count("sandboxes", sb.ID) != 1 {
		t.Error("kept sandbox discarded at its last connection")
	}
}

// TestPersistFails: failures of the registry's writes are errors.
func TestPersistFails(t *testing.T) {
	for _, rule := range []string{
		`^SELECT GET_LOCK`,
		`^INSERT INTO .*sandboxes`,
		`^REPLACE INTO .*holders`,
		`^SELECT COUNT\(\*\) FROM .*sandboxes`,
	} {
		t.Run(rule, func(t *testing.T) {
			p := newProc(t)
			sb, _ := p.reg.NewSandbox("pool", "u")
			_ = p.reg.Attach(sb)
			p.up.On(rule).Fail(1142, "42000", "denied")
			err := p.reg.WithConn(p.ctx, func(c sideconn.Conn) error { return p.reg.Persist(p.ctx, c, sb) })
			if err == nil {
				t.Fatal("Persist succeeded")
			}
		})
	}
}

// TestPersistTakesRowOfOtherProcess: a named sandbox another process
// recorded first is the same one when name and owner agree (its keep is
// taken), else a clash.
func TestPersistTakesRowOfOtherProcess(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, config(), registry.Limits{}, nil)
	b := start(t, up, config(), registry.Limits{}, nil)
	sa, _ := a.reg.NewSandbox("pool", "u")
	_ = a.reg.Attach(sa)
	sa.KeepAs(time.Time{})
	a.persist(sa)
	sb, _ := b.reg.NewSandbox("pool", "u")
	_ = b.reg.Attach(sb)
	b.persist(sb)
	if in := sb.Info(false); in.State != "kept" {
		t.Errorf("b's sandbox %+v, want it kept as a's", in)
	}
	if a.count("holders", sa.ID) != 2 {
		t.Errorf("%d holders, want both processes", a.count("holders", sa.ID))
	}
	c := start(t, up, config(), registry.Limits{}, nil)
	other, _ := c.reg.NewSandbox("pool", "someone-else")
	_ = c.reg.Attach(other)
	err := c.reg.WithConn(c.ctx, func(conn sideconn.Conn) error { return c.reg.Persist(c.ctx, conn, other) })
	refusal(t, err, wire.ErUnknown, `sandbox name "pool" clashes`)
}

// TestLookupAndAcquireAcrossProcesses: a sandbox one process recorded is
// found by another, with its tables; acquiring it there records that
// process among its holders, so a discard without force in the first
// leaves it to the second.
func TestLookupAndAcquireAcrossProcesses(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, config(), registry.Limits{Grace: time.Hour}, nil)
	b := start(t, up, config(), registry.Limits{Grace: time.Hour}, nil)
	sa, err := a.reg.Acquire(a.ctx, "pool", "u", true)
	if err != nil {
		t.Fatal(err)
	}
	a.persist(sa)
	e := entry(sa, "t", sandbox.KindFork, 42)
	a.save(sa, e)

	found, err := b.reg.Lookup(b.ctx, "pool")
	if err != nil || found == nil {
		t.Fatalf("Lookup: %v, %v", found, err)
	}
	got, ok := found.Resolve(names.Key(e.Logical))
	if found.ID != sa.ID || !ok || got.Phys != e.Phys || got.Bytes != 42 || got.Kind != sandbox.KindFork || !got.Created.Equal(e.Created) {
		t.Errorf("looked up %+v with %+v", found, got)
	}
	if len(b.reg.Sandboxes()) != 0 {
		t.Error("Lookup kept the sandbox in memory")
	}
	if b.reg.Remember(found) != found || len(b.reg.Sandboxes()) != 1 {
		t.Error("Remember did not keep it")
	}
	if nf, err := b.reg.Lookup(b.ctx, "nosuch"); nf != nil || err != nil {
		t.Errorf("Lookup(nosuch) = %v, %v", nf, err)
	}
	if nf, err := b.reg.Acquire(b.ctx, "nosuch", "u", false); nf != nil || err != nil {
		t.Errorf("Acquire(nosuch) without create = %v, %v", nf, err)
	}
	var loaded *sandbox.Entry
	b.with(func(c sideconn.Conn) error {
		var err error
		loaded, err = b.reg.LoadEntry(b.ctx, c, found, e.Logical)
		return err
	})
	if loaded == nil || loaded.Phys != e.Phys {
		t.Errorf("LoadEntry = %+v", loaded)
	}

	sb, err := b.reg.Acquire(b.ctx, "pool", "u", true)
	if err != nil || sb != found {
		t.Fatalf("Acquire in b = %v, %v (want the remembered one)", sb, err)
	}
	if a.count("holders", sa.ID) != 2 {
		t.Fatalf("%d holders", a.count("holders", sa.ID))
	}
	// a's last connection: its grace; a discard without force leaves the
	// sandbox to b.
	a.reg.Detach(sa)
	if in := sa.Info(false); in.State != "grace" || in.Expires == nil {
		t.Errorf("a's sandbox after its last connection: %+v", in)
	}
	if exp := a.query("SELECT expires_at FROM `_sqlfork_meta`.sandboxes WHERE id = '" + sa.ID + "'"); exp[0][0] == nil {
		t.Error("grace not recorded")
	}
	if err := a.reg.Discard(a.ctx, sa, false, false, "grace"); err != nil {
		t.Fatal(err)
	}
	if sa.IsDiscarded() || !sa.IsRetired() || a.count("sandboxes", sa.ID) != 1 {
		t.Errorf("discard without force: discarded %v retired %v", sa.IsDiscarded(), sa.IsRetired())
	}
	if a.count("holders", sa.ID) != 1 {
		t.Errorf("a still among the holders")
	}
	// Forced, through b: gone; a sees it gone when it next looks.
	if err := b.reg.Discard(b.ctx, sb, true, false, "discarded"); err != nil {
		t.Fatal(err)
	}
	if !sb.IsDiscarded() || a.count("sandboxes", sa.ID) != 0 || !b.obs.has("discarded:discarded") {
		t.Errorf("forced discard: %v, events %q", sb.IsDiscarded(), b.obs.all())
	}
	if got, err := a.reg.Lookup(a.ctx, "pool"); got != nil || err != nil {
		t.Errorf("Lookup after discard = %v, %v", got, err)
	}
}

// TestAcquireAfterDiscardElsewhere: a process that recorded a sandbox
// another process discarded makes a new one of the name, or, when the
// discard is seen at a write, refuses it.
func TestAcquireAfterDiscardElsewhere(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, config(), registry.Limits{Grace: time.Hour}, nil)
	b := start(t, up, config(), registry.Limits{Grace: time.Hour}, nil)
	sa, _ := a.reg.Acquire(a.ctx, "pool", "u", true)
	a.persist(sa)
	e := entry(sa, "t", sandbox.KindFork, 1)
	a.save(sa, e)
	sb, err := b.reg.Acquire(b.ctx, "pool", "u", false)
	if err != nil || sb == nil {
		t.Fatal(err)
	}
	if err := b.reg.Discard(b.ctx, sb, true, false, "discarded"); err != nil {
		t.Fatal(err)
	}
	// a notices at its next write.
	err = a.reg.WithConn(a.ctx, func(c sideconn.Conn) error { return a.reg.StillRecorded(a.ctx, c, sa, e, true) })
	refusal(t, err, wire.ErUnknown, "was discarded through another connection")
	if !sa.IsDiscarded() {
		t.Error("a's sandbox not discarded")
	}
	// The name is free again: a new sandbox.
	n, err := a.reg.Acquire(a.ctx, "pool", "u", true)
	if err != nil || n == nil || n == sa || n.ID != sa.ID {
		t.Fatalf("Acquire after discard = %v, %v", n, err)
	}
	if _, ok := n.Resolve(names.Key(e.Logical)); ok {
		t.Error("the new sandbox has the old one's table")
	}
	// StillRecorded passes for what is recorded.
	a.persist(n)
	e2 := entry(n, "t", sandbox.KindFork, 1)
	a.save(n, e2)
	a.with(func(c sideconn.Conn) error { return a.reg.StillRecorded(a.ctx, c, n, e2, true) })
}

// TestAcquireWaitsForDiscard: an attach by name while a discard holds the
// sandbox waits for it, then makes a new sandbox.
func TestAcquireWaitsForDiscard(t *testing.T) {
	p := start(t, sessiontest.NewUpstream(), config(), registry.Limits{}, nil)
	old, _ := p.reg.Acquire(p.ctx, "pool", "u", true)
	p.persist(old)
	gate := make(chan struct{})
	entered := make(chan struct{}, 1)
	p.up.On(`^DELETE FROM .*sandboxes WHERE id = `).Times(1).Before(func(string) {
		entered <- struct{}{}
		<-gate
	})
	discarded := make(chan error, 1)
	go func() { discarded <- p.reg.Discard(p.ctx, old, true, false, "discarded") }()
	<-entered
	acquired := make(chan *registry.Sandbox, 1)
	go func() {
		sb, err := p.reg.Acquire(p.ctx, "pool", "u", true)
		if err != nil {
			t.Error(err)
		}
		acquired <- sb
	}()
	// Lookup of a retired sandbox waits too; with a context that ends, it
	// gives up.
	ctx, cancel := context.WithCancel(p.ctx)
	cancel()
	if _, err := p.reg.Lookup(ctx, "pool"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lookup with its context over: %v", err)
	}
	select {
	case sb := <-acquired:
		t.Fatalf("Acquire returned %v during the discard", sb)
	default:
	}
	close(gate)
	if err := <-discarded; err != nil {
		t.Fatal(err)
	}
	sb := <-acquired
	if sb == nil || sb == old || sb.IsDiscarded() {
		t.Errorf("acquired %v after the discard (old %p)", sb, old)
	}
}

// TestGraceEnds: a named sandbox's grace ends at the reaper's next round
// after EndGraces, which discards it; one attached meanwhile is not.
func TestGraceEnds(t *testing.T) {
	cfg := config()
	cfg.ReapInterval = 5 * time.Millisecond
	p := start(t, sessiontest.NewUpstream(), cfg, registry.Limits{Grace: time.Hour}, nil)
	kept, _ := p.reg.Acquire(p.ctx, "back", "u", true)
	p.persist(kept)
	sb, _ := p.reg.Acquire(p.ctx, "pool", "u", true)
	p.persist(sb)
	p.reg.Detach(sb)
	p.reg.Detach(kept)
	if c := p.reg.Counts(); c["grace"] != 2 {
		t.Fatalf("counts %v", c)
	}
	if again, err := p.reg.Acquire(p.ctx, "back", "u", false); err != nil || again != kept {
		t.Fatalf("attach in its grace: %v, %v", again, err)
	}
	if in := kept.Info(false); in.State != "active" || in.Connections != 1 {
		t.Errorf("attached again: %+v", in)
	}
	p.reg.EndGraces()
	// Reported once the discard is done.
	testkit.Eventually(t, "the grace's discard", func() bool { return p.obs.has("discarded:grace") })
	if !sb.IsDiscarded() || kept.IsDiscarded() {
		t.Errorf("events %q, back discarded %v", p.obs.all(), kept.IsDiscarded())
	}
	testkit.Eventually(t, "its rows to go", func() bool { return p.count("sandboxes", sb.ID) == 0 })
}

// fastReaps is a registry whose reaper runs every few milliseconds.
func fastReaps() registry.Config {
	cfg := config()
	cfg.ReapInterval = 5 * time.Millisecond
	return cfg
}

// TestSyncTables: a process sharing a sandbox reloads its tables when
// another process changed them, and sees it discarded.
func TestSyncTables(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, config(), registry.Limits{}, nil)
	b := start(t, up, config(), registry.Limits{}, nil)
	sa, _ := a.reg.Acquire(a.ctx, "pool", "u", true)
	a.persist(sa)
	sb, err := b.reg.Acquire(b.ctx, "pool", "u", false)
	if err != nil || sb == nil {
		t.Fatal(err)
	}
	if !sb.Shareable() {
		t.Error("claimed sandbox not shareable")
	}
	if err := b.reg.SyncTables(b.ctx, sb); err != nil {
		t.Fatal(err)
	}
	et, eu := entry(sa, "t", sandbox.KindFork, 5), entry(sa, "u", sandbox.KindSchema, 7)
	a.save(sa, et)
	a.save(sa, eu)
	for _, want := range []string{"reloaded", "unchanged"} {
		b.obs.mu.Lock()
		b.obs.events = nil
		b.obs.mu.Unlock()
		if err := b.reg.SyncTables(b.ctx, sb); err != nil {
			t.Fatal(err)
		}
		if !b.obs.has("checked:" + want) {
			t.Errorf("events %q, want checked:%s", b.obs.all(), want)
		}
	}
	if _, ok := sb.Resolve(names.Key(et.Logical)); !ok || sb.ForkedBytes() != 12 {
		t.Errorf("b's map lacks a's tables (bytes %d)", sb.ForkedBytes())
	}
	// A table the registry no longer lists goes, unless b changed it
	// while the check ran.
	a.with(func(c sideconn.Conn) error {
		a.reg.DeleteEntry(a.ctx, c, sa, eu.Logical)
		return a.reg.BumpGeneration(a.ctx, c, sa)
	})
	old := entry(sb, "old", sandbox.KindCreated, 1)
	old.Epoch = b.reg.NextEpoch()
	b.reg.SetEntry(sb, names.Key(old.Logical), old)
	mine := entry(sb, "mine", sandbox.KindCreated, 1)
	up.On(`^SELECT s\.name, s\.owner, s\.created_at, g\.generation`).Times(1).Before(func(string) {
		mine.Epoch = b.reg.NextEpoch()
		b.reg.SetEntry(sb, names.Key(mine.Logical), mine)
	})
	if err := b.reg.SyncTables(b.ctx, sb); err != nil {
		t.Fatal(err)
	}
	if _, ok := sb.Resolve(names.Key(eu.Logical)); ok {
		t.Error("a table dropped from the registry is still in b's map")
	}
	if _, ok := sb.Resolve(names.Key(mine.Logical)); !ok {
		t.Error("b's own table, changed during the check, went")
	}
	if _, ok := sb.Resolve(names.Key(old.Logical)); ok {
		t.Error("b's table from before the check, which the registry lacks, stayed")
	}
	// Discarded through a: b's next check forgets it.
	if err := a.reg.Discard(a.ctx, sa, true, false, "discarded"); err != nil {
		t.Fatal(err)
	}
	if err := b.reg.SyncTables(b.ctx, sb); err != nil {
		t.Fatal(err)
	}
	if !sb.IsDiscarded() || !b.obs.has("checked:discarded") {
		t.Errorf("discarded %v, events %q", sb.IsDiscarded(), b.obs.all())
	}
	// A check that cannot read the registry fails.
	sc, _ := b.reg.Acquire(b.ctx, "other", "u", true)
	b.persist(sc)
	up.On(`^SELECT s\.name, s\.owner, s\.created_at, g\.generation`).Fail(1146, "42S02", "gone")
	if err := b.reg.SyncTables(b.ctx, sc); err == nil || !strings.Contains(err.Error(), "read the generation of sandbox other") {
		t.Errorf("SyncTables with the registry unreadable: %v", err)
	}
}

// TestSyncLease: with a sync lease, a check records it and the map is
// trusted without checking until it ends; a process changing the tables
// waits out other processes' leases.
func TestSyncLease(t *testing.T) {
	up := sessiontest.NewUpstream()
	cfg := config()
	cfg.SyncLease = time.Hour
	b := start(t, up, cfg, registry.Limits{}, nil)
	sb, _ := b.reg.Acquire(b.ctx, "pool", "u", true)
	// Not recorded yet: unchanged, and the lease is taken.
	for range 3 {
		if err := b.reg.SyncTables(b.ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	if n := up.Count(`^SELECT s\.name, s\.owner, s\.created_at, g\.generation`); n != 1 {
		t.Errorf("%d registry checks under one lease, want 1", n)
	}
	if rows := b.query("SELECT valid_until FROM `_sqlfork_meta`.readers WHERE sandbox_id = '" + sb.ID + "'"); len(rows) != 1 {
		t.Errorf("readers %v", rows)
	}
	if b.obs.has("checked:reloaded") || !b.obs.has("checked:unchanged") {
		t.Errorf("events %q", b.obs.all())
	}

	// a waits for b's lease (recorded here to end very soon) before
	// using a change.
	cfgA := config()
	cfgA.SyncLease = time.Millisecond
	a := start(t, up, cfgA, registry.Limits{}, nil)
	sa, _ := a.reg.Acquire(a.ctx, "pool", "u", true)
	if _, err := up.Exec("UPDATE `_sqlfork_meta`.readers SET valid_until = '" +
		time.Now().UTC().Add(20*time.Millisecond).Format("2006-01-02 15:04:05.000000") + "' WHERE sandbox_id = '" + sa.ID + "'"); err != nil {
		t.Fatal(err)
	}
	a.with(func(c sideconn.Conn) error { return a.reg.AwaitReaders(a.ctx, c, sa) })
	if !a.obs.has("awaited") {
		t.Errorf("events %q, want the leases awaited", a.obs.all())
	}
	// Once it ended, nothing is waited for; nor without a sync lease.
	a.obs.mu.Lock()
	a.obs.events = nil
	a.obs.mu.Unlock()
	a.with(func(c sideconn.Conn) error { return a.reg.AwaitReaders(a.ctx, c, sa) })
	if _, err := up.Exec("DELETE FROM `_sqlfork_meta`.readers WHERE sandbox_id = '" + sa.ID + "'"); err != nil {
		t.Fatal(err)
	}
	a.with(func(c sideconn.Conn) error { return a.reg.AwaitReaders(a.ctx, c, sa) })
	if a.obs.has("awaited") {
		t.Errorf("waited for leases that ended: %q", a.obs.all())
	}
	up.On(`^SELECT TIMESTAMPDIFF`).Fail(1146, "42S02", "gone")
	if err := a.reg.WithConn(a.ctx, func(c sideconn.Conn) error { return a.reg.AwaitReaders(a.ctx, c, sa) }); err == nil {
		t.Error("AwaitReaders with the registry unreadable succeeded")
	}
	up.On(`^REPLACE INTO .*readers`).Fail(1146, "42S02", "gone")
	if err := a.reg.SyncTables(a.ctx, sa); err == nil || !strings.Contains(err.Error(), "record a sync lease") {
		t.Errorf("SyncTables without its lease: %v", err)
	}
}

// sqlTime is t as the registry writes it.
func sqlTime(t time.Time) string { return sideconn.SQLTime(t) }

// row inserts a sandbox row as another (maybe gone) process wrote it.
func row(t *testing.T, up *sessiontest.Upstream, id, name string, kept bool, expires, last, lease time.Time) {
	t.Helper()
	k := "0"
	if kept {
		k = "1"
	}
	if _, err := up.Exec("INSERT INTO `_sqlfork_meta`.sandboxes (id, name, owner, kept, created_at, expires_at, last_active, lease_until, proxy_id) VALUES ('" +
		id + "', '" + name + "', 'u', " + k + ", " + sqlTime(last) + ", " + sqlTime(expires) + ", " + sqlTime(last) + ", " + sqlTime(lease) + ", 'gone')"); err != nil {
		t.Fatal(err)
	}
}

// tableRow inserts a registry row for a table of sandbox id.
func tableRow(t *testing.T, up *sessiontest.Upstream, id, tbl, kind string, created time.Time) {
	t.Helper()
	if _, err := up.Exec("INSERT INTO `_sqlfork_meta`.tables (sandbox_id, db, tbl, kind, phys_db, phys_tbl, row_count, bytes, created_at) VALUES ('" +
		id + "', 'app', '" + tbl + "', '" + kind + "', '" + sandbox.Schema(prefix, id, "app") + "', '" + tbl + "', 0, 0, " + sqlTime(created) + ")"); err != nil {
		t.Fatal(err)
	}
}

// TestReconcileAtStart: a process starting drops what the registry does
// not explain — schemas of unknown sandboxes, tables of known ones it does
// not list, forks a crash interrupted — and sandboxes that are due.
func TestReconcileAtStart(t *testing.T) {
	up := sessiontest.NewUpstream()
	first := start(t, up, config(), registry.Limits{}, nil)
	now := time.Now().UTC()
	past, future := now.Add(-time.Hour), now.Add(time.Hour)

	const known = "0000000a"
	row(t, up, known, "known", false, time.Time{}, now, future)
	kdb := sandbox.Schema(prefix, known, "app")
	for _, tbl := range []string{"t", "stray", "crashed", "stale", "running"} {
		up.AddTable(sessiontest.Table{DB: kdb, Name: tbl})
	}
	tableRow(t, up, known, "t", "fork", now)
	tableRow(t, up, known, "crashed", "forking", now) // its lock is free: its process is gone
	tableRow(t, up, known, "stale", "forking", past)  // older than any fork
	tableRow(t, up, known, "running", "forking", now) // a live fork holds its lock
	holder, err := up.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	lock := first.reg.LockName(known, names.Key(rewrite.Table{DB: "app", Name: "running"}))
	if rows, err := holder.Query(context.Background(), "SELECT GET_LOCK('"+lock+"', 0)"); err != nil || *rows[0][0] != "1" {
		t.Fatal(rows, err)
	}

	// An unknown sandbox's schemas, and schemas that are not a sandbox's.
	orphan := "0badcafe"
	up.AddTable(sessiontest.Table{DB: sandbox.Schema(prefix, orphan, "app"), Name: "t"})
	if _, err := up.Exec("CREATE DATABASE IF NOT EXISTS `" + sandbox.InfoSchema(prefix, orphan) + "`"); err != nil {
		t.Fatal(err)
	}
	up.AddTable(sessiontest.Table{DB: prefix + "_notanid_app", Name: "t"})
	up.AddTable(sessiontest.Table{DB: prefix + "_production", Name: "TABLES", Type: "VIEW"})

	// Sandboxes of processes that are gone, due or not.
	type sb struct {
		id, name              string
		kept                  bool
		expires, last, lease  time.Time
		holderAlive, holdLive bool
		stays                 bool
		reason                string
	}
	sbs := []sb{
		{id: "00000001", name: "lease-lapsed", lease: past, reason: "expired"},
		{id: "00000002", name: "grace-over", expires: past, lease: past, reason: "grace"},
		{id: "00000003", name: "in-grace", expires: future, lease: past, stays: true},
		{id: "00000004", name: "leased", lease: future, stays: true},
		{id: "00000005", name: "kept-expired", kept: true, expires: past, reason: "expired"},
		{id: "00000006", name: "kept-idle", kept: true, last: now.Add(-3 * time.Hour), reason: "expired"},
		{id: "00000007", name: "kept", kept: true, expires: future, stays: true},
		{id: "00000008", name: "holder-alive", lease: past, holderAlive: true, stays: true},
		{id: "00000009", name: "held", lease: past, holdLive: true, stays: true},
		{id: "0000000b", name: "no-lease", stays: true},
	}
	for _, s := range sbs {
		last := s.last
		if last.IsZero() {
			last = now
		}
		row(t, up, s.id, s.name, s.kept, s.expires, last, s.lease)
		up.AddTable(sessiontest.Table{DB: sandbox.Schema(prefix, s.id, "app"), Name: "t"})
		tableRow(t, up, s.id, "t", "fork", now)
		switch {
		case s.holderAlive: // its lease lapsed, but its process lives
			if _, err := up.Exec("INSERT INTO `_sqlfork_meta`.holders (sandbox_id, proxy_id, lease_until) VALUES ('" + s.id + "', 'slowproc', " + sqlTime(past) + ")"); err != nil {
				t.Fatal(err)
			}
			if _, err := holder.Query(context.Background(), "SELECT GET_LOCK('"+first.reg.LockName("slowproc", "alive")+"', 0)"); err != nil {
				t.Fatal(err)
			}
		case s.holdLive:
			if _, err := up.Exec("INSERT INTO `_sqlfork_meta`.holders (sandbox_id, proxy_id, lease_until) VALUES ('" + s.id + "', 'other', " + sqlTime(future) + ")"); err != nil {
				t.Fatal(err)
			}
		}
	}

	up.ClearLog()
	p := start(t, up, config(), registry.Limits{IdleTTL: time.Hour}, nil)
	for _, s := range sbs {
		db := sandbox.Schema(prefix, s.id, "app")
		if got := p.count("sandboxes", s.id) == 1 && up.HasSchema(db); got != s.stays {
			t.Errorf("%s: stays %v, want %v", s.name, got, s.stays)
		}
		if !s.stays && (p.count("tables", s.id) != 0 || !p.obs.has("discarded:"+s.reason)) {
			t.Errorf("%s: table rows left, or no %q in %q", s.name, s.reason, p.obs.all())
		}
	}
	for _, c := range []struct {
		tbl  string
		want bool
	}{{"t", true}, {"stray", false}, {"crashed", false}, {"stale", false}, {"running", true}} {
		if got := up.HasTable(kdb, c.tbl); got != c.want {
			t.Errorf("known sandbox's %s: present %v, want %v", c.tbl, got, c.want)
		}
	}
	if n := len(p.query("SELECT tbl FROM `_sqlfork_meta`.tables WHERE sandbox_id = '" + known + "' AND kind = 'forking'")); n != 1 {
		t.Errorf("%d fork markers left, want the running one", n)
	}
	if up.HasSchema(sandbox.Schema(prefix, orphan, "app")) || up.HasSchema(sandbox.InfoSchema(prefix, orphan)) {
		t.Error("an unknown sandbox's schemas are left")
	}
	if !up.HasTable(prefix+"_notanid_app", "t") || !up.HasTable(prefix+"_production", "TABLES") {
		t.Error("dropped what is not a sandbox's")
	}
	if w := up.ProductionWrites(prefix); len(w) > 0 {
		t.Errorf("wrote production: %q", w)
	}
	if u := up.Unknown(); len(u) > 0 {
		t.Errorf("statements the fake does not know: %q", u)
	}
}

// TestReconcileUndroppableOrphan: an orphaned schema the server will not
// drop does not stop the process; the next reap tries again.
func TestReconcileUndroppableOrphan(t *testing.T) {
	up := sessiontest.NewUpstream()
	start(t, up, config(), registry.Limits{}, nil)
	db := sandbox.Schema(prefix, "0badcafe", "app")
	up.AddTable(sessiontest.Table{DB: db, Name: "t"})
	up.On("^DROP DATABASE IF EXISTS `"+db+"`$").Fail(1010, "HY000", "Error dropping database")
	start(t, up, config(), registry.Limits{}, nil)
	if !up.HasSchema(db) {
		t.Error("the schema went")
	}
	// A failure that is no server error stops the start.
	up2 := sessiontest.NewUpstream()
	start(t, up2, config(), registry.Limits{}, nil)
	up2.AddTable(sessiontest.Table{DB: db, Name: "t"})
	up2.On("^DROP DATABASE IF EXISTS `" + db + "`$").Break()
	reg := registry.New(config(), up2.Dialer(), zap.NewNop(), nil)
	reg.SetNames(names)
	if err := reg.Start(context.Background()); err == nil {
		reg.Close()
		t.Error("Start succeeded with a broken connection")
	}
}

// TestReaperRenews: the reaper renews leases, merges tables another
// process recorded, notices sandboxes discarded or kept through another
// process, and lets go of those nobody here uses.
func TestReaperRenews(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, fastReaps(), registry.Limits{}, nil)
	b := start(t, up, config(), registry.Limits{}, nil)
	from := a.reg.Reaps()
	testkit.Eventually(t, "a's reaper to finish rounds", func() bool { return a.reg.Reaps() >= from+2 })

	// Recorded elsewhere: a's unrecorded named sandbox takes b's row and
	// tables.
	sa, _ := a.reg.Acquire(a.ctx, "pool", "u", true)
	sb, _ := b.reg.Acquire(b.ctx, "pool", "u", true)
	b.persist(sb)
	e := entry(sb, "t", sandbox.KindFork, 9)
	b.save(sb, e)
	testkit.Eventually(t, "a to adopt b's fork", func() bool { _, ok := sa.Resolve(names.Key(e.Logical)); return ok })
	testkit.Eventually(t, "a among the holders", func() bool { return a.count("holders", sa.ID) == 2 })

	// Kept through b.
	sb.KeepAs(time.Time{})
	b.with(func(c sideconn.Conn) error { return b.reg.PersistKeep(b.ctx, c, sb) })
	testkit.Eventually(t, "a to see it kept", func() bool { return sa.Info(false).State == "kept" })

	// An anonymous sandbox of a that b claims by its name is shared.
	anon, _ := a.reg.NewSandbox("", "u")
	_ = a.reg.Attach(anon)
	a.persist(anon)
	if anon.Shareable() {
		t.Fatal("anonymous sandbox shareable before anyone claimed it")
	}
	if got, err := b.reg.Acquire(b.ctx, anon.Name, "u", false); err != nil || got == nil {
		t.Fatalf("b claims %s: %v, %v", anon.Name, got, err)
	}
	testkit.Eventually(t, "a to notice the sharing", anon.Shareable)

	// Discarded through b.
	if err := b.reg.Discard(b.ctx, sb, true, false, "discarded"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "a to see it discarded", sa.IsDiscarded)

	// Looked at only (not attached): forgotten once idle, left in the
	// registry.
	kept, _ := b.reg.Acquire(b.ctx, "kept", "u", true)
	kept.KeepAs(time.Time{})
	b.with(func(c sideconn.Conn) error { return b.reg.PersistKeep(b.ctx, c, kept) })
	found, err := a.reg.Lookup(a.ctx, "kept")
	if err != nil || found == nil {
		t.Fatal(err)
	}
	a.reg.Remember(found)
	testkit.Eventually(t, "a to let go of an idle sandbox", func() bool {
		for _, s := range a.reg.Sandboxes() {
			if s.Name == "kept" {
				return false
			}
		}
		return true
	})
	if found.IsDiscarded() || a.count("sandboxes", found.ID) != 1 {
		t.Error("letting go discarded it")
	}
}

// TestKeptExpiresInMemory: a kept sandbox this process holds is discarded
// by force when its TTL ends.
func TestKeptExpiresInMemory(t *testing.T) {
	p := start(t, sessiontest.NewUpstream(), fastReaps(), registry.Limits{}, nil)
	sb, _ := p.reg.Acquire(p.ctx, "k", "u", true)
	sb.KeepAs(time.Now().Add(-time.Second))
	p.with(func(c sideconn.Conn) error { return p.reg.PersistKeep(p.ctx, c, sb) })
	testkit.Eventually(t, "the TTL's discard", sb.IsDiscarded)
	testkit.Eventually(t, "the expiry reported", func() bool { return p.obs.has("discarded:expired") })
}

// TestClaimFailsAfterAttach: a claim whose holder row cannot be written
// undoes its attach; a named sandbox then has its grace.
func TestClaimFailsAfterAttach(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, config(), registry.Limits{}, nil)
	b := start(t, up, config(), registry.Limits{Grace: time.Hour}, nil)
	sa, _ := a.reg.Acquire(a.ctx, "pool", "u", true)
	a.persist(sa)
	up.On(`^REPLACE INTO .*holders`).Times(1).Fail(1146, "42S02", "gone")
	if got, err := b.reg.Acquire(b.ctx, "pool", "u", false); err == nil || got != nil {
		t.Fatalf("Acquire = %v, %v; want the failure", got, err)
	}
	if c := b.reg.Counts(); c["grace"] != 1 || c["active"] != 0 {
		t.Errorf("counts %v, want the sandbox in its grace", c)
	}
}

// TestSideConnections: a side connection that cannot be opened, or not in
// time, is an error; the wait is reported.
func TestSideConnections(t *testing.T) {
	up := sessiontest.NewUpstream()
	cfg := config()
	cfg.SideConnections, cfg.ForkQueueTimeout = 1, time.Millisecond
	p := start(t, up, cfg, registry.Limits{}, nil)
	held, err := p.reg.Conn(p.ctx)
	if err != nil {
		t.Fatal(err)
	}
	var te *sideconn.TimeoutError
	if _, err := p.reg.Conn(p.ctx); !errors.As(err, &te) || !p.obs.has("timeout") {
		t.Errorf("second connection: %v, events %q", err, p.obs.all())
	}
	p.reg.Drop(held)
	up.FailDials(1, errors.New("refused"))
	var de *sideconn.DialError
	if _, err := p.reg.Conn(p.ctx); !errors.As(err, &de) {
		t.Errorf("dial failure: %T %v", err, err)
	}
	up.On(`^SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED$`).Times(1).Fail(1227, "42000", "denied")
	if _, err := p.reg.Conn(p.ctx); !errors.As(err, &de) {
		t.Errorf("isolation failure: %T %v", err, err)
	}
	up.On(`^SELECT @@sql_mode, @@sql_quote_show_create$`).Times(1).Break()
	if _, err := p.reg.Conn(p.ctx); !errors.As(err, &de) {
		t.Errorf("sql_mode failure: %T %v", err, err)
	}
	c, err := p.reg.Conn(p.ctx)
	if err != nil {
		t.Fatalf("after the failures: %v", err)
	}
	p.reg.Put(c)
}

// TestDiscardBehindLock: a discard whose schema drop times out behind a
// lock (a fill's key build, a transaction of a connection that is going)
// succeeds: the sandbox is forgotten, and the reaper drops the schema it
// left once the lock is gone.
func TestDiscardBehindLock(t *testing.T) {
	up := sessiontest.NewUpstream()
	a := start(t, up, fastReaps(), registry.Limits{}, nil)
	sa, _ := a.reg.Acquire(a.ctx, "box", "u", true)
	a.persist(sa)
	e := entry(sa, "t", sandbox.KindFork, 1)
	a.save(sa, e)
	up.AddTable(sessiontest.Table{DB: e.Phys.DB, Name: e.Phys.Name})
	up.On("^DROP DATABASE IF EXISTS `"+e.Phys.DB+"`$").Times(1).Fail(wire.ErLockWaitTimeout, "HY000",
		"Lock wait timeout exceeded; try restarting transaction")
	if err := a.reg.Discard(a.ctx, sa, true, false, "discarded"); err != nil {
		t.Fatalf("a discard behind a lock: %v", err)
	}
	if a.count("sandboxes", sa.ID) != 0 {
		t.Error("the sandbox is still in the registry")
	}
	testkit.Eventually(t, "the reaper to drop the locked schema", func() bool { return !up.HasSchema(e.Phys.DB) })
}
