package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sqlfork/sqlfork-proxy/catalog"
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

// ProcessList asks the proxy to answer SHOW [FULL] PROCESSLIST itself: run
// SQL on the session's own upstream connection and keep only the rows of
// the connections of the same proxy user.
type ProcessList struct {
	// Full is SHOW FULL PROCESSLIST (Info not cut at 100 characters).
	Full bool
	// Text is the client's statement, run upstream as sent, so that the
	// caller's own row shows it in Info as a direct connection does
	// (PyMySQL's test_issue_36 finds its connection by Info = "show
	// processlist"); "" for COM_PROCESS_INFO.
	Text string
}

// SQL is the statement the proxy runs upstream to answer the process list;
// its rows are then filtered.
func (p *ProcessList) SQL() string {
	if p.Text != "" {
		return p.Text
	}
	if p.Full {
		return "SHOW FULL PROCESSLIST"
	}
	return "SHOW PROCESSLIST"
}

// ownOnly keeps an input of a sandboxing session (in a sandbox or not) to
// what its proxy user may see: SHOW [FULL] PROCESSLIST is answered by the
// proxy (the returned ProcessList), statements that show the whole server
// are refused, and so is SHOW DATABASES among other statements (the proxy
// answers it from views without its own databases only when it comes
// alone).
func ownOnly(a *rewrite.Analysis, prepared bool) (*ProcessList, error) {
	pl, err := processList(a, prepared)
	if err != nil || pl != nil {
		return pl, err
	}
	if why := a.ServerWide(); why != "" {
		return nil, refuseShared(why)
	}
	if len(a.Statements) > 1 {
		for _, st := range a.Statements {
			if st.Show != nil && (st.Show.What == "DATABASES" || strings.HasSuffix(st.Show.What, " STATUS") && st.Show.What != "TABLE STATUS") {
				return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy answers SHOW %s without its own databases only "+
					"when it is sent alone; send it without other statements", st.Show.What)
			}
		}
	}
	return nil, nil
}

// processList finds SHOW [FULL] PROCESSLIST in a: the proxy answers it,
// alone and as a plain statement only.
func processList(a *rewrite.Analysis, prepared bool) (*ProcessList, error) {
	var pl *ProcessList
	for _, st := range a.Statements {
		if st.Kind == rewrite.KindShowProcesslist {
			pl = &ProcessList{Full: st.Show != nil && st.Show.Full}
		}
	}
	switch {
	case pl == nil:
		return nil, nil
	case len(a.Statements) > 1:
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy answers SHOW PROCESSLIST itself (with your own connections only) "+
			"and only when it is sent alone; send it without other statements")
	case prepared:
		return nil, rewrite.Refuse(wire.ErUnsupportedPS, "the proxy answers SHOW PROCESSLIST itself (with your own connections only), "+
			"which cannot be prepared; send it as a plain statement")
	}
	return pl, nil
}

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
	return text
}

// sharedState says why a statement of a session outside any sandbox reads
// what every proxy user's sessions share ("" when it does not): the server
// wide tables and statements a sandbox is refused, and production views
// that read them.
func (s *Session) sharedState(ctx context.Context, a *rewrite.Analysis) (string, error) {
	for _, st := range a.Statements {
		if why := serverWide(st); why != "" {
			return why, nil
		}
		for _, t := range append(st.Reads, st.Names...) {
			if skipCatalog(t) || t.DB == "" {
				continue
			}
			o, err := s.m.catalog.object(ctx, t)
			if err != nil {
				return "", err
			}
			if o.wide != "" {
				return o.wide, nil
			}
		}
	}
	return "", nil
}

// refuseShared is the error for a statement sharedState found.
func refuseShared(why string) error {
	return rewrite.Refuse(wire.ErOptionPreventsStatement, "%s, which the sessions of every user of this proxy share; it is refused through the "+
		"proxy (run it on a direct connection)", why)
}

// ProductionInfoSchema is the database holding information_schema views
// for sessions outside any sandbox: the server's views without the proxy's
// own databases.
func ProductionInfoSchema(prefix string) string { return prefix + "_production" }

// prodViews records whether this process made the production
// information_schema views.
type prodViews struct {
	mu   sync.Mutex
	done bool
}

