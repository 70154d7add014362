package session

import (
	"context"
	"fmt"
	"time"

	"github.com/sqlfork/sqlfork-proxy/duration"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// sandboxStatement plans a SANDBOX pseudo-statement: Run's answer step
// runs it (command).
func (s *Session) sandboxStatement(sql string) (*Plan, error) {
	if s.tx.Open() {
		return nil, rewrite.Refuse(wire.ErCantDoThisDuringTrx, "SANDBOX statements are not allowed in a transaction; COMMIT or ROLLBACK first")
	}
	c, err := command.Parse(sql)
	if err != nil {
		return nil, rewrite.Refuse(wire.ErParse, "%v", err)
	}
	answer := func(ctx context.Context) (*Reply, error) {
		r, err := s.command(ctx, c)
		if err != nil {
			s.refused = diagnosticsOf(err) // for SHOW WARNINGS, as a refused text's
		}
		return r, err
	}
	return &Plan{answer: answer, analysis: &rewrite.Analysis{}}, nil
}

// command runs the SANDBOX statement c: its answer, or its refusal.
func (s *Session) command(ctx context.Context, c command.Command) (*Reply, error) {
	switch c.Verb {
	case command.VerbCreate:
		return s.create(ctx, c)
	case command.VerbAttach:
		return s.attachTo(ctx, c.Name)
	case command.VerbDetach:
		return s.detachCmd()
	case command.VerbKeep:
		return s.keep(ctx, c)
	case command.VerbDiscard:
		return s.discardCmd(ctx, c.Name)
	case command.VerbStatus:
		return s.status(ctx)
	case command.VerbList:
		return s.list(ctx)
	case command.VerbDiff:
		return s.diffCmd(ctx, c)
	case command.VerbExport:
		return s.exportCmd(ctx, c)
	case command.VerbPromote:
		return s.promoteCmd(ctx, c)
	case command.VerbReset:
		return s.resetCmd(ctx, c)
	}
	return nil, rewrite.Refuse(wire.ErParse, "unknown SANDBOX statement %q", c.Verb)
}

func (s *Session) ttlOrDefault(c command.Command) time.Duration {
	if c.HasTTL {
		return c.TTL
	}
	return s.m.reg.Limits().DefaultTTL
}

// create makes a new sandbox and binds the session to it. A TTL makes it
// kept: it outlives this connection until the TTL ends.
func (s *Session) create(ctx context.Context, c command.Command) (*Reply, error) {
	if c.Name != "" {
		if sb, err := s.m.reg.Lookup(ctx, c.Name); err != nil {
			return nil, err
		} else if sb != nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "a sandbox named %q already exists; ATTACH it or choose another name", c.Name)
		}
	}
	if c.HasTTL {
		if err := s.m.reg.Limits().CheckTTL(c.TTL); err != nil {
			return nil, err
		}
	}
	sb, err := s.m.reg.NewSandbox(c.Name, s.user)
	if err != nil {
		return nil, err
	}
	// Attached before it is recorded: a sandbox in memory that no
	// connection uses is idle, and the reaper lets go of an idle one
	// that is recorded — a record that waits for the life lock outlasts
	// a reap interval, and this one would then end "discarded".
	if err := s.m.reg.Attach(sb); err != nil {
		return nil, err
	}
	if c.HasTTL {
		var exp time.Time
		if c.TTL > 0 {
			exp = time.Now().UTC().Add(c.TTL)
		}
		sb.KeepAs(exp)
		if err := s.m.reg.WithConn(ctx, func(conn SideConn) error { return s.m.reg.PersistKeep(ctx, conn, sb) }); err != nil {
			s.m.reg.Forget(sb)
			return nil, err
		}
	}
	s.unbind()
	s.sb = sb
	return &Reply{Info: fmt.Sprintf("sandbox %s created (id %s)", sb.Name, sb.ID)}, nil
}

