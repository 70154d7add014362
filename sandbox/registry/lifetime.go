package registry

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Lifetimes (docs/SANDBOXES.md, "Lifecycle and registry"):
//
//   - an anonymous sandbox (sb-<id>) ends with its last connection;
//   - a named one outlives its last connection in a process for the grace
//     period (Limits.Grace): the process keeps it in memory and among the
//     registry's holders, so a pool that closes and reopens connections,
//     through this process or another sharing the upstream, finds it again;
//   - SANDBOX DISCARD, the admin API and a kept sandbox's TTL end it
//     whatever holds it; the end of its grace, idle expiry and the lease
//     of a process that is gone end only one that no process holds.
//
// Across processes the registry decides, under the sandbox's life lock (an
// upstream GET_LOCK named after the sandbox, see lockLife): a process
// claims a sandbox (reads its row, records itself as a holder, ends a grace
// the registry records), records it for the first time, or discards it
// (reads its holders and kept flag, deletes its rows, drops its schemas)
// only while holding that lock. So a claim waits for a discard in flight in
// any process and then creates the sandbox afresh, and a discard that
// comes after a claim finds a holder and is called off. Within a process,
// a sandbox being discarded moves to phase discarded first (phase.go: the
// point after which the discard is no longer called off); attaches wait
// until it is forgotten, then look it up again.
//
// The verbs, by what they change:
//
//	connections here   Acquire (a login or ATTACH: find or claim, then attach),
//	                   Attach / attachLocked / attachIfLive (count one more),
//	                   unattach (one fewer), Detach (one fewer; the last one
//	                   starts the grace or discards)
//	the registry       claim (take a sandbox recorded elsewhere: record this
//	                   process as a holder), Persist / PersistKeep (its rows)
//	the phase          letGo (live → let go: others carry it on), end (→
//	                   discarded), Forget (out of memory; gone is closed)
//	a discard          Discard (end, then discardRecorded: rows and schemas,
//	                   unless carriedOn: another process still holds it),
//	                   discardedElsewhere (the registry lost it: end here)

// lifeLockWait bounds the wait for a sandbox's life lock: another
// connection claiming the sandbox (a few registry statements) or
// discarding it (dropping its schemas).
const lifeLockWait = time.Minute

// lockLife takes the life lock of the sandbox called name on c. It waits
// up to lifeLockWait, or with try not at all: ok is false when another
// connection holds it.
func (m *Registry) lockLife(ctx context.Context, c sideconn.Conn, name string, try bool) (release func(), ok bool, err error) {
	return m.lockSandbox(ctx, c, name, "life", try)
}

// lockSchemas takes the lock of the schemas of the sandbox with id on c,
// as lockLife does: a sandbox is recorded under it, and schemas the
// registry does not know are dropped under it, so that the reaper never
// drops the schemas of a sandbox recorded (with the id a name gives)
// after it read the registry.
func (m *Registry) lockSchemas(ctx context.Context, c sideconn.Conn, id string, try bool) (release func(), ok bool, err error) {
	return m.lockSandbox(ctx, c, id, "schemas", try)
}

// lockSandbox takes the upstream lock k of the sandbox called (or with
// id) name on c, waiting up to lifeLockWait, or with try not at all.
func (m *Registry) lockSandbox(ctx context.Context, c sideconn.Conn, name, k string, try bool) (release func(), ok bool, err error) {
	lock := quote.String(m.LockName(name, k))
	wait := int(lifeLockWait.Seconds())
	if try {
		wait = 0
	}
	rows, err := c.Query(ctx, "SELECT GET_LOCK("+lock+", "+strconv.Itoa(wait)+")")
	if err != nil {
		return nil, false, fmt.Errorf("lock sandbox %s: %w", name, err)
	}
	if len(rows) != 1 || rows[0][0] == nil || *rows[0][0] != "1" {
		if try {
			return nil, false, nil
		}
		return nil, false, rewrite.Refuse(wire.ErLockWaitTimeout, "timed out after %s waiting for another connection "+
			"to finish claiming or discarding sandbox %q; retry", lifeLockWait, name)
	}
	return func() { _, _ = c.Query(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+lock+")") }, true, nil
}

