package registry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfork/sqlfork-proxy/forker"

	"github.com/sqlfork/sqlfork-proxy/duration"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
	"go.uber.org/zap"
)

// Limits are the settings that may change while the manager runs.
type Limits struct {
	MaxSandboxes int
	DefaultTTL   time.Duration
	IdleTTL      time.Duration
	MaxTTL       time.Duration
	// Grace applies to sandboxes whose last connection closes after it
	// is set.
	Grace time.Duration
	// SideConnections and ForkQueueTimeout size the side connection
	// pool (0 keeps the current value).
	SideConnections  int
	ForkQueueTimeout time.Duration
	// FillRate bounds the rows per second each lazy fork's background
	// copy takes (0: no bound), for FillRateFor from its start (0: all
	// along); SetLimits applies them to the copies running too.
	FillRate    int64
	FillRateFor time.Duration
}

// CheckTTL refuses a kept sandbox's lifetime (0: until discarded) beyond
// MaxTTL.
func (l Limits) CheckTTL(ttl time.Duration) error {
	if l.MaxTTL <= 0 || ttl > 0 && ttl <= l.MaxTTL {
		return nil
	}
	asked := "no end"
	if ttl > 0 {
		asked = duration.Human(ttl)
	}
	return rewrite.Refuse(wire.ErUnknown, "a kept sandbox may live at most %s (max-sandbox-ttl), not %s; give a shorter TTL",
		duration.Human(l.MaxTTL), asked)
}

// Limits returns the current limits.
func (m *Registry) Limits() Limits {
	m.lmu.RLock()
	defer m.lmu.RUnlock()
	return m.lim
}

// Observer is the installed Observer.
func (m *Registry) Observer() Observer { return *m.obs.Load() }

// Conn takes a side connection from the bounded pool, waiting (in arrival
// order, at most the fork queue timeout) while all are busy. Whoever holds
// one must not ask for another before giving it back: with every
// connection held that way, each would wait on the others.
func (m *Registry) Conn(ctx context.Context) (sideconn.Conn, error) {
	c, err := m.pool.Get(ctx)
	if err != nil {
		var te *sideconn.TimeoutError
		if errors.As(err, &te) {
			m.Observer().SideConnTimedOut()
			st := m.pool.Stats()
			m.log.Warn("no side connection free in time", zap.Int("side_connections", te.Size),
				zap.Duration("waited", te.Waited), zap.Int("waiting", st.Waiting))
		}
		return nil, err
	}
	return c, nil
}

// dialSide opens a side connection for the pool.
func (m *Registry) dialSide(ctx context.Context) (sideconn.Conn, error) {
	c, err := m.dial(ctx)
	if err != nil {
		st := m.pool.Stats()
		m.log.Warn("could not open a side connection; waiting for an open one, if any", zap.Error(err),
			zap.Int("side_connections_open", st.InUse+st.Idle-1), zap.Int("side_connections", st.Size))
		return nil, &sideconn.DialError{Err: err, Size: m.Limits().SideConnections}
	}
	// Forks read their source at READ COMMITTED: one consistent read
	// that takes no locks.
	if _, err := c.Exec(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"); err != nil {
		_ = c.Close()
		return nil, &sideconn.DialError{Err: err, Size: m.Limits().SideConnections}
	}
	if err := sideconn.PlainTextMode(ctx, c); err != nil {
		_ = c.Close()
		return nil, &sideconn.DialError{Err: err, Size: m.Limits().SideConnections}
	}
	return c, nil
}

// Put returns a healthy connection to the pool.
func (m *Registry) Put(c sideconn.Conn) { m.pool.Put(c) }

// Drop closes a connection that failed.
func (m *Registry) Drop(c sideconn.Conn) { m.pool.Drop(c) }