// prodViewSQL is the definition of the production view of v; cols are the
// server's columns of information_schema.<v.name>, in order. The views run
// with the reader's privileges (SQL SECURITY INVOKER): information_schema
// shows each account what it may see, and a user whose upstream account
// sees less than the proxy's must not see more through them.
func (m *Manager) prodViewSQL(v infoView, cols []infoCol) string {
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = "i." + quote.Ident(c.name)
	}
	internal := quote.LikePrefix(m.cfg.Prefix)
	var conds []string
	switch {
	case v.routineSchema != "":
		conds = append(conds, "i."+v.routineSchema+" NOT LIKE "+internal)
	case len(v.pairs) == 0: // SCHEMATA
		conds = append(conds, "i.SCHEMA_NAME NOT LIKE "+internal)
	}
	for _, pr := range v.pairs {
		conds = append(conds, "(i."+pr[0]+" IS NULL OR i."+pr[0]+" NOT LIKE "+internal+")")
	}
	for _, c := range v.schemaCols {
		conds = append(conds, "(i."+c+" IS NULL OR i."+c+" NOT LIKE "+internal+")")
	}
	return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW " + quote.Ident(ProductionInfoSchema(m.cfg.Prefix)) + "." +
		quote.Ident(v.name) + " AS SELECT " + strings.Join(sel, ", ") + " FROM information_schema." + v.name +
		" i WHERE " + strings.Join(conds, " AND ")
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
		db := quote.Ident(ProductionInfoSchema(m.cfg.Prefix))
		if _, err := c.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+db); err != nil {
			return fmt.Errorf("create the production information_schema: %w", err)
		}
		return createInfoViews(ctx, c, "the production", m.prodViewSQL)
	})
	if err != nil {
		return err
	}
	m.prod.done = true
	return nil
}

// readsInfoViews reports whether the analysis names a mirrored
// information_schema view (read, or named by a statement the parser could
// not read).
func readsInfoViews(a *rewrite.Analysis) bool {
	for _, st := range a.Statements {
		for _, t := range append(st.Reads, st.Names...) {
			if _, ok := infoViewName(t.Name); ok && strings.EqualFold(t.DB, "information_schema") {
				return true
			}
		}
	}
	return false
}

// prodResolver maps information_schema's listings to the production views
// and leaves every other table where it is.
type prodResolver struct{ prefix string }

// Resolve implements rewrite.Resolver.
func (r prodResolver) Resolve(t rewrite.Table, _ bool) (rewrite.Table, bool, error) {
	if strings.EqualFold(t.DB, "information_schema") {
		if v, ok := infoViewName(t.Name); ok {
			return rewrite.Table{DB: ProductionInfoSchema(r.prefix), Name: v}, true, nil
		}
	}
	return t, false, nil
}

// outsideSandbox plans what a session outside any sandbox must not run as
// sent: SHOW DATABASES becomes a query of the production information_schema,
// what shows the whole server is refused, and reads of information_schema's
// listings go to the production views. done is false when p goes upstream
// as it is.
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
		return nil, true, refuseShared(why)
	}
	if s.allowProd {
		// What the proxy cannot see through (dynamic SQL, CALL, stored
		// program definitions) could read what every user shares; with
		// --production-writes=deny it is refused anyway.
		if _, err := a.Rewrite(catalog.MapsNothing{}); err != nil {
			msg := err.Error()
			var r *rewrite.Refusal
			if errors.As(err, &r) {
				msg = strings.TrimPrefix(r.Message, "sqlfork-proxy: ")
			}
			return nil, true, rewrite.Refuse(wire.ErOptionPreventsStatement, "the proxy must see what a statement reads, since the sessions of "+
				"every user of this proxy share the server, and cannot: %s; run it on a direct connection", msg)
		}
	}
	if !readsInfoViews(a) {
		return p, false, nil
	}
	if err := s.m.ensureProdViews(ctx); err != nil {
		return nil, true, err
	}
	res, err := a.Rewrite(prodResolver{prefix: s.m.cfg.Prefix})
	if err != nil {
		return nil, true, err
	}
	p.SQL, p.changed, p.renames = res.SQL, res.Changed, res.Renames
	p.infoIdents = rewrite.Identifiers(sql, opts)
	return p, false, nil
}
