package capture

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Change capture (forker/capture.go) in a sandbox. Every full fork gets,
// before the sandbox can reach it, a side table in the sandbox's own
// database (InfoSchema) and three triggers that keep there the fork-time
// image of each row the sandbox changes. Its state is recorded in the
// registry's captures table, readable by every proxy process:
//
//   - rows: changes are captured; SANDBOX DIFF reads the side table.
//   - full: they are not (a table without a primary or unique key, a fork
//     without rows, capture turned off, or DDL that the triggers cannot
//     follow): DIFF compares the whole fork with production.
//
// The triggers are hidden from the sandbox (the TRIGGERS view). The
// client's ALTER TABLE of a fork, alone in its input, is followed: the
// side table and the triggers are made anew for its columns once it ran
// (carry.go). Before any other DDL of the fork they are dropped: a trigger
// naming a column an ALTER dropped would fail the sandbox's writes (1054),
// one on a table RENAME moves to another database fails the RENAME
// (1435), and TRUNCATE or partition maintenance change rows without firing
// them.

// Tracker installs, reads and removes the change captures of forks.
type Tracker struct {
	cfg   Config
	log   *zap.Logger
	names sandbox.Names
	reg   *registry.Registry
}

// Config is what a Tracker needs of the settings.
type Config struct {
	Prefix string
	// NoDiffCapture turns capture off: DIFF compares forks whole.
	NoDiffCapture bool
}

// sandboxDDL starts the reason of a capture stopped by the sandbox's DDL.
const SandboxDDL = "changed by "

// Capture states.
const (
	Rows = "rows"
	Full = "full"
)

// Info is a fork's row in the captures table.
type Info struct {
	State, Reason string
	KeyKind       string
	Key           []string
	Side          rewrite.Table
	Trigger       string
	// cascades are the foreign keys of the table whose actions change its
	// rows, each with the triggers on its parent's fork that capture them.
	Cascades []Cascade
	// Base are the table's columns when it was forked (production's then);
	// nil for a capture recorded before they were.
	Base []forker.Column
}

// Cascade is a foreign key of a captured table whose ON DELETE or ON UPDATE
// action changes its rows, and the triggers that capture what it changes,
// on the fork of its parent (Parent is the logical table).
type Cascade struct {
	FK       forker.ForeignKey
	Triggers []string `json:",omitempty"`
}

// captureOf is the capture of sb's fork phys: its side table and trigger
// names, from a hash of the fork's name.
func (m *Tracker) captureOf(sbID string, phys rewrite.Table, shape forker.Shape) forker.Capture {
	sum := sha256.Sum256([]byte(phys.DB + "\x00" + phys.Name))
	h := hex.EncodeToString(sum[:8])
	return forker.Capture{Fork: phys, Side: rewrite.Table{DB: sandbox.InfoSchema(m.cfg.Prefix, sbID), Name: "c_" + h},
		Trigger: m.cfg.Prefix + "_" + h, Marker: m.cfg.Prefix + "_existed", Shape: shape}
}

// Start captures the changes of the fork phys of t, just made (the
// sandbox cannot reach it yet), and records how. A fork whose changes
// cannot be captured is recorded "full", with the reason: its diff
// compares it whole.
func (m *Tracker) Start(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t, phys rewrite.Table, mode forker.Mode) error {
	_, err := m.start(ctx, c, sb, t, phys, mode)
	return err
}

// StartLazy captures the changes of phys, the lazy fork of t just made
// (empty), as Start does, and returns its capture; an error when its
// changes cannot be captured by rows, which a lazy fork needs.
func (m *Tracker) StartLazy(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t, phys rewrite.Table) (forker.Capture, error) {
	info, err := m.start(ctx, c, sb, t, phys, forker.Full)
	if err != nil {
		return forker.Capture{}, err
	}
	if info.State != Rows {
		return forker.Capture{}, fmt.Errorf("%w: its changes are not captured by rows (%s)", forker.ErrLazyUnavailable, info.Reason)
	}
	shape, err := forker.ReadShape(ctx, c, phys)
	if err != nil {
		return forker.Capture{}, err
	}
	return m.captureOf(sb.ID, phys, shape), nil
}

// Of is the capture sb's fork phys of a table of shape gets: its side
// table's and triggers' names.
func (m *Tracker) Of(sbID string, phys rewrite.Table, shape forker.Shape) forker.Capture {
	return m.captureOf(sbID, phys, shape)
}