// WithConn runs f on a side connection, dropping the connection when f
// fails with anything but a server error or a refusal of the proxy's own.
func (m *Registry) WithConn(ctx context.Context, f func(sideconn.Conn) error) error {
	c, err := m.Conn(ctx)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done { // f panicked: the connection goes back to the pool's count, closed
			m.Drop(c)
		}
	}()
	err = f(c)
	done = true
	var se interface{ ServerError() bool }
	var r *rewrite.Refusal
	if err != nil && !(errors.As(err, &se) && se.ServerError()) && !errors.As(err, &r) {
		m.Drop(c)
		return err
	}
	m.Put(c)
	return err
}

// nameID is the id of the sandbox called name: 8 hex digits of its hash.
func nameID(name string) string {
	sum := sha256.Sum256([]byte("sqlfork-sandbox\x00" + name))
	return hex.EncodeToString(sum[:4])
}

func randomID(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// LockName is the upstream GET_LOCK name for forking the table of key k
// in sandbox id (at most 64 characters). Sandbox ids of named sandboxes
// derive from their names, so the registry's secret (read at start, the
// same for every proxy process) keeps clients, who share the upstream
// account, from computing the name and holding the lock to stall a fork.
func (m *Registry) LockName(id, k string) string {
	sum := sha256.Sum256([]byte(m.lockSecret + "\x00" + id + "\x00" + k))
	return "sqlfork:" + hex.EncodeToString(sum[:20])
}

// NewSandbox registers a sandbox in memory.
func (m *Registry) NewSandbox(name, owner string) (*Sandbox, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.checkRoom(owner); err != nil {
		return nil, err
	}
	id := randomID(4)
	if name == "" {
		name = "sb-" + id
	} else {
		// A named sandbox has the same id in every process, so processes
		// creating it at the same moment make one sandbox, not two.
		id = nameID(name)
	}
	if _, ok := m.byName[name]; ok {
		return nil, rewrite.Refuse(wire.ErUnknown, "a sandbox named %q already exists; ATTACH it or choose another name", name)
	}
	now := time.Now().UTC()
	sb := &Sandbox{ID: id, Name: name, Owner: owner, Created: now, lastActive: now, tables: map[string]*sandbox.Entry{},
		gone: make(chan struct{})}
	m.byID[id], m.byName[name] = sb, sb
	return sb, nil
}

// checkRoom refuses a new sandbox of owner past max-sandboxes or the
// owner's max-sandboxes-per-user (m.mu held). Sandboxes in their grace
// count: they still hold their forks.
func (m *Registry) checkRoom(owner string) error {
	if max := m.Limits().MaxSandboxes; max > 0 && len(m.byID) >= max {
		return rewrite.Refuse(wire.ErConCount, "the proxy already holds %d sandboxes (its limit); discard some with SANDBOX DISCARD or ask the operator to raise --max-sandboxes", len(m.byID))
	}
	n := 0
	for _, sb := range m.byID {
		if sb.Owner == owner {
			n++
		}
	}
	if m.room == nil {
		return nil
	}
	return m.room(owner, n)
}

// getOrCreate returns the sandbox called name, creating it if needed.
func (m *Registry) getOrCreate(name, owner string) (*Sandbox, error) {
	m.mu.Lock()
	sb := m.byName[name]
	m.mu.Unlock()
	if sb != nil {
		return sb, nil
	}
	sb, err := m.NewSandbox(name, owner)
	if err != nil {
		m.mu.Lock()
		defer m.mu.Unlock()
		if sb := m.byName[name]; sb != nil {
			return sb, nil
		}
	}
	return sb, err
}

// Forget removes a sandbox from memory: it is retired, and attaches
// waiting for it to go look it up again.
func (m *Registry) Forget(sb *Sandbox) {
	m.mu.Lock()
	if m.byID[sb.ID] == sb {
		delete(m.byID, sb.ID)
	}
	if m.byName[sb.Name] == sb {
		delete(m.byName, sb.Name)
	}
	m.mu.Unlock()
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.moveLocked(phaseLetGo) // unless discarded
	sb.held = false
	if !sb.forgotten {
		sb.forgotten = true
		close(sb.gone)
	}
}

// Lookup finds a sandbox by name in memory or, failing that, in the
// registry (kept by another process or before a restart); one read from the
// registry is kept in memory only once remember is called. A sandbox this
// process is letting go of (a discard in flight) is waited for first.
func (m *Registry) Lookup(ctx context.Context, name string) (*Sandbox, error) {
	for {
		m.mu.Lock()
		sb := m.byName[name]
		m.mu.Unlock()
		if sb == nil {
			return m.load(ctx, name)
		}
		gone, retired := sb.goneIfRetired()
		if !retired {
			return sb, nil
		}
		if err := waitGone(ctx, gone, name); err != nil {
			return nil, err
		}
	}
}

// SetEntry records e in memory.
func (m *Registry) SetEntry(sb *Sandbox, k string, e *sandbox.Entry) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if old := sb.tables[k]; old != nil {
		sb.bytes -= old.Bytes
	}
	sb.tables[k] = e
	sb.bytes += e.Bytes
	sb.version++
	sb.changed = max(sb.changed, e.Epoch)
}