// Authorize checks that user may use sb: it is theirs, or they are an
// admin. Others get the same error as for a sandbox that does not exist.
func (m *Registry) Authorize(user string, sb *Sandbox) error {
	if sb.Owner == user || m.IsAdmin(user) {
		return nil
	}
	return rewrite.Refuse(wire.ErUnknown, "no sandbox named %q; SANDBOX LIST shows yours", sb.Name)
}

// Attach binds one more connection to sb, a sandbox the caller has just
// made.
func (m *Registry) Attach(sb *Sandbox) error {
	if !sb.attachIfLive() {
		return rewrite.Refuse(wire.ErUnknown, "sandbox %q was discarded", sb.Name)
	}
	return nil
}

// Acquire binds one more connection of user to the sandbox called name:
// the one this process holds, else (claim) the one the registry records,
// else, with create, a new one. A discard in flight is waited for: it is
// called off by this attach, or it ends before the name is looked up
// again. The sandbox is nil (and no error) when there is none and create
// is not set.
func (m *Registry) Acquire(ctx context.Context, name, user string, create bool) (*Sandbox, error) {
	for {
		sb, gone, err := m.attachHeld(name, user)
		switch {
		case err != nil || sb != nil:
			return sb, err
		case gone != nil:
			if err := waitGone(ctx, gone, name); err != nil {
				return nil, err
			}
			continue
		}
		sb, retry, err := m.claim(ctx, name, user, create)
		if err != nil || !retry {
			return sb, err
		}
	}
}