// start is Start, returning what it recorded.
func (m *Tracker) start(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, t, phys rewrite.Table, mode forker.Mode) (Info, error) {
	info := Info{State: Full, KeyKind: "row"}
	if m.cfg.NoDiffCapture {
		info.Reason = "change capture is off (--diff-capture=false)"
		return info, m.saveCapture(ctx, c, sb.ID, t, info)
	}
	shape, err := forker.ReadShape(ctx, c, phys)
	if err != nil {
		return info, err
	}
	cp := m.captureOf(sb.ID, phys, shape)
	info.KeyKind, info.Key, info.Side, info.Trigger, info.Base = shape.KeyKind, shape.Key, cp.Side, cp.Trigger, shape.Columns
	switch {
	case mode != forker.Full:
		info.Reason = "forked without its rows, for a TRUNCATE or DROP"
	case len(shape.Key) == 0:
		info.Reason = "no primary key or unique key of NOT NULL columns"
	default:
		cascades, why, err := m.cascadesOf(ctx, c, t, shape)
		if err != nil {
			return info, err
		}
		if why != "" {
			info.Reason = why
			break
		}
		info.Cascades = cascades
		if _, ok := shape.Column(cp.Marker); ok {
			info.Reason = "a column is named " + cp.Marker
			break
		}
		fresh := false // the side table's database made now: no side table to clear
		if !sb.SideDBMade() {
			n, err := c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quote.Ident(cp.Side.DB))
			if err != nil {
				return info, fmt.Errorf("create the sandbox's own database: %w", err)
			}
			fresh = n == 1
			sb.MarkSideDB()
		}
		if err := forker.InstallCapture(ctx, c, cp, fresh); err != nil {
			m.log.Warn("change capture failed: the sandbox's diff compares the table whole", zap.String("fork", phys.String()), zap.Error(err))
			info.Reason = "its capture triggers could not be made: " + err.Error()
			break
		}
		info.State = Rows
	}
	return info, m.saveCapture(ctx, c, sb.ID, t, info)
}

// saveCapture writes t's row in the captures table.
func (m *Tracker) saveCapture(ctx context.Context, c sideconn.Conn, id string, t rewrite.Table, info Info) error {
	key, _ := json.Marshal(info.Key)
	if info.Key == nil {
		key = []byte("[]")
	}
	cascades, err := json.Marshal(info.Cascades)
	if err != nil {
		return fmt.Errorf("record the capture of %s: %w", t, err)
	}
	base, err := json.Marshal(info.Base)
	if err != nil {
		return fmt.Errorf("record the capture of %s: %w", t, err)
	}
	_, err = c.Exec(ctx, "REPLACE INTO "+m.names.Q("captures")+" (sandbox_id, db, tbl, state, reason, key_kind, key_cols, side_db, side_tbl, trg, cascades, "+
		"base_cols, created_at) VALUES ("+
		strings.Join([]string{quote.String(id), quote.String(t.DB), quote.String(t.Name), quote.String(info.State),
			quote.String(info.Reason), quote.String(info.KeyKind), quote.String(string(key)),
			quote.String(info.Side.DB), quote.String(info.Side.Name), quote.String(info.Trigger),
			quote.String(string(cascades)), quote.String(string(base)), sideconn.SQLTime(time.Now().UTC())}, ", ")+")")
	if err != nil {
		return fmt.Errorf("record the capture of %s: %w", t, err)
	}
	return nil
}

