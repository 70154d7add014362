package session

import (
	"context"
	"errors"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// showDefs asks the server, on the session's connection, for the column
// definitions of its own answer to sh — names, types, lengths, flags,
// character sets as the client gets them — with the name column labelled
// as sh's. A server error (an unknown database, a denied one) is the
// client's answer, as it would be on the server.
func (s *Session) showDefs(ctx context.Context, sh *rewrite.Show, currentDB string) ([][]byte, error) {
	if s.up == nil {
		return nil, nil
	}
	db, err := infoschema.ShowDB(sh, currentDB)
	if err != nil {
		return nil, err
	}
	probed := db
	if _, own := s.ownDB(db); own {
		probed = s.physDB(db) // one of the sandbox's own: its schema answers
	}
	if db, err = s.ClientName(db); err != nil {
		return nil, err
	}
	if probed, err = s.ClientName(probed); err != nil {
		return nil, err
	}
	r, err := s.up.Query(ctx, infoschema.ShowProbe(sh, probed))
	var me *mysql.MyError
	if isServerError(err) && errors.As(err, &me) {
		return nil, &rewrite.Refusal{Code: me.Code, State: me.State, Message: s.unmap(me.Message)}
	}
	if err != nil {
		return nil, err
	}
	if len(r.Columns) == 0 {
		return nil, nil
	}
	defs := make([][]byte, len(r.Columns))
	copy(defs, r.Columns)
	if sh.What == "TABLES" || sh.What == "DATABASES" {
		n, rest, ok := wire.ParseColumnDef(defs[0])
		if !ok {
			return nil, nil
		}
		n.Name = infoschema.ShowLabel(sh, db)
		defs[0] = wire.AppendColumnDef(nil, n, rest)
	}
	return defs, nil
}

// planShow plans a SHOW the proxy answers with a query of information_schema
// (infoschema.ShowSQL), whose answer carries the server's own column definitions
// (showDefs). ok is false for other SHOW statements.
func (s *Session) planShow(ctx context.Context, sh *rewrite.Show, opts rewrite.Options, prepared bool) (p *Plan, ok bool, err error) {
	if !infoschema.Shown(sh.What) {
		return nil, false, nil
	}
	defs, err := s.showDefs(ctx, sh, opts.DB)
	if err != nil {
		return nil, true, err
	}
	if !infoschema.HasColumns(defs) {
		defs = nil // definitions that do not name their columns: the proxy's own
	}
	// The database is written in the client's character set, as the rest
	// of the text (its LIKE pattern and WHERE condition are the client's).
	onConn := *sh
	if db, err := infoschema.ShowDB(sh, opts.DB); err == nil && db != "" {
		if onConn.DB, err = s.ClientName(db); err != nil {
			return nil, true, err
		}
	}
	q, _, err := infoschema.ShowSQL(&onConn, opts.DB, s.vars.Charset, defs)
	if err != nil {
		return nil, true, err
	}
	if p, err = s.refreshed(ctx, q, opts, prepared); err != nil {
		return nil, true, err
	}
	p.defs = defs
	return p, true, nil
}