// warnOrphan logs, once per schema, orphaned schemas the server would not
// drop.
func (m *Registry) warnOrphan(schemas []string, err error) {
	for _, s := range schemas {
		if _, seen := m.undroppable.LoadOrStore(s, true); !seen {
			m.log.Warn("an orphaned sandbox schema could not be dropped; the reaper retries it, and an operator may remove what the server left in its directory",
				zap.String("schema", s), zap.Error(err))
		}
	}
}

// Registry holds this process's sandboxes and their lifetimes: the
// registry tables every proxy process shares, leases, graces, the reaper,
// and the side connections all of it runs on.
type Registry struct {
	cfg   Config
	log   *zap.Logger
	dial  sideconn.Dialer
	names sandbox.Names
	pool  *sideconn.Pool
	// room refuses a new sandbox of owner, who has owned of the
	// sandboxes this process holds (m.mu held); nil: no cap per user.
	room func(owner string, owned int) error

	lmu sync.RWMutex
	lim Limits
	// fillRate is lim.FillRate as every fill of this process reads it.
	fillRate *forker.Rate
	obs      atomic.Pointer[Observer]
	// reaps counts the reaper's finished rounds (Reaps).
	reaps atomic.Int64
	// census is the reaper's last count of the registry (Census).
	census atomic.Pointer[Census]

	proxyID    string
	lockSecret string // see lockName
	// live holds this process's liveness lock (liveness.go).
	live liveness

	mu     sync.Mutex
	byID   map[string]*Sandbox
	byName map[string]*Sandbox

	// epoch counts finished table changes (forks, creates, drops) across
	// sandboxes; sessions compare it with their transaction's start.
	epoch atomic.Uint64
	stop  chan struct{}
	done  chan struct{}
	// started: Start started the reaper, which closes done.
	started atomic.Bool
	// undroppable are the orphaned schemas the server would not drop that
	// were logged (once each).
	undroppable sync.Map
}

// Reaps is how many rounds the reaper finished (leases renewed, expired
// sandboxes and orphaned forks dropped): what waits for the reaper counts
// them instead of guessing its time.
func (m *Registry) Reaps() int64 { return m.reaps.Load() }

// IsAdmin reports whether user may manage every sandbox.
func (m *Registry) IsAdmin(user string) bool { return slices.Contains(m.cfg.Admins, user) }

// Counts returns how many sandboxes this process holds, by state.
func (m *Registry) Counts() map[string]int {
	out := map[string]int{"active": 0, "kept": 0, "grace": 0}
	for _, sb := range m.Sandboxes() {
		sb.mu.Lock()
		if !sb.retiredLocked() {
			out[sb.stateLocked()]++
		}
		sb.mu.Unlock()
	}
	return out
}

// Sandboxes are the sandboxes this process holds, as of now.
func (m *Registry) Sandboxes() []*Sandbox {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Sandbox, 0, len(m.byID))
	for _, sb := range m.byID {
		out = append(out, sb)
	}
	return out
}