// attachTo moves the session to the sandbox called name: its own, or any
// for admins, also one kept or held by another proxy process or in its
// grace. A discard of it in flight is waited for first.
func (s *Session) attachTo(ctx context.Context, name string) (*Reply, error) {
	if s.sb != nil && s.sb.Name == name && !s.sb.IsRetired() {
		return &Reply{Info: "already in sandbox " + name}, nil
	}
	sb, err := s.m.reg.Acquire(ctx, name, s.user, false)
	if err != nil {
		return nil, err
	}
	if sb == nil {
		return nil, rewrite.Refuse(wire.ErUnknown, "no sandbox named %q; SANDBOX LIST shows yours", name)
	}
	s.unbind()
	s.sb = sb
	if err := s.joinGlobals(ctx); err != nil {
		return nil, err
	}
	return &Reply{Info: fmt.Sprintf("attached to sandbox %s", name)}, nil
}

// detachCmd leaves the sandbox: explicit sessions return to production,
// transparent ones get a new anonymous sandbox (they are never on
// production).
func (s *Session) detachCmd() (*Reply, error) {
	if s.sb == nil {
		return &Reply{Info: "not in a sandbox"}, nil
	}
	name, changed := s.sb.Name, changedTables(s.sb)
	var left registry.Left
	if s.mode == Transparent {
		// The new sandbox first: a transparent session is never without
		// one, so when none can be made it stays where it is.
		sb, err := s.m.reg.NewSandbox("", s.user)
		if err != nil {
			return nil, err
		}
		if err := s.m.reg.Attach(sb); err != nil {
			return nil, err
		}
		left = s.m.reg.Detach(s.sb)
		s.sb = sb
	} else {
		left = s.m.reg.Detach(s.sb)
		s.sb = nil
	}
	r := &Reply{Info: fmt.Sprintf("detached from sandbox %s; now in %s", name, s.where())}
	if w := leftWarning(name, changed, left, s.m.reg.Limits().Grace); w != "" {
		r.Info += "; " + w
		r.Warnings = []Diag{{Level: "Warning", Code: wire.ErUnknown, Message: w}}
	}
	return r, nil
}

// changedTables is how many tables sb forked, made or dropped: what it
// changed, until a diff tells more.
func changedTables(sb *Sandbox) int {
	n := 0
	for e := range sb.Each() {
		switch e.Kind {
		case sandbox.KindFork, sandbox.KindSchema, sandbox.KindCreated, sandbox.KindDropped:
			n++
		}
	}
	return n
}

// leftWarning says what became of the changes (to changed tables) of the
// sandbox called name that a DETACH left, when they are gone or will be
// ("" when there are none, or it is kept or in use).
func leftWarning(name string, changed int, left registry.Left, grace time.Duration) string {
	switch {
	case changed == 0 || left == registry.LeftInUse:
		return ""
	case left == registry.LeftInGrace:
		return fmt.Sprintf("its changes to %d tables are discarded with it in %s unless you SANDBOX ATTACH %s and SANDBOX KEEP it",
			changed, duration.Human(grace), name)
	}
	return fmt.Sprintf("its changes to %d tables were discarded with it (SANDBOX KEEP before DETACH keeps a sandbox)", changed)
}

// keep makes the current sandbox survive disconnects and restarts.
func (s *Session) keep(ctx context.Context, c command.Command) (*Reply, error) {
	if s.sb == nil {
		return nil, rewrite.Refuse(wire.ErUnknown, "not in a sandbox; SANDBOX CREATE or ATTACH first")
	}
	ttl := s.ttlOrDefault(c)
	if err := s.m.reg.Limits().CheckTTL(ttl); err != nil {
		return nil, err
	}
	sb := s.sb
	var exp time.Time
	if ttl > 0 {
		exp = time.Now().UTC().Add(ttl)
	}
	sb.KeepAs(exp)
	if err := s.m.reg.WithConn(ctx, func(conn SideConn) error { return s.m.reg.PersistKeep(ctx, conn, sb) }); err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("sandbox %s kept", sb.Name)
	if !exp.IsZero() {
		msg += " until " + exp.Format(time.RFC3339)
	}
	return &Reply{Info: msg}, nil
}

