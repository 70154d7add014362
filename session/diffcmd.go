package session

import (
	"cmp"
	"context"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// sandboxNamed is the sandbox a DIFF, EXPORT or PROMOTE names for user:
// the session's own when name is "" (cur), else one user owns (any, for
// admins).
func (m *Manager) sandboxNamed(ctx context.Context, name, user string, cur *Sandbox) (*Sandbox, error) {
	if name == "" || cur != nil && cur.Name == name && !cur.IsRetired() {
		if cur == nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "not in a sandbox; name one (SANDBOX LIST shows yours) or SANDBOX ATTACH first")
		}
		return cur, nil
	}
	sb, err := m.reg.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	if sb == nil || sb.Owner != user && !m.reg.IsAdmin(user) {
		return nil, rewrite.Refuse(wire.ErUnknown, "no sandbox named %q; SANDBOX LIST shows yours", name)
	}
	return sb, nil
}

// reviewed is the sandbox a DIFF, EXPORT or PROMOTE c names, once the
// session's account may read its tables.
func (s *Session) reviewed(ctx context.Context, c command.Command) (*Sandbox, error) {
	sb, err := s.m.sandboxNamed(ctx, c.Name, s.user, s.sb)
	if err != nil {
		return nil, err
	}
	return sb, s.mayReadSandbox(ctx, sb)
}

// diffCmd is SANDBOX DIFF.
func (s *Session) diffCmd(ctx context.Context, c command.Command) (*Reply, error) {
	sb, err := s.reviewed(ctx, c)
	if err != nil {
		return nil, err
	}
	var only *rewrite.Table
	if c.ForTable != "" {
		t, err := s.commandTables([]command.Table{{DB: c.ForDB, Name: c.ForTable}})
		if err != nil {
			return nil, err
		}
		only = &t[0]
	}
	return s.m.rev.Diff(ctx, sb, c.Summary, only)
}

// commandTables are the tables a SANDBOX statement names, in the current
// database where they name none (1046 when there is none).
func (s *Session) commandTables(ts []command.Table) ([]rewrite.Table, error) {
	var out []rewrite.Table
	for _, t := range ts {
		db := cmp.Or(t.DB, s.db)
		if db == "" {
			return nil, errNoDatabase()
		}
		out = append(out, rewrite.Table{DB: db, Name: t.Name})
	}
	return out, nil
}

// exportCmd is SANDBOX EXPORT.
func (s *Session) exportCmd(ctx context.Context, c command.Command) (*Reply, error) {
	sb, err := s.reviewed(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.m.rev.Export(ctx, sb)
}

// promoteCmd is SANDBOX PROMOTE.
func (s *Session) promoteCmd(ctx context.Context, c command.Command) (*Reply, error) {
	sb, err := s.reviewed(ctx, c)
	if err != nil {
		return nil, err
	}
	o := review.PromoteOptions{Strategy: c.Strategy, DryRun: c.DryRun, Matching: c.Matching}
	if o.Tables, err = s.commandTables(c.Tables); err != nil {
		return nil, err
	}
	if o.Overwrite, err = s.commandTables(c.Overwrite); err != nil {
		return nil, err
	}
	return s.m.rev.Promote(ctx, sb, s.user, "sql", o, s.promoteCheck())
}