// New makes the registry of this process, with its side
// connection pool (sized by cfg until setLimits); room refuses sandboxes
// past a user's cap. start begins it.
func New(cfg Config, dial sideconn.Dialer, log *zap.Logger, room func(owner string, owned int) error) *Registry {
	m := &Registry{cfg: cfg, log: log, dial: dial, names: sandbox.Names{Prefix: cfg.Prefix}, room: room, fillRate: forker.NewRate(0),
		byID: map[string]*Sandbox{}, byName: map[string]*Sandbox{},
		proxyID: randomID(6), stop: make(chan struct{}), done: make(chan struct{})}
	m.pool = sideconn.NewPool(cfg.SideConnections, cfg.ForkQueueTimeout, m.dialSide)
	// What SetLimits keeps when it is given no pool settings.
	m.lim.SideConnections, m.lim.ForkQueueTimeout = cfg.SideConnections, cfg.ForkQueueTimeout
	m.SetObserver(nop{})
	return m
}

// Start takes this process's liveness lock, reconciles the registry with
// the schemas present and starts the reaper; on failure it closes the
// pool (nobody else would).
func (m *Registry) Start(ctx context.Context) error {
	m.keepAlive(ctx)
	if err := m.reconcile(ctx); err != nil {
		m.pool.Close()
		m.dropAlive()
		return err
	}
	m.started.Store(true)
	go m.reaper()
	return nil
}

// Close stops the reaper (if Start started it), closes the side
// connections and gives up the liveness lock; later calls do nothing.
func (m *Registry) Close() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	if m.started.Load() {
		<-m.done
	}
	m.stopFills()
	m.pool.Close()
	m.dropAlive()
}

// SetLimits installs l. Its pool size and queue timeout apply when
// positive (the timeout at most the fork timeout); otherwise the pool
// keeps its own. Its fill rate applies to the fills running as well
// (FillRate).
func (m *Registry) SetLimits(l Limits) {
	m.lmu.Lock()
	defer m.lmu.Unlock()
	if l.SideConnections <= 0 {
		l.SideConnections = m.lim.SideConnections
	}
	if l.ForkQueueTimeout > 0 {
		l.ForkQueueTimeout = min(l.ForkQueueTimeout, m.cfg.ForkTimeout)
	} else {
		l.ForkQueueTimeout = m.lim.ForkQueueTimeout
	}
	m.lim = l
	m.fillRate.Set(l.FillRate, l.FillRateFor)
	m.pool.Resize(l.SideConnections, l.ForkQueueTimeout)
}

// FillRate is the rate every fill of this process copies at: SetLimits
// changes it for the fills running too.
func (m *Registry) FillRate() *forker.Rate { return m.fillRate }

// SetObserver installs o (nil keeps the current one).
func (m *Registry) SetObserver(o Observer) {
	if o != nil {
		m.obs.Store(&o)
	}
}

// Epoch is the count of finished table changes (forks, creates, drops)
// across sandboxes; nextEpoch counts one more and returns it.
func (m *Registry) Epoch() uint64 { return m.epoch.Load() }

// NextEpoch: see epochNow.
func (m *Registry) NextEpoch() uint64 { return m.epoch.Add(1) }

// PoolStats reports the side connection pool.
func (m *Registry) PoolStats() sideconn.Stats { return m.pool.Stats() }

// SetNames installs how names compare, once the upstream said
// (lower_case_table_names).
func (m *Registry) SetNames(n sandbox.Names) { m.names = n }

// EndGraces makes the grace of every sandbox in one end now, as if it had
// run out: the reaper discards them (or lets go of them) at its next
// round. For tests.
func (m *Registry) EndGraces() {
	for _, sb := range m.Sandboxes() {
		sb.mu.Lock()
		if !sb.graceUntil.IsZero() {
			sb.graceUntil = time.Now().Add(-time.Second)
		}
		sb.mu.Unlock()
	}
}

// LifeLock is the name of the upstream life lock of the sandbox called
// name (lockLife). For tests.
func (m *Registry) LifeLock(name string) string { return m.LockName(name, "life") }

// NameID is the id of the sandbox called name, the same in every process.
func NameID(name string) string { return nameID(name) }
