package session

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
	"github.com/sqlfork/sqlfork-proxy/rewrite"
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
// The triggers are hidden from the sandbox (the TRIGGERS view), and
// dropped before any DDL of the fork: a trigger naming a column an ALTER
// dropped would fail the sandbox's writes (1054), one on a table RENAME
// moves to another database fails the RENAME (1435), and TRUNCATE or
// partition maintenance change rows without firing them.

// sandboxDDL starts the reason of a capture stopped by the sandbox's DDL.
const sandboxDDL = "changed by "

// Capture states.
const (
	captureRows = "rows"
	captureFull = "full"
)

// captureInfo is a fork's row in the captures table.
type captureInfo struct {
	state, reason string
	keyKind       string
	key           []string
	side          rewrite.Table
	trigger       string
}

// captureOf is the capture of sb's fork phys: its side table and trigger
// names, from a hash of the fork's name.
func (m *Manager) captureOf(sbID string, phys rewrite.Table, shape forker.Shape) forker.Capture {
	sum := sha256.Sum256([]byte(phys.DB + "\x00" + phys.Name))
	h := hex.EncodeToString(sum[:8])
	return forker.Capture{Fork: phys, Side: rewrite.Table{DB: InfoSchema(m.cfg.Prefix, sbID), Name: "c_" + h},
		Trigger: m.cfg.Prefix + "_" + h, Marker: m.cfg.Prefix + "_existed", Shape: shape}
}

// startCapture captures the changes of the fork phys of t, just made (the
// sandbox cannot reach it yet), and records how. A fork whose changes
// cannot be captured is recorded "full", with the reason: its diff
// compares it whole.
func (m *Manager) startCapture(ctx context.Context, c SideConn, sb *Sandbox, t, phys rewrite.Table, mode forker.Mode) error {
	info := captureInfo{state: captureFull, keyKind: "row"}
	if m.cfg.NoDiffCapture {
		info.reason = "change capture is off (--diff-capture=false)"
		return m.saveCapture(ctx, c, sb.ID, t, info)
	}
	shape, err := forker.ReadShape(ctx, c, phys)
	if err != nil {
		return err
	}
	cp := m.captureOf(sb.ID, phys, shape)
	info.keyKind, info.key, info.side, info.trigger = shape.KeyKind, shape.Key, cp.Side, cp.Trigger
	switch {
	case mode != forker.Full:
		info.reason = "forked without its rows, for a TRUNCATE or DROP"
	case len(shape.Key) == 0:
		info.reason = "no primary key or unique key of NOT NULL columns"
	default:
		cascaded, err := cascadedInto(ctx, c, t)
		if err != nil {
			return err
		}
		if cascaded {
			// Rows a foreign key's action changes fire no triggers.
			info.reason = "a foreign key's ON DELETE / ON UPDATE action changes its rows, which fires no trigger"
			break
		}
		if _, ok := shape.Column(cp.Marker); ok {
			info.reason = "a column is named " + cp.Marker
			break
		}
		if _, err := c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+rewrite.QuoteIdent(cp.Side.DB)); err != nil {
			return fmt.Errorf("create the sandbox's own database: %w", err)
		}
		if err := forker.InstallCapture(ctx, c, cp); err != nil {
			m.log.Warn("change capture failed: the sandbox's diff compares the table whole", zap.String("fork", phys.String()), zap.Error(err))
			info.reason = "its capture triggers could not be made: " + err.Error()
			break
		}
		info.state = captureRows
	}
	return m.saveCapture(ctx, c, sb.ID, t, info)
}

// saveCapture writes t's row in the captures table.
func (m *Manager) saveCapture(ctx context.Context, c SideConn, id string, t rewrite.Table, info captureInfo) error {
	key, _ := json.Marshal(info.key)
	if info.key == nil {
		key = []byte("[]")
	}
	_, err := c.Exec(ctx, "REPLACE INTO "+m.q("captures")+" (sandbox_id, db, tbl, state, reason, key_kind, key_cols, side_db, side_tbl, trg, created_at) VALUES ("+
		strings.Join([]string{rewrite.QuoteString(id), rewrite.QuoteString(t.DB), rewrite.QuoteString(t.Name), rewrite.QuoteString(info.state),
			rewrite.QuoteString(info.reason), rewrite.QuoteString(info.keyKind), rewrite.QuoteString(string(key)),
			rewrite.QuoteString(info.side.DB), rewrite.QuoteString(info.side.Name), rewrite.QuoteString(info.trigger),
			sqlTime(time.Now().UTC())}, ", ")+")")
	if err != nil {
		return fmt.Errorf("record the capture of %s: %w", t, err)
	}
	return nil
}

