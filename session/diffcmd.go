package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
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
		db := c.ForDB
		if db == "" {
			db = s.db
		}
		if db == "" {
			return nil, errNoDatabase()
		}
		only = &rewrite.Table{DB: db, Name: c.ForTable}
	}
	return s.m.rev.Diff(ctx, sb, c.Summary, only)
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
	return s.m.rev.Promote(ctx, sb, s.user, c.Strategy, "sql", s.promoteCheck())
}
