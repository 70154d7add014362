package session

import (
	"context"
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// A sandbox's information_schema: for each view below the proxy keeps a
// view of the same name in the sandbox's own database sandbox.InfoSchema(prefix,
// id), and rewrites a sandboxed session's references to
// information_schema.<view> to it. Each view is the server's
// information_schema view with
//
//   - rows of this sandbox's tables (forks, schema-only forks, tables
//     created in the sandbox) under their logical database and table names;
//   - rows of production tables the sandbox has forked, created or dropped
//     left out (the sandbox's version, or nothing, stands in for them);
//   - rows of every other database of the proxy (other sandboxes, the
//     registry) left out.
//
// The views read the registry live, so they need no update as tables are
// forked; they are made once per sandbox (and process), on first use. They
// run with the reader's privileges (SQL SECURITY INVOKER), as
// information_schema itself does: a proxy user mapped to an upstream
// account that sees less than the proxy's own must not see more through
// them.

// readOwnConn fills, on the session's own connection, the own-connection
// tables a reads.
func (s *Session) readOwnConn(ctx context.Context, a *rewrite.Analysis) error {
	done := map[string]bool{}
	for _, st := range a.Statements {
		for _, t := range st.Reads {
			if v, ok := infoschema.OwnConnView(t); ok && !done[v] {
				done[v] = true
				if _, err := s.up.Query(ctx, infoschema.OwnConnSQL(sandbox.InfoSchema(s.m.cfg.Prefix, s.sb.ID), v)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ensureInfoViews makes sb's information_schema views once.
func (m *Manager) ensureInfoViews(ctx context.Context, sb *Sandbox) error {
	if sb.HasInfoViews() {
		return nil
	}
	defer sb.LockForks()()
	err := m.reg.WithConn(ctx, func(c SideConn) error {
		if err := m.reg.Persist(ctx, c, sb); err != nil {
			return err
		}
		if _, err := c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, sb.ID))); err != nil {
			return fmt.Errorf("create the sandbox's information_schema: %w", err)
		}
		// Names compare as information_schema's do.
		if _, err := c.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+quote.Ident(sandbox.InfoSchema(m.cfg.Prefix, sb.ID))+"."+
			quote.Ident(infoschema.DroppedRoutines)+" (db VARCHAR(64) NOT NULL, name VARCHAR(64) NOT NULL, type VARCHAR(13) NOT NULL, "+
			"PRIMARY KEY (db, name, type)) CHARACTER SET utf8mb3 COLLATE utf8mb3_general_ci"); err != nil {
			return fmt.Errorf("create the sandbox's table of dropped routines: %w", err)
		}
		return infoschema.CreateViews(ctx, c, "the sandbox's", func(v infoschema.View, cols []infoschema.Col) string {
			return infoschema.SandboxViewSQL(m.cfg.Prefix, m.names.Q("tables"), sb.ID, v, cols)
		})
	})
	if err != nil {
		return err
	}
	sb.MarkInfoViews()
	return nil
}