// attachHeld binds one more connection to the sandbox called name when
// this process holds it: in memory, not let go of, and either never
// recorded in the registry or recorded with this process among its
// holders — no other process discards it without force then, so no
// upstream round trip is needed. gone is set when this process is letting
// go of it: wait, then look again. All nil: claim it.
func (m *Registry) attachHeld(name, user string) (sb *Sandbox, gone <-chan struct{}, err error) {
	m.mu.Lock()
	sb = m.byName[name]
	m.mu.Unlock()
	if sb == nil {
		return nil, nil, nil
	}
	if err := m.Authorize(user, sb); err != nil {
		return nil, nil, err
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	switch {
	case sb.retiredLocked():
		return nil, sb.gone, nil
	case sb.persisted && !sb.held:
		return nil, nil, nil
	}
	sb.attachLocked()
	return sb, nil, nil
}

// claim binds one more connection of user to the sandbox called name as
// the registry has it, under its life lock, and records this process among
// its holders. With no registry row, the sandbox is the one in memory that
// was never recorded, else, with create, a new one. retry asks the caller
// to look again (this process let go of the sandbox meanwhile).
func (m *Registry) claim(ctx context.Context, name, user string, create bool) (sb *Sandbox, retry bool, err error) {
	err = m.WithConn(ctx, func(c sideconn.Conn) error {
		release, _, err := m.lockLife(ctx, c, name, false)
		if err != nil {
			return err
		}
		defer release()
		found, err := m.loadOn(ctx, c, name)
		switch {
		case err != nil:
			return err
		case found == nil:
			sb, retry, err = m.claimUnrecorded(name, user, create)
			return err
		}
		if err := m.Authorize(user, found); err != nil {
			return err
		}
		if sb = m.merge(found); !sb.attachIfLive() {
			sb, retry = nil, true
			return nil
		}
		sb.markShared() // recorded: another process may use it too
		if err := m.holdClaimed(ctx, c, sb); err != nil {
			m.unattach(sb)
			sb = nil
			return err
		}
		return nil
	})
	return sb, retry, err
}

// claimUnrecorded is claim for a name the registry does not know (under
// its life lock): a sandbox of that name this process recorded was
// discarded through another process; one it never recorded is still the
// one to use.
func (m *Registry) claimUnrecorded(name, user string, create bool) (*Sandbox, bool, error) {
	m.mu.Lock()
	cur := m.byName[name]
	m.mu.Unlock()
	if cur != nil {
		if _, retired := cur.goneIfRetired(); retired {
			return nil, true, nil
		}
		if cur.isPersisted() {
			m.discardedElsewhere(cur)
			cur = nil
		}
	}
	if cur == nil {
		if !create {
			return nil, false, nil
		}
		var err error
		if cur, err = m.getOrCreate(name, user); err != nil {
			return nil, false, err
		}
	}
	if err := m.Authorize(user, cur); err != nil {
		return nil, false, err
	}
	if !cur.attachIfLive() {
		return nil, true, nil
	}
	return cur, false, nil
}

// merge makes found, just read from the registry, the sandbox of its name
// in memory, or brings the one already there up to date with it. Lock
// order: m.mu before a sandbox's mu.
func (m *Registry) merge(found *Sandbox) *Sandbox {
	m.mu.Lock()
	cur := m.byName[found.Name]
	if cur == nil || cur.IsRetired() {
		m.byID[found.ID], m.byName[found.Name] = found, found
		m.mu.Unlock()
		return found
	}
	m.mu.Unlock()
	cur.mu.Lock()
	cur.persisted = true
	cur.marks.newest(found.marks)
	if found.kept {
		cur.kept, cur.expires, cur.graceUntil = true, found.expires, time.Time{}
	}
	cur.mu.Unlock()
	for k, e := range found.tables {
		if have, ok := cur.Resolve(k); !ok || have.Kind != e.Kind {
			m.SetEntry(cur, k, e)
		}
	}
	return cur
}

// holdClaimed records this process as a holder of sb, to which a claim
// has just bound a connection, and ends the grace the registry records
// for it: it is in use.
func (m *Registry) holdClaimed(ctx context.Context, c sideconn.Conn, sb *Sandbox) error {
	if err := m.hold(ctx, c, sb); err != nil {
		return err
	}
	if err := m.clearGrace(ctx, c, sb, ", last_active = "+sideconn.SQLTime(time.Now())); err != nil {
		return fmt.Errorf("record the use of sandbox %s: %w", sb.Name, err)
	}
	return nil
}

// unattach undoes the attach of a claim that failed afterwards. It starts
// no discard (the caller holds the life lock, which a discard takes): a
// named sandbox left without connections gets its grace, any other is let
// go of by the reaper and ends with its lease.
func (m *Registry) unattach(sb *Sandbox) {
	grace := m.Limits().Grace
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.attached--
	if sb.attached <= 0 && !sb.kept && !sb.anonymous() && grace > 0 {
		sb.graceUntil = time.Now().UTC().Add(grace)
	}
}

// Left is what became of a sandbox a connection left (Detach).
type Left int

// What became of a sandbox a connection left.
const (
	// LeftInUse: other connections use it, or it is kept.
	LeftInUse Left = iota
	// LeftInGrace: named, it lasts for Limits.Grace without connections.
	LeftInGrace
	// LeftDiscarded: its forks went with it.
	LeftDiscarded
)

// Detach unbinds a connection. When it was the last of an unkept sandbox
// here, a named one starts its grace (Limits.Grace) and any other is
// discarded (synchronously: it runs as a connection ends) — unless another
// process holds it, which then carries it on. It says which.
func (m *Registry) Detach(sb *Sandbox) Left {
	grace := m.Limits().Grace
	now := time.Now().UTC()
	sb.mu.Lock()
	sb.attached--
	sb.lastActive = now
	last := sb.attached <= 0 && !sb.kept && !sb.retiredLocked()
	graced := last && grace > 0 && !sb.anonymous()
	if graced {
		sb.graceUntil = now.Add(grace)
	}
	if last && !graced {
		sb.moveLocked(phaseEnding)
	}
	persisted, until := sb.persisted, sb.graceUntil
	sb.mu.Unlock()
	if !last {
		return LeftInUse
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if graced {
		m.log.Debug("sandbox in its grace", zap.String("sandbox", sb.Name), zap.Time("until", until))
		if persisted {
			m.recordGrace(ctx, sb)
		}
		return LeftInGrace
	}
	err := m.Discard(ctx, sb, false, false, "last_connection")
	sb.mu.Lock()
	sb.moveLocked(phaseLive) // when still ending: the discard did not happen, and the reaper lets go of it
	sb.mu.Unlock()
	if err != nil {
		// Its lease runs out and the reaper (here or in another
		// process) drops it later.
		m.log.Warn("discard sandbox after last connection", zap.String("sandbox", sb.Name), zap.Error(err))
	}
	return LeftDiscarded
}

// recordGrace writes the end of sb's grace to the registry, where other
// processes read it: after a crash of this one, the sandbox lasts until
// then (and its lease); SANDBOX LIST shows it. A connection that uses the
// sandbox again clears it (claim, or the next renewal of its lease).
// Under sb.graceMu (see clearGrace), as memory has it then: nothing when
// a connection came back meanwhile (it clears the grace, or has).
func (m *Registry) recordGrace(ctx context.Context, sb *Sandbox) {
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		sb.graceMu.Lock()
		defer sb.graceMu.Unlock()
		sb.mu.Lock()
		until := sb.graceUntil
		if sb.attached > 0 {
			until = time.Time{}
		}
		sb.mu.Unlock()
		if until.IsZero() {
			return nil
		}
		_, err := c.Exec(ctx, "UPDATE "+m.names.Q("sandboxes")+" SET expires_at = "+sideconn.SQLTime(until)+
			" WHERE id = "+quote.String(sb.ID)+" AND kept = 0")
		return err
	})
	if err != nil {
		m.log.Warn("record the grace of a sandbox", zap.String("sandbox", sb.Name), zap.Error(err))
	}
}

