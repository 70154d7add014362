package session

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Proxy users share one upstream account, so the upstream would show each
// of them every other's threads, statements and sandbox schemas: the proxy
// is the only wall between them. A sandboxing session (transparent or
// explicit mode, in a sandbox or not) therefore
//
//   - gets SHOW [FULL] PROCESSLIST and COM_PROCESS_INFO answered with its
//     own proxy user's connections only (ProcessList; the proxy filters the
//     server's answer by the upstream thread ids of its connections);
//   - is refused what shows the whole server: performance_schema,
//     information_schema.PROCESSLIST and its InnoDB and statistics tables,
//     the mysql schema's statistics and log tables, the binary log, the
//     table cache (serverWide), and production views that read them;
//   - outside a sandbox, reads information_schema's listings of databases
//     and tables through views without the proxy's databases (the
//     production information_schema, ProductionInfoSchema), and gets SHOW
//     DATABASES answered from them.
//
// Passthrough sessions are the trusted escape hatch: nothing of this
// applies to them.

// User is the proxy user the session logged in as.
func (s *Session) User() string { return s.user }

// UnmapOwn replaces the physical database names of the session's proxy
// user's sandboxes (in this process) in text with their logical names, and
// their information_schema databases with information_schema, so that the
// statements of the user's other connections read as the user wrote them.
func (s *Session) UnmapOwn(text string) string {
	if s.m == nil || !strings.Contains(text, s.m.cfg.Prefix) {
		return text
	}
	var own []*Sandbox
	for _, sb := range s.m.reg.Sandboxes() {
		if sb.Owner == s.user {
			own = append(own, sb)
		}
	}
	for _, sb := range own {
		for _, e := range sb.Entries() {
			text = strings.ReplaceAll(text, e.Phys.DB, e.Logical.DB)
		}
	}
	for _, sb := range own {
		text = strings.ReplaceAll(text, sandbox.InfoSchema(s.m.cfg.Prefix, sb.ID), "information_schema")
	}
	// Outside a sandbox, information_schema's listings are read through the
	// production views (outsideSandbox).
	return strings.ReplaceAll(text, infoschema.ProductionSchema(s.m.cfg.Prefix), "information_schema")
}

// sharedState says why a statement of a session outside any sandbox reads
// what every proxy user's sessions share ("" when it does not): the server
// wide tables and statements a sandbox is refused, and production views
// that read them.
func (s *Session) sharedState(ctx context.Context, a *rewrite.Analysis) (string, error) {
	for _, st := range a.Statements {
		if why := infoschema.ServerWide(st); why != "" {
			return why, nil
		}
		for _, t := range append(st.Reads, st.Names...) {
			if infoschema.Virtual(t) || t.DB == "" {
				continue
			}
			o, err := s.m.catalog.Object(ctx, t)
			if err != nil {
				return "", err
			}
			if o.Wide != "" {
				return o.Wide, nil
			}
		}
	}
	return "", nil
}

// prodViews records whether this process made the production
// information_schema views.
type prodViews struct {
	mu   sync.Mutex
	done bool
}

// ensureProdViews makes the production information_schema views once per
// process (CREATE OR REPLACE: processes sharing the upstream make the same).
func (m *Manager) ensureProdViews(ctx context.Context) error {
	m.prod.mu.Lock()
	defer m.prod.mu.Unlock()
	if m.prod.done {
		return nil
	}
	err := m.reg.WithConn(ctx, func(c SideConn) error {
		db := quote.Ident(infoschema.ProductionSchema(m.cfg.Prefix))
		if _, err := c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
			return fmt.Errorf("create the production information_schema: %w", err)
		}
		return infoschema.CreateViews(ctx, c, "the production", func(v infoschema.View, cols []infoschema.Col) string {
			return infoschema.ProductionViewSQL(m.cfg.Prefix, v, cols)
		})
	})
	if err != nil {
		return err
	}
	m.prod.done = true
	return nil
}

// outsideSandbox plans what a session outside any sandbox must not run as
// sent: SHOW DATABASES becomes a query of the production information_schema,
// what shows the whole server is refused, and reads of information_schema's
// listings go to the production views (which refresh made). done is false
// when p goes upstream as it is.
func (s *Session) outsideSandbox(ctx context.Context, a *rewrite.Analysis, sql string, opts rewrite.Options, prepared bool, p *Plan) (*Plan, bool, error) {
	if len(a.Statements) == 1 && a.Statements[0].Show != nil {
		switch sh := a.Statements[0].Show; sh.What {
		case "DATABASES", "PROCEDURE STATUS", "FUNCTION STATUS":
			return s.planShow(ctx, sh, opts, prepared)
		}
	}
	if why, err := s.sharedState(ctx, a); err != nil {
		return nil, true, err
	} else if why != "" {
		return nil, true, infoschema.RefuseShared(why)
	}
	if s.allowProd {
		// What the proxy cannot see through (dynamic SQL, CALL, stored
		// program definitions) could read what every user shares; with
		// --production-writes=deny it is refused anyway.
		if _, err := a.Rewrite(catalog.MapsNothing{}); err != nil {
			return nil, true, rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy must see what a statement reads, since the sessions of "+
				"every user of this proxy share the server, and cannot: %s; run it on a direct connection", refusalText(err))
		}
	}
	if !infoschema.ReadsViews(a) {
		return p, false, nil
	}
	res, err := a.Rewrite(infoschema.ProductionResolver{Prefix: s.m.cfg.Prefix})
	if err != nil {
		return nil, true, err
	}
	p.SQL, p.changed, p.renames = res.SQL, res.Changed, res.Renames
	p.infoIdents = rewrite.Identifiers(sql, opts)
	return p, false, nil
}