func (s *Session) discardCmd(ctx context.Context, name string) (*Reply, error) {
	sb := s.sb
	if name != "" {
		var err error
		if sb, err = s.m.reg.Lookup(ctx, name); err != nil {
			return nil, err
		}
		if sb == nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "no sandbox named %q; SANDBOX LIST shows yours", name)
		}
		if err := s.authorize(sb); err != nil {
			return nil, err
		}
		sb = s.m.reg.Remember(sb)
	}
	if sb == nil {
		return nil, rewrite.Refuse(wire.ErUnknown, "not in a sandbox; name the sandbox to discard")
	}
	// Discarded before the session leaves it, which would otherwise
	// discard an unkept sandbox as its last connection's.
	err := s.m.reg.Discard(ctx, sb, true, false, "discarded")
	if sb == s.sb {
		s.unbind()
	}
	if err != nil {
		return nil, err
	}
	if s.sb == nil && s.mode == Transparent {
		if err := s.fresh(); err != nil {
			return nil, err
		}
	}
	return &Reply{Info: fmt.Sprintf("sandbox %s discarded; now in %s", sb.Name, s.where())}, nil
}

func ts(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	v := t.UTC().Format("2006-01-02 15:04:05")
	return &v
}

func tsp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	return ts(*t)
}

// statusColumns are SANDBOX STATUS's columns, on production (NULL
// sandbox and table columns) and in a sandbox alike.
var statusColumns = []string{"sandbox_id", "name", "state", "mode", "owner", "created", "expires", "connections", "changes", "promoted",
	"table_name", "table_state", "table_rows", "table_bytes"}

// tableState is a table's state as SANDBOX STATUS shows it: a lazy fork
// still filling with how far its copy is ("filling 41%"), that its keys
// are being built or its end waits for a transaction, or the failure that
// stopped it.
func tableState(t registry.TableInfo) string {
	switch f := t.Fill; {
	case f == nil:
		return t.State
	case f.Error != "":
		return t.State + " failed: " + f.Error
	case f.Waiting:
		return t.State + " 99%, waiting for a transaction to end"
	case f.BuildingKeys:
		return t.State + " 99%, building keys"
	case f.Total > 0:
		return fmt.Sprintf("%s %d%%", t.State, min(99, f.Copied*100/f.Total))
	}
	return t.State
}

// status describes the current sandbox: one row per table it holds (or one
// row with NULL table columns when it holds none), its tables' rows and
// bytes as of now; on production, one row of state production.
func (s *Session) status(ctx context.Context) (*Reply, error) {
	r := &Reply{Columns: statusColumns}
	if s.sb == nil {
		row := make([]*string, len(statusColumns))
		row[2], row[3] = reply.Str("production"), reply.Str(string(s.mode))
		r.Rows = [][]*string{row}
		return r, nil
	}
	in, err := s.m.reg.InfoNow(ctx, s.sb)
	if err != nil {
		return nil, err
	}
	head := []*string{reply.Str(in.ID), reply.Str(in.Name), reply.Str(in.State), reply.Str(string(s.mode)), reply.Str(in.Owner), ts(in.Created),
		tsp(in.Expires), reply.Int(int64(in.Connections)), reply.Str(in.Changes), tsp(in.Promoted)}
	for _, t := range in.Tables {
		r.Rows = append(r.Rows, append(append([]*string{}, head...), reply.Str(t.Table), reply.Str(tableState(t)), reply.Int(t.Rows), reply.Int(t.Bytes)))
	}
	if len(r.Rows) == 0 {
		r.Rows = [][]*string{append(append([]*string{}, head...), nil, nil, nil, nil)}
	}
	return r, nil
}

// list shows the sandboxes the user may see (operator.Operator.List, filtered): own
// ones, all for admins.
func (s *Session) list(ctx context.Context) (*Reply, error) {
	all, err := s.m.op.List(ctx)
	if err != nil {
		return nil, err
	}
	r := &Reply{Columns: []string{"sandbox_id", "name", "state", "owner", "created", "expires", "connections", "tables", "bytes", "changes", "promoted"}}
	for _, in := range all {
		if in.Owner != s.user && !s.m.reg.IsAdmin(s.user) {
			continue
		}
		r.Rows = append(r.Rows, []*string{reply.Str(in.ID), reply.Str(in.Name), reply.Str(in.State), reply.Str(in.Owner), ts(in.Created), tsp(in.Expires),
			reply.Int(int64(in.Connections)), reply.Int(int64(in.TableCount)), reply.Int(in.Bytes), reply.Str(in.Changes), tsp(in.Promoted)})
	}
	return r, nil
}