// Discard ends sb for reason: its registry rows go, then its schemas. With
// force it goes whatever holds it (SANDBOX DISCARD, the admin API, TTL).
// Without, it is called off when a connection attached to it meanwhile or
// it was kept — here, or in another process: under the sandbox's life lock
// the registry's kept flag and holders are read first, and other holders
// carry it on. With try it gives up at once rather than wait for a fork or
// another process's claim (the reaper must not stall; it tries again).
func (m *Registry) Discard(ctx context.Context, sb *Sandbox, force, try bool, reason string) error {
	if try {
		if !sb.forkMu.TryLock() {
			return nil
		}
	} else {
		sb.forkMu.Lock() // no fork may run while the schemas go
	}
	defer sb.forkMu.Unlock()
	if !sb.isPersisted() {
		if err := m.settleUnrecordedXA(ctx, sb, try); err != nil {
			return err
		}
		if m.end(sb, force) {
			m.Forget(sb)
			m.discarded(sb.Name, reason)
		}
		return nil
	}
	ended := false
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		var err error
		ended, err = m.discardRecorded(ctx, c, sb, force, try)
		return err
	})
	if ended {
		// Forgotten only now: until the schemas are gone, an attach of
		// the same name waits instead of making a new sandbox with the
		// same id over the old one's leftovers.
		m.Forget(sb)
		m.discarded(sb.Name, reason)
	}
	return err
}

// discardRecorded is discard of a sandbox the registry has, under its
// life lock; ended reports that sb was discarded (even when dropping its
// schemas then failed: the reaper's reconciliation drops what is left).
func (m *Registry) discardRecorded(ctx context.Context, c sideconn.Conn, sb *Sandbox, force, try bool) (ended bool, err error) {
	release, ok, err := m.lockLife(ctx, c, sb.Name, try)
	if err != nil || !ok {
		return false, err
	}
	defer release()
	if !force {
		if carried, err := m.carriedOn(ctx, c, sb); err != nil || carried {
			return false, err
		}
	}
	tries := xaTries
	if try {
		tries = 1 // the reaper does not stall: the next reap tries again
	}
	if err := m.clearXA(ctx, c, sb.ID, sb.Name, tries); err != nil {
		return false, err
	}
	if !m.end(sb, force) {
		return false, nil
	}
	sb.StopFills()
	return true, m.dropSandbox(ctx, c, sb.ID)
}

// carriedOn reports, under sb's life lock, whether another process carries
// sb on, so that it must not be discarded without force: it holds sb (this
// process then lets go of it: the last holder ends it), or it kept sb
// (then sb is kept here too). A sandbox gone from the registry was
// discarded through another process.
func (m *Registry) carriedOn(ctx context.Context, c sideconn.Conn, sb *Sandbox) (bool, error) {
	rows, err := c.Query(ctx, "SELECT kept, expires_at FROM "+m.names.Q("sandboxes")+" WHERE id = "+quote.String(sb.ID))
	switch {
	case err != nil:
		return false, fmt.Errorf("read registry: %w", err)
	case len(rows) == 0:
		m.discardedElsewhere(sb)
		return true, nil
	case sideconn.Str(rows[0][0]) == "1":
		sb.KeepAs(sideconn.ParseTime(rows[0][1]))
		return true, nil
	}
	held, err := m.heldElsewhere(ctx, c, sb)
	if err != nil || !held {
		return false, err
	}
	if sb.letGo() {
		err = m.release(ctx, c, sb)
		m.Forget(sb)
	}
	return true, err
}

