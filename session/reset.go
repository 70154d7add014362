package session

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// resetCmd is SANDBOX RESET [name] [FOR tables]: the sandbox (the
// session's, or the one named: its user's own, any for sandbox admins, as
// DISCARD) gives the tables (every table, without FOR) back to production
// as it is now (forking.Forker.Reset); the sandbox and its connections
// stay.
func (s *Session) resetCmd(ctx context.Context, c command.Command) (*Reply, error) {
	sb := s.sb
	if c.Name != "" && (sb == nil || sb.Name != c.Name || sb.IsRetired()) {
		found, err := s.m.reg.Lookup(ctx, c.Name)
		if err != nil {
			return nil, err
		}
		if found == nil {
			return nil, rewrite.Refuse(wire.ErUnknown, "no sandbox named %q; SANDBOX LIST shows yours", c.Name)
		}
		if err := s.authorize(found); err != nil {
			return nil, err
		}
		sb = s.m.reg.Remember(found)
	}
	if sb == nil {
		return nil, rewrite.Refuse(wire.ErUnknown, "not in a sandbox; name the sandbox to reset")
	}
	tables, err := s.commandTables(c.Tables)
	if err != nil {
		return nil, err
	}
	res, err := s.m.fk.Reset(ctx, sb, tables)
	if err != nil {
		return nil, err
	}
	return &Reply{Info: res.Message(sb.Name)}, nil
}