// Load reads the captures of sandbox id, by logical table key.
func (m *Tracker) Load(ctx context.Context, c sideconn.Conn, id string) (map[string]Info, error) {
	rows, err := c.Query(ctx, "SELECT db, tbl, state, reason, key_kind, key_cols, side_db, side_tbl, trg, cascades, base_cols FROM "+m.names.Q("captures")+
		" WHERE sandbox_id = "+quote.String(id))
	if err != nil {
		return nil, fmt.Errorf("read the captures of the sandbox: %w", err)
	}
	out := map[string]Info{}
	for _, r := range rows {
		info := Info{State: sideconn.Str(r[2]), Reason: sideconn.Str(r[3]), KeyKind: sideconn.Str(r[4]),
			Side: rewrite.Table{DB: sideconn.Str(r[6]), Name: sideconn.Str(r[7])}, Trigger: sideconn.Str(r[8])}
		if err := json.Unmarshal([]byte(sideconn.Str(r[5])), &info.Key); err != nil {
			return nil, fmt.Errorf("read the capture key of %s.%s: %w", sideconn.Str(r[0]), sideconn.Str(r[1]), err)
		}
		if v := sideconn.Str(r[9]); v != "" {
			if err := json.Unmarshal([]byte(v), &info.Cascades); err != nil {
				return nil, fmt.Errorf("read the cascades of %s.%s: %w", sideconn.Str(r[0]), sideconn.Str(r[1]), err)
			}
		}
		if v := sideconn.Str(r[10]); v != "" {
			if err := json.Unmarshal([]byte(v), &info.Base); err != nil {
				return nil, fmt.Errorf("read the fork-time columns of %s.%s: %w", sideconn.Str(r[0]), sideconn.Str(r[1]), err)
			}
		}
		out[m.names.Key(rewrite.Table{DB: sideconn.Str(r[0]), Name: sideconn.Str(r[1])})] = info
	}
	return out, nil
}

// Stop drops the capture triggers of the sandbox's forks of
// tables, which DDL is about to change, and records them "full" with why
// (sandboxDDL starts it: DIFF then takes a change of the table's columns
// for the sandbox's). The triggers are dropped on on, the connection of the
// client whose DDL it is: its open transaction or LOCK TABLES may hold the
// table, which would make a side connection wait on it for ever (its DDL
// commits that transaction anyway).
func (m *Tracker) Stop(ctx context.Context, sb *registry.Sandbox, tables []rewrite.Table, why string, on forker.Conn) error {
	var forks []*sandbox.Entry
	for _, t := range tables {
		if e, ok := sb.Resolve(m.names.Key(m.names.Norm(t))); ok && (e.Kind == sandbox.KindFork || e.Kind == sandbox.KindSchema) {
			forks = append(forks, e)
		}
	}
	if len(forks) == 0 {
		return nil
	}
	return m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		caps, err := m.Load(ctx, c, sb.ID)
		if err != nil {
			return err
		}
		for _, e := range forks {
			var trg string
			if info := caps[m.names.Key(e.Logical)]; info.State == Rows {
				trg = info.Trigger
			}
			// Recorded first: triggers gone while the registry still said
			// "rows" would make DIFF trust an incomplete side table.
			if _, err := c.Exec(ctx, "UPDATE "+m.names.Q("captures")+" SET state = "+quote.String(Full)+", reason = "+
				quote.String(why)+" WHERE sandbox_id = "+quote.String(sb.ID)+" AND db = "+quote.String(e.Logical.DB)+
				" AND tbl = "+quote.String(e.Logical.Name)); err != nil {
				return fmt.Errorf("record the end of the capture of %s: %w", e.Logical, err)
			}
			if trg != "" {
				if err := m.removeCapture(ctx, c, on, forker.Capture{Fork: e.Phys, Trigger: trg}); err != nil {
					return err
				}
			}
			if err := m.stopCascades(ctx, c, sb, caps, e, why, on); err != nil {
				return err
			}
		}
		return nil
	})
}