// loadCaptures reads the captures of sandbox id, by logical table key.
func (m *Manager) loadCaptures(ctx context.Context, c SideConn, id string) (map[string]captureInfo, error) {
	rows, err := c.Query(ctx, "SELECT db, tbl, state, reason, key_kind, key_cols, side_db, side_tbl, trg FROM "+m.q("captures")+
		" WHERE sandbox_id = "+rewrite.QuoteString(id))
	if err != nil {
		return nil, fmt.Errorf("read the captures of the sandbox: %w", err)
	}
	out := map[string]captureInfo{}
	for _, r := range rows {
		info := captureInfo{state: str(r[2]), reason: str(r[3]), keyKind: str(r[4]),
			side: rewrite.Table{DB: str(r[6]), Name: str(r[7])}, trigger: str(r[8])}
		if err := json.Unmarshal([]byte(str(r[5])), &info.key); err != nil {
			return nil, fmt.Errorf("read the capture key of %s.%s: %w", str(r[0]), str(r[1]), err)
		}
		out[m.key(rewrite.Table{DB: str(r[0]), Name: str(r[1])})] = info
	}
	return out, nil
}

// stopCaptures drops the capture triggers of the sandbox's forks of
// tables, which DDL is about to change, and records them "full" with why
// (sandboxDDL starts it: DIFF then takes a change of the table's columns
// for the sandbox's). The triggers are dropped on on, the connection of the
// client whose DDL it is: its open transaction or LOCK TABLES may hold the
// table, which would make a side connection wait on it for ever (its DDL
// commits that transaction anyway).
func (m *Manager) stopCaptures(ctx context.Context, sb *Sandbox, tables []rewrite.Table, why string, on forker.Conn) error {
	var forks []*entry
	for _, t := range tables {
		if e, ok := sb.resolve(m.key(m.norm(t))); ok && (e.kind == kindFork || e.kind == kindSchema) {
			forks = append(forks, e)
		}
	}
	if len(forks) == 0 {
		return nil
	}
	return m.withConn(ctx, func(c SideConn) error {
		for _, e := range forks {
			trg, err := m.captureTrigger(ctx, c, sb.ID, e.logical)
			if err != nil {
				return err
			}
			// Recorded first: triggers gone while the registry still said
			// "rows" would make DIFF trust an incomplete side table.
			if _, err := c.Exec(ctx, "UPDATE "+m.q("captures")+" SET state = "+rewrite.QuoteString(captureFull)+", reason = "+
				rewrite.QuoteString(why)+" WHERE sandbox_id = "+rewrite.QuoteString(sb.ID)+" AND db = "+rewrite.QuoteString(e.logical.DB)+
				" AND tbl = "+rewrite.QuoteString(e.logical.Name)); err != nil {
				return fmt.Errorf("record the end of the capture of %s: %w", e.logical, err)
			}
			if trg != "" {
				if err := m.removeCapture(ctx, c, on, forker.Capture{Fork: e.phys, Trigger: trg}); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// removeCapture drops cp's triggers on on, or (nil) on the side connection
// c, waiting a few seconds at most for the table: a client's open
// transaction may hold it (a CALL or an anonymous block, which do not
// commit it, may hold DDL). Triggers it could not drop stay, capturing
// still; the fork is compared whole anyway.
func (m *Manager) removeCapture(ctx context.Context, c SideConn, on forker.Conn, cp forker.Capture) error {
	if _, keep := on.(keepTriggers); keep {
		return nil
	}
	if on != nil {
		return forker.RemoveCapture(ctx, on, cp)
	}
	rows, err := c.Query(ctx, "SELECT @@session.lock_wait_timeout")
	if err != nil {
		return err
	}
	if _, err := c.Exec(ctx, "SET SESSION lock_wait_timeout = 5"); err != nil {
		return err
	}
	defer func() {
		if len(rows) == 1 {
			_, _ = c.Exec(context.WithoutCancel(ctx), "SET SESSION lock_wait_timeout = "+str(rows[0][0]))
		}
	}()
	err = forker.RemoveCapture(ctx, c, cp)
	var me *mysql.MyError
	if errors.As(err, &me) && me.Code == wire.ErLockWaitTimeout {
		m.log.Warn("the capture triggers of a fork stay: a transaction holds the table; a DDL of a stored program may then fail on them (1054)",
			zap.String("fork", cp.Fork.String()))
		return nil
	}
	return err
}

// stopCapturesFor stops the captures of the forks st, DDL, changes (a
// trigger's DDL leaves them): on the client's connection when st is the
// client's statement (its DDL commits the open transaction anyway),
// otherwise (a statement of a body, which runs later or not at all) on a
// side connection.
func (s *Session) stopCapturesFor(ctx context.Context, st rewrite.Statement, own bool) error {
	if st.Class != rewrite.ClassDDL || strings.Contains(st.Kind, "TRIGGER") || st.Temporary || s.sb == nil {
		return nil
	}
	if st.Kind == "CREATE TABLE" && st.IfNotExists {
		return nil // of a table the sandbox has: it changes nothing (rows a SELECT adds fire the triggers)
	}
	why := sandboxDDL + cmp.Or(st.Kind, "DDL") + " in the sandbox"
	var on forker.Conn
	switch {
	case own:
		on = s.ownConn()
	case s.inTrx:
		// The client's transaction may hold the table: a side connection
		// would wait for it. The triggers stay (capturing still); the fork
		// is compared whole.
		on = keepTriggers{}
	}
	return s.m.stopCaptures(ctx, s.sb, st.Writes, why, on)
}

// ownConn is the client's own upstream connection as a forker.Conn (nil
// when the session has none: tests).
func (s *Session) ownConn() forker.Conn {
	if s.up == nil {
		return nil
	}
	return upstreamConn{s.up}
}

// keepTriggers, as stopCaptures' connection, leaves the capture triggers
// in place.
type keepTriggers struct{}

// Exec implements forker.Conn (never called).
func (keepTriggers) Exec(context.Context, string) (uint64, error) { return 0, nil }

// Query implements forker.Conn (never called).
func (keepTriggers) Query(context.Context, string) ([][]*string, error) { return nil, nil }

// upstreamConn runs the proxy's own statements on a client's connection.
type upstreamConn struct{ up Upstream }

// Exec implements forker.Conn.
func (u upstreamConn) Exec(ctx context.Context, sql string) (uint64, error) {
	r, err := u.up.Query(ctx, sql)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, ok := range r.OKs {
		n += ok.Affected
	}
	return n, nil
}

// Query implements forker.Conn.
func (u upstreamConn) Query(ctx context.Context, sql string) ([][]*string, error) {
	r, err := u.up.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	return r.Rows, nil
}

// captureTrigger is the start of the names of the capture triggers of t's
// fork in sandbox id ("" when its changes are not captured by triggers).
func (m *Manager) captureTrigger(ctx context.Context, c SideConn, id string, t rewrite.Table) (string, error) {
	rows, err := c.Query(ctx, "SELECT state, trg FROM "+m.q("captures")+" WHERE sandbox_id = "+rewrite.QuoteString(id)+
		" AND db = "+rewrite.QuoteString(t.DB)+" AND tbl = "+rewrite.QuoteString(t.Name))
	if err != nil {
		return "", fmt.Errorf("read the capture of %s: %w", t, err)
	}
	if len(rows) == 0 || str(rows[0][0]) != captureRows {
		return "", nil
	}
	return str(rows[0][1]), nil
}

// captureSuffix ends the name of the capture trigger of event.
func captureSuffix(event string) string {
	switch strings.ToUpper(event) {
	case "INSERT":
		return "_ai"
	case "UPDATE":
		return "_au"
	}
	return "_ad"
}

// lastCapture makes the capture trigger of event on t's fork the last of
// its event again, after the sandbox made an AFTER trigger there: dropped
// and made again, so that the sandbox's triggers have the order
// (ACTION_ORDER) they would have on a copy of the database.
func (m *Manager) lastCapture(ctx context.Context, sb *Sandbox, t rewrite.Table, event string, on forker.Conn) error {
	e, ok := sb.resolve(m.key(m.norm(t)))
	if !ok || e.kind != kindFork {
		return nil
	}
	return m.withConn(ctx, func(c SideConn) error {
		trg, err := m.captureTrigger(ctx, c, sb.ID, e.logical)
		if err != nil || trg == "" {
			return err
		}
		shape, err := forker.ReadShape(ctx, c, e.phys)
		if err != nil {
			return err
		}
		cp := m.captureOf(sb.ID, e.phys, shape)
		i := slices.Index(cp.Triggers(), trg+captureSuffix(event))
		if i < 0 {
			return nil
		}
		// Most often it still is (CREATE TRIGGER IF NOT EXISTS of one that
		// exists, FOLLOWS or PRECEDES another): left alone, with the
		// client's warnings, which a statement on its connection would clear.
		last, err := c.Query(ctx, "SELECT TRIGGER_NAME FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_SCHEMA = "+
			rewrite.QuoteString(e.phys.DB)+" AND EVENT_OBJECT_TABLE = "+rewrite.QuoteString(e.phys.Name)+" AND ACTION_TIMING = 'AFTER' AND "+
			"EVENT_MANIPULATION = "+rewrite.QuoteString(strings.ToUpper(event))+" ORDER BY ACTION_ORDER DESC LIMIT 1")
		if err != nil {
			return fmt.Errorf("read the triggers of %s: %w", e.logical, err)
		}
		if len(last) == 1 && str(last[0][0]) == cp.Triggers()[i] {
			return nil
		}
		// On the client's connection, which may hold the table (LOCK TABLES).
		return forker.ReplaceTrigger(ctx, cmp.Or[forker.Conn](on, c), cp, i)
	})
}

// cascadedInto reports whether a foreign key of t has an action (CASCADE,
// SET NULL, SET DEFAULT) that changes t's rows when its parent changes.
func cascadedInto(ctx context.Context, c SideConn, t rewrite.Table) (bool, error) {
	rows, err := c.Query(ctx, "SELECT COUNT(*) FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = "+
		rewrite.QuoteString(t.DB)+" AND TABLE_NAME = "+rewrite.QuoteString(t.Name)+
		" AND (DELETE_RULE NOT IN ('RESTRICT', 'NO ACTION') OR UPDATE_RULE NOT IN ('RESTRICT', 'NO ACTION'))")
	if err != nil {
		return false, fmt.Errorf("read the foreign keys of %s: %w", t, err)
	}
	return len(rows) == 1 && str(rows[0][0]) != "0", nil
}
