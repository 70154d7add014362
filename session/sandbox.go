package session

import (
	"context"

	"fmt"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"sort"
	"strconv"
	"time"
)

// sandboxStatement runs a SANDBOX pseudo-statement.
func (s *Session) sandboxStatement(ctx context.Context, sql string) (*Plan, error) {
	if s.inTrx {
		return nil, refusal(1179, "25000", "SANDBOX statements are not allowed in a transaction; COMMIT or ROLLBACK first")
	}
	c, err := ParseCommand(sql)
	if err != nil {
		return nil, refusal(1064, "42000", "%v", err)
	}
	var r *Reply
	switch c.Verb {
	case VerbCreate:
		r, err = s.create(ctx, c)
	case VerbAttach:
		r, err = s.attachTo(ctx, c.Name)
	case VerbDetach:
		r, err = s.detachCmd()
	case VerbKeep:
		r, err = s.keep(ctx, c)
	case VerbDiscard:
		r, err = s.discardCmd(ctx, c.Name)
	case VerbStatus:
		r, err = s.status()
	case VerbList:
		r, err = s.list(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &Plan{Reply: r, analysis: &rewrite.Analysis{}}, nil
}

func (s *Session) ttlOrDefault(c Command) time.Duration {
	if c.HasTTL {
		return c.TTL
	}
	return s.m.limits().DefaultTTL
}

// create makes a new sandbox and binds the session to it. A TTL makes it
// kept: it outlives this connection until the TTL ends.
func (s *Session) create(ctx context.Context, c Command) (*Reply, error) {
	if c.Name != "" {
		if sb, err := s.m.lookup(ctx, c.Name); err != nil {
			return nil, err
		} else if sb != nil {
			return nil, refusal(1105, "HY000", "a sandbox named %q already exists; ATTACH it or choose another name", c.Name)
		}
	}
	sb, err := s.m.newSandbox(c.Name, s.user)
	if err != nil {
		return nil, err
	}
	if c.HasTTL {
		sb.kept = true
		if c.TTL > 0 {
			sb.expires = time.Now().UTC().Add(c.TTL)
		}
		if err := s.m.withConn(ctx, func(conn SideConn) error { return s.m.persist(ctx, conn, sb) }); err != nil {
			s.m.forget(sb)
			return nil, err
		}
	}
	if err := s.m.attach(sb); err != nil {
		return nil, err
	}
	s.unbind()
	s.sb = sb
	return &Reply{Info: fmt.Sprintf("sandbox %s created (id %s)", sb.Name, sb.ID)}, nil
}

func (s *Session) attachTo(ctx context.Context, name string) (*Reply, error) {
	sb, err := s.m.lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	if sb == nil {
		return nil, refusal(1105, "HY000", "no sandbox named %q; SANDBOX LIST shows yours", name)
	}
	if err := s.authorize(sb); err != nil {
		return nil, err
	}
	if s.sb == sb {
		return &Reply{Info: "already in sandbox " + name}, nil
	}
	if err := s.m.attach(sb); err != nil {
		return nil, err
	}
	s.unbind()
	s.sb = sb
	return &Reply{Info: fmt.Sprintf("attached to sandbox %s", name)}, nil
}

// detachCmd leaves the sandbox: explicit sessions return to production,
// transparent ones get a new anonymous sandbox (they are never on
// production).
func (s *Session) detachCmd() (*Reply, error) {
	if s.sb == nil {
		return &Reply{Info: "not in a sandbox"}, nil
	}
	name := s.sb.Name
	s.unbind()
	if s.mode == Transparent {
		if err := s.fresh(); err != nil {
			return nil, err
		}
	}
	return &Reply{Info: fmt.Sprintf("detached from sandbox %s; now in %s", name, s.where())}, nil
}

// keep makes the current sandbox survive disconnects and restarts.
func (s *Session) keep(ctx context.Context, c Command) (*Reply, error) {
	if s.sb == nil {
		return nil, refusal(1105, "HY000", "not in a sandbox; SANDBOX CREATE or ATTACH first")
	}
	ttl := s.ttlOrDefault(c)
	sb := s.sb
	sb.mu.Lock()
	sb.kept = true
	sb.expires = time.Time{}
	if ttl > 0 {
		sb.expires = time.Now().UTC().Add(ttl)
	}
	exp := sb.expires
	sb.mu.Unlock()
	if err := s.m.withConn(ctx, func(conn SideConn) error { return s.m.persist(ctx, conn, sb) }); err != nil {
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
		if sb, err = s.m.lookup(ctx, name); err != nil {
			return nil, err
		}
		if sb == nil {
			return nil, refusal(1105, "HY000", "no sandbox named %q; SANDBOX LIST shows yours", name)
		}
		if err := s.authorize(sb); err != nil {
			return nil, err
		}
	}
	if sb == nil {
		return nil, refusal(1105, "HY000", "not in a sandbox; name the sandbox to discard")
	}
	if sb == s.sb {
		s.unbind()
	}
	if err := s.m.discard(ctx, sb, true, false, "discarded"); err != nil {
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

func sp(v string) *string { return &v }

func itoa(n int64) *string { v := strconv.FormatInt(n, 10); return &v }

// state names a sandbox's lifecycle state.
func (sb *Sandbox) stateLocked() string {
	switch {
	case sb.discarded:
		return "discarded"
	case sb.kept:
		return "kept"
	}
	return "active"
}

// status describes the current sandbox: one row per table it holds (or one
// row with NULL table columns when it holds none).
func (s *Session) status() (*Reply, error) {
	r := &Reply{Columns: []string{"sandbox_id", "name", "state", "owner", "created", "expires", "connections",
		"table_name", "table_state", "table_rows", "table_bytes"}}
	if s.sb == nil {
		r.Columns = []string{"sandbox_id", "name", "state", "mode"}
		r.Rows = [][]*string{{nil, nil, sp("production"), sp(string(s.mode))}}
		return r, nil
	}
	sb := s.sb
	sb.mu.Lock()
	defer sb.mu.Unlock()
	head := []*string{sp(sb.ID), sp(sb.Name), sp(sb.stateLocked()), sp(sb.Owner), ts(sb.Created), ts(sb.expires),
		itoa(int64(sb.attached))}
	var ents []*entry
	for _, e := range sb.tables {
		if e.kind != kindAbsent {
			ents = append(ents, e)
		}
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].logical.String() < ents[j].logical.String() })
	for _, e := range ents {
		row := append(append([]*string{}, head...), sp(e.logical.String()), sp(e.kind), itoa(e.rows), itoa(e.bytes))
		r.Rows = append(r.Rows, row)
	}
	if len(r.Rows) == 0 {
		r.Rows = [][]*string{append(append([]*string{}, head...), nil, nil, nil, nil)}
	}
	return r, nil
}

// list shows the sandboxes the user may see: own ones (all for admins),
// in memory and kept in the registry.
func (s *Session) list(ctx context.Context) (*Reply, error) {
	r := &Reply{Columns: []string{"sandbox_id", "name", "state", "owner", "created", "expires", "connections", "tables", "bytes"}}
	seen := map[string]bool{}
	s.m.mu.Lock()
	var local []*Sandbox
	for _, sb := range s.m.byID {
		local = append(local, sb)
	}
	s.m.mu.Unlock()
	for _, sb := range local {
		if sb.Owner != s.user && !s.m.isAdmin(s.user) {
			continue
		}
		seen[sb.ID] = true
		sb.mu.Lock()
		n := 0
		for _, e := range sb.tables {
			if e.kind != kindAbsent && e.kind != kindDropped {
				n++
			}
		}
		r.Rows = append(r.Rows, []*string{sp(sb.ID), sp(sb.Name), sp(sb.stateLocked()), sp(sb.Owner), ts(sb.Created),
			ts(sb.expires), itoa(int64(sb.attached)), itoa(int64(n)), itoa(sb.bytes)})
		sb.mu.Unlock()
	}
	err := s.m.withConn(ctx, func(c SideConn) error {
		rows, err := c.Query(ctx, "SELECT s.id, s.name, s.kept, s.owner, s.created_at, s.expires_at, COUNT(t.tbl), COALESCE(SUM(t.bytes), 0)"+
			" FROM "+s.m.q("sandboxes")+" s LEFT JOIN "+s.m.q("tables")+" t ON t.sandbox_id = s.id AND t.kind NOT IN ('dropped', 'absent')"+
			" GROUP BY s.id, s.name, s.kept, s.owner, s.created_at, s.expires_at")
		if err != nil {
			return fmt.Errorf("read registry: %w", err)
		}
		for _, row := range rows {
			if seen[str(row[0])] || str(row[3]) != s.user && !s.m.isAdmin(s.user) {
				continue
			}
			state := "active"
			if str(row[2]) == "1" {
				state = "kept"
			}
			r.Rows = append(r.Rows, []*string{row[0], row[1], sp(state), row[3], ts(parseTime(row[4])), ts(parseTime(row[5])),
				sp("0"), row[6], row[7]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(r.Rows, func(i, j int) bool { return str(r.Rows[i][1]) < str(r.Rows[j][1]) })
	return r, nil
}