// end marks sb discarded (see Sandbox.end) and counts a table change.
func (m *Registry) end(sb *Sandbox, force bool) bool {
	if !sb.end(force) {
		return false
	}
	m.epoch.Add(1)
	return true
}

// discardedElsewhere forgets sb, which another process discarded: its
// sessions here get "sandbox was discarded" at their next statement.
func (m *Registry) discardedElsewhere(sb *Sandbox) {
	if m.end(sb, true) {
		m.Forget(sb)
		m.log.Info("sandbox discarded elsewhere", zap.String("sandbox", sb.Name))
	}
}

// discarded reports the sandbox called name discarded, for metrics and
// the log.
func (m *Registry) discarded(name, reason string) {
	m.log.Info("sandbox discarded", zap.String("sandbox", name), zap.String("reason", reason))
	m.Observer().Discarded(reason)
}

// waitGone waits until a sandbox this process is letting go of is
// forgotten.
func waitGone(ctx context.Context, gone <-chan struct{}, name string) error {
	select {
	case <-gone:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for sandbox %s to be discarded: %w", name, ctx.Err())
	}
}

// ---- a sandbox's own state (each under its mu) ----

// anonymous reports a sandbox named after its id (sb-<id>): it ends with
// its last connection.
func (sb *Sandbox) anonymous() bool { return sb.Name == "sb-"+sb.ID }

// attachLocked counts one more connection (sb.mu held): it is in use, so
// its grace is over.
func (sb *Sandbox) attachLocked() {
	sb.attached++
	sb.lastActive = time.Now().UTC()
	sb.graceUntil = time.Time{}
}

// attachIfLive counts one more connection unless this process let go of
// sb.
func (sb *Sandbox) attachIfLive() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.retiredLocked() {
		return false
	}
	sb.attachLocked()
	return true
}

// end marks sb discarded — unless, without force, a connection attached
// to it or it was kept meanwhile, or this process let go of it. From then
// on attaches wait for it to be forgotten rather than call the discard
// off.
func (sb *Sandbox) end(force bool) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if !force && (sb.retiredLocked() || sb.attached > 0 || sb.kept) || !sb.moveLocked(phaseDiscarded) {
		return false
	}
	sb.version++
	return true
}

// letGo marks sb let go of by this process (other processes, or the
// registry, carry it on) unless a connection attached to it meanwhile.
func (sb *Sandbox) letGo() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.attached <= 0 && sb.moveLocked(phaseLetGo)
}

// KeepAs records that sb is kept until expires (zero: until discarded).
func (sb *Sandbox) KeepAs(expires time.Time) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	sb.kept, sb.expires, sb.graceUntil = true, expires, time.Time{}
}

// graceOver reports an unkept sandbox no connection here uses whose grace
// has ended.
func (sb *Sandbox) graceOver(now time.Time) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return !sb.kept && !sb.retiredLocked() && sb.attached <= 0 && !sb.graceUntil.IsZero() && now.After(sb.graceUntil)
}

// idle reports a sandbox no connection here used for d, and not in its
// grace, with no fill running here: nothing here needs it in memory.
func (sb *Sandbox) idle(now time.Time, d time.Duration) bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.phase != phaseEnding && sb.attached <= 0 && sb.graceUntil.IsZero() && now.Sub(sb.lastActive) > d && !sb.fillingHereLocked()
}

func (sb *Sandbox) isPersisted() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.persisted
}

func (sb *Sandbox) IsRetired() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.retiredLocked()
}

func (sb *Sandbox) isAttached() bool {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.attached > 0
}

// goneIfRetired returns what closes when sb is forgotten, and whether this
// process is letting go of it.
func (sb *Sandbox) goneIfRetired() (<-chan struct{}, bool) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.gone, sb.retiredLocked()
}