// stopCascades drops (caps are the sandbox's captures) the capture triggers
// of foreign key actions that involve e's fork, which DDL is about to change: those of its own foreign
// keys, on its parents' forks, and those on it of its children's, whose
// forks are then recorded "full" (their cascaded rows are no longer
// captured).
func (m *Tracker) stopCascades(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, caps map[string]Info, e *sandbox.Entry, why string, on forker.Conn) error {
	k := m.names.Key(e.Logical)
	for ck, info := range caps {
		var here []string // cascade triggers on e's fork
		for _, cs := range info.Cascades {
			if m.names.Key(m.names.Norm(cs.FK.Parent)) == k {
				here = append(here, cs.Triggers...)
			}
		}
		_, keep := on.(KeepTriggers)
		switch {
		case ck == k && !keep:
			m.dropCascades(ctx, cmp.Or[forker.Conn](on, c), sb, info)
		case ck != k && len(here) > 0:
			child, ok := sb.Resolve(ck)
			if !ok {
				continue
			}
			info.State, info.Reason = Full, "its parent "+e.Logical.String()+" was "+strings.TrimPrefix(why, SandboxDDL)
			if err := m.saveCapture(ctx, c, sb.ID, child.Logical, info); err != nil {
				return err
			}
			caps[ck] = info
			if !keep {
				if err := forker.DropTriggers(ctx, cmp.Or[forker.Conn](on, c), e.Phys.DB, here); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// removeCapture drops cp's triggers on on, or (nil) on the side connection
// c, waiting a few seconds at most for the table: a client's open
// transaction may hold it (a CALL or an anonymous block, which do not
// commit it, may hold DDL). Triggers it could not drop stay, capturing
// still; the fork is compared whole anyway.
func (m *Tracker) removeCapture(ctx context.Context, c sideconn.Conn, on forker.Conn, cp forker.Capture) error {
	if _, keep := on.(KeepTriggers); keep {
		return nil
	}
	if on != nil {
		return forker.RemoveCapture(ctx, on, cp)
	}
	err := withLockWait(ctx, c, func() error { return forker.RemoveCapture(ctx, c, cp) })
	var me *mysql.MyError
	if errors.As(err, &me) && me.Code == wire.ErLockWaitTimeout {
		m.log.Warn("the capture triggers of a fork stay: a transaction holds the table; a DDL of a stored program may then fail on them (1054)",
			zap.String("fork", cp.Fork.String()))
		return nil
	}
	return err
}

// withLockWait runs f with the side connection c's lock_wait_timeout at a
// few seconds: a client's open transaction or LOCK TABLES may hold the
// table f changes.
func withLockWait(ctx context.Context, c sideconn.Conn, f func() error) error {
	rows, err := c.Query(ctx, "SELECT @@session.lock_wait_timeout")
	if err != nil {
		return err
	}
	if _, err := c.Exec(ctx, "SET SESSION lock_wait_timeout = 5"); err != nil {
		return err
	}
	defer func() {
		if len(rows) == 1 {
			_, _ = c.Exec(context.WithoutCancel(ctx), "SET SESSION lock_wait_timeout = "+sideconn.Str(rows[0][0]))
		}
	}()
	return f()
}

// KeepTriggers, as stopCaptures' connection, leaves the capture triggers
// in place.
type KeepTriggers struct{}

// Exec implements forker.Conn (never called).
func (KeepTriggers) Exec(context.Context, string) (uint64, error) { return 0, nil }

// Query implements forker.Conn (never called).
func (KeepTriggers) Query(context.Context, string) ([][]*string, error) { return nil, nil }

// Trigger is the start of the names of the capture triggers of t's
// fork in sandbox id ("" when its changes are not captured by triggers).
func (m *Tracker) Trigger(ctx context.Context, c sideconn.Conn, id string, t rewrite.Table) (string, error) {
	rows, err := c.Query(ctx, "SELECT state, trg FROM "+m.names.Q("captures")+" WHERE sandbox_id = "+quote.String(id)+
		" AND db = "+quote.String(t.DB)+" AND tbl = "+quote.String(t.Name))
	if err != nil {
		return "", fmt.Errorf("read the capture of %s: %w", t, err)
	}
	if len(rows) == 0 || sideconn.Str(rows[0][0]) != Rows {
		return "", nil
	}
	return sideconn.Str(rows[0][1]), nil
}

// Suffix ends the name of the capture trigger of event.
func Suffix(event string) string {
	switch strings.ToUpper(event) {
	case "INSERT":
		return "_ai"
	case "UPDATE":
		return "_au"
	}
	return "_ad"
}

// Last puts the proxy's triggers of timing and event on t's fork
// last among that event's triggers again, after the sandbox made a trigger
// there that went after them: each made again, in one CREATE OR REPLACE
// TRIGGER (no write meets the table without it), with the body it has, so
// that the sandbox's triggers have the order (ACTION_ORDER) they would
// have on a copy of the database. Most often they still are last (CREATE
// TRIGGER IF NOT EXISTS of one that exists, FOLLOWS or PRECEDES another):
// nothing is then run on the client's connection, which would clear its
// warnings.
func (m *Tracker) Last(ctx context.Context, sb *registry.Sandbox, t rewrite.Table, timing, event string, on forker.Conn) error {
	e, ok := sb.Resolve(m.names.Key(m.names.Norm(t)))
	if !ok || e.Kind != sandbox.KindFork && e.Kind != sandbox.KindSchema && e.Kind != sandbox.KindCreated {
		return nil
	}
	return m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = "+
			quote.String(e.Phys.DB)+" AND EVENT_OBJECT_TABLE = "+quote.String(e.Phys.Name)+" AND ACTION_TIMING = "+
			quote.String(strings.ToUpper(timing))+" AND EVENT_MANIPULATION = "+quote.String(strings.ToUpper(event))+
			" ORDER BY ACTION_ORDER")
		if err != nil {
			return fmt.Errorf("read the triggers of %s: %w", e.Logical, err)
		}
		prefix := strings.ToLower(m.cfg.Prefix) + "_"
		var ours []forker.Trigger
		misplaced := false
		for _, r := range rows {
			if strings.HasPrefix(strings.ToLower(sideconn.Str(r[0])), prefix) {
				ours = append(ours, forker.Trigger{Name: sideconn.Str(r[0]), Timing: strings.ToUpper(timing), Event: strings.ToUpper(event), Body: sideconn.Str(r[1])})
			} else if len(ours) > 0 {
				misplaced = true
			}
		}
		if !misplaced {
			return nil
		}
		// On the client's connection, which may hold the table (LOCK TABLES).
		for _, trg := range ours {
			if err := forker.ReplaceTriggerAs(ctx, cmp.Or[forker.Conn](on, c), trg, e.Phys); err != nil {
				return err
			}
		}
		return nil
	})
}

// cascadesOf lists t's foreign keys whose actions change its rows, which
// triggers on their parents' forks capture (installCascades), or says why
// they cannot be: a parent whose own rows a foreign key's action changes
// (its triggers do not fire then), t itself as parent, or an ON UPDATE
// action that changes t's capture key.
func (m *Tracker) cascadesOf(ctx context.Context, c sideconn.Conn, t rewrite.Table, shape forker.Shape) ([]Cascade, string, error) {
	rows, err := c.Query(ctx, "SELECT k.CONSTRAINT_NAME, k.COLUMN_NAME, k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME, "+
		"r.UPDATE_RULE, r.DELETE_RULE FROM information_schema.KEY_COLUMN_USAGE k JOIN information_schema.REFERENTIAL_CONSTRAINTS r "+
		"ON r.CONSTRAINT_SCHEMA = "+quote.String(t.DB)+" AND r.TABLE_NAME = "+quote.String(t.Name)+" AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME "+
		"WHERE k.TABLE_SCHEMA = "+quote.String(t.DB)+" AND k.TABLE_NAME = "+quote.String(t.Name)+
		" AND k.REFERENCED_TABLE_NAME IS NOT NULL ORDER BY k.CONSTRAINT_NAME, k.ORDINAL_POSITION")
	if err != nil {
		return nil, "", fmt.Errorf("read the foreign keys of %s: %w", t, err)
	}
	var out []Cascade
	for _, r := range rows {
		if n := len(out); n == 0 || out[n-1].FK.Name != sideconn.Str(r[0]) {
			out = append(out, Cascade{FK: forker.ForeignKey{Name: sideconn.Str(r[0]), Child: t, Parent: rewrite.Table{DB: sideconn.Str(r[2]), Name: sideconn.Str(r[3])},
				OnUpdate: sideconn.Str(r[5]), OnDelete: sideconn.Str(r[6])}})
		}
		fk := &out[len(out)-1].FK
		fk.Columns, fk.RefColumns = append(fk.Columns, sideconn.Str(r[1])), append(fk.RefColumns, sideconn.Str(r[4]))
	}
	var kept []Cascade
	for _, cs := range out {
		fk := cs.FK
		if !forker.Modifies(fk.OnDelete) && !forker.Modifies(fk.OnUpdate) {
			continue
		}
		why := "its foreign key " + quote.Ident(fk.Name) + "'s action changes its rows, which fires no trigger, and "
		switch parentCascaded, err := cascadedInto(ctx, c, fk.Parent); {
		case err != nil:
			return nil, "", err
		case m.names.Key(fk.Parent) == m.names.Key(t):
			return nil, why + "the table is its own parent", nil
		case parentCascaded:
			return nil, why + "the rows of its parent " + fk.Parent.String() + " are changed by a foreign key's action too", nil
		case forker.Modifies(fk.OnUpdate) && slices.ContainsFunc(fk.Columns, func(col string) bool {
			return slices.ContainsFunc(shape.Key, func(k string) bool { return strings.EqualFold(k, col) })
		}):
			return nil, why + "ON UPDATE changes its key", nil
		}
		kept = append(kept, cs)
	}
	return kept, "", nil
}

// cascadedInto reports whether a foreign key of t has an action (CASCADE,
// SET NULL, SET DEFAULT) that changes t's rows when its parent changes.
func cascadedInto(ctx context.Context, c sideconn.Conn, t rewrite.Table) (bool, error) {
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = "+
		quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name)+
		" AND (DELETE_RULE NOT IN ('RESTRICT', 'NO ACTION') OR UPDATE_RULE NOT IN ('RESTRICT', 'NO ACTION'))")
	if err != nil {
		return false, fmt.Errorf("read the foreign keys of %s: %w", t, err)
	}
	return len(rows) == 1 && sideconn.Str(rows[0][0]) != "0", nil
}

// InstallCascades makes, for each fork in made (fresh, by key) whose
// foreign keys' actions change its rows, the triggers on its parents' forks
// that capture those rows (forker.CascadeDDL), once the forks are all made.
// A fork whose triggers cannot be made is compared whole.
func (m *Tracker) InstallCascades(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, made map[string]*sandbox.Entry) error {
	if m.cfg.NoDiffCapture || len(made) == 0 {
		return nil
	}
	caps, err := m.Load(ctx, c, sb.ID)
	if err != nil {
		return err
	}
	for k, e := range made {
		info, ok := caps[k]
		if !ok || info.State != Rows || len(info.Cascades) == 0 {
			continue
		}
		shape, err := forker.ReadShape(ctx, c, e.Phys)
		if err != nil {
			return err
		}
		cp := m.captureOf(sb.ID, e.Phys, shape)
		failed := ""
		for i, cs := range info.Cascades {
			parent, ok := sb.Resolve(m.names.Key(m.names.Norm(cs.FK.Parent)))
			if !ok || parent.Kind == sandbox.KindAbsent || parent.Kind == sandbox.KindDropped || parent.Kind == sandbox.KindForking || parent.Kind == sandbox.KindView {
				continue // no parent row in the sandbox to change the child's
			}
			sum := sha256.Sum256([]byte(e.Phys.DB + "\x00" + e.Phys.Name + "\x00" + cs.FK.Name))
			names, stmts := cp.CascadeDDL(parent.Phys, cs.FK, m.cfg.Prefix+"_"+hex.EncodeToString(sum[:8]))
			if err := forker.InstallCascade(ctx, c, parent.Phys, names, stmts); err != nil {
				m.log.Warn("change capture of a foreign key's actions failed: the sandbox's diff compares the table whole",
					zap.String("fork", e.Phys.String()), zap.Error(err))
				failed = "the capture of its foreign key " + cs.FK.Name + "'s actions could not be made: " + err.Error()
				break
			}
			info.Cascades[i].Triggers = names
		}
		if failed != "" {
			_ = forker.RemoveCapture(ctx, c, cp)
			m.dropCascades(ctx, c, sb, info)
			info.State, info.Reason = Full, failed
		}
		if err := m.saveCapture(ctx, c, sb.ID, e.Logical, info); err != nil {
			return err
		}
	}
	return nil
}

// dropCascades drops, best effort, the triggers info's cascades made on
// their parents' forks (on on, or c).
func (m *Tracker) dropCascades(ctx context.Context, c forker.Conn, sb *registry.Sandbox, info Info) {
	for _, cs := range info.Cascades {
		parent, ok := sb.Resolve(m.names.Key(m.names.Norm(cs.FK.Parent)))
		if !ok || len(cs.Triggers) == 0 {
			continue
		}
		if err := forker.DropTriggers(ctx, c, parent.Phys.DB, cs.Triggers); err != nil {
			m.log.Warn("drop the capture triggers of a foreign key", zap.String("parent", parent.Phys.String()), zap.Error(err))
		}
	}
}

// New is the Tracker of the forks named as names says, recorded in reg.
func New(cfg Config, log *zap.Logger, names sandbox.Names, reg *registry.Registry) *Tracker {
	return &Tracker{cfg: cfg, log: log, names: names, reg: reg}
}
