package session

import (
	"context"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// The last insert id of INSERT | REPLACE … SELECT in a sandbox. MariaDB
// answers such a statement into a table with triggers, whose rows all carry
// their AUTO_INCREMENT values, with last insert id 0 where a table without
// any answers the last row's (forker/insertid.go); a fork has the
// capture's triggers. Its AFTER INSERT one keeps each row's value in a
// user variable of the fork's: the plan of such a statement notes the fork
// (planInsertID), and when its answer's last OK says rows were inserted
// but id 0, the proxy asks InsertID before it writes that OK, and writes
// the id in its place. The read is a SELECT on the client's connection,
// with no table: it keeps the statement's warnings (SHOW WARNINGS and
// @@warning_count), but the server's ROW_COUNT() and FOUND_ROWS() become
// its own. It reads those of the client's statement first, and the client's
// next statement gets them in place of its calls (rewrite.CountsResolver),
// FOUND_ROWS() also later ones, until a statement runs a query.

// lastCounts are ROW_COUNT() and FOUND_ROWS() as the client's last
// statement left them, when the proxy's own read changed the server's.
// ROW_COUNT() is known for the next statement only (rowCountKnown): every
// statement sets it. FOUND_ROWS() stays until a statement runs a query
// (keepsFoundRows).
type lastCounts struct {
	rowCount      int64
	rowCountKnown bool
	foundRows     int64
}

// planInsertID notes in p, the plan of a, the table whose last insert id
// the proxy may read for it: that of a's last statement when it is INSERT
// or REPLACE … SELECT (not ON DUPLICATE KEY UPDATE, whose id is 0 on a
// copy too, nor one calling LAST_INSERT_ID, whose argument the server
// answers) into one of the sandbox's tables, on MariaDB.
func (s *Session) planInsertID(a *rewrite.Analysis, p *Plan) {
	p.insertID = nil
	if s.sb == nil || s.m.server.Flavor != rewrite.MariaDB || len(a.Statements) == 0 {
		return
	}
	st := a.Statements[len(a.Statements)-1]
	if !st.InsertSelect || len(st.Writes) != 1 || callsLastInsertID(st) {
		return
	}
	e, ok := s.sb.Resolve(s.m.names.Key(st.Writes[0]))
	if !ok || e.Kind != sandbox.KindFork && e.Kind != sandbox.KindSchema && e.Kind != sandbox.KindCreated {
		return
	}
	phys := e.Phys
	p.insertID = &phys
}

// callsLastInsertID reports a statement that calls LAST_INSERT_ID.
func callsLastInsertID(st rewrite.Statement) bool {
	for _, f := range st.Funcs {
		if strings.EqualFold(f.Name, "LAST_INSERT_ID") {
			return true
		}
	}
	return false
}

// ReadsInsertID reports whether the answer's last OK may need its last
// insert id from InsertID.
func (p *Plan) ReadsInsertID() bool { return p != nil && p.insertID != nil }

// InsertID is the last insert id the answer's last OK, ok, must say in
// place of the server's (patched), read as the package comment says: only
// for an OK that ends the answer, says rows were inserted and id 0, of a
// table whose triggers are all the proxy's and whose capture sets the
// variable. err is set only when the client's connection broke.
func (s *Session) InsertID(ctx context.Context, p *Plan, ok wire.OK) (id uint64, patched bool, err error) {
	if !p.ReadsInsertID() || s.up == nil || ok.Affected == 0 || ok.InsertID != 0 || ok.Status&wire.StatusMoreResults != 0 {
		return 0, false, nil
	}
	var v string
	err = s.m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		var err error
		v, err = s.m.caps.InsertIDVar(ctx, c, *p.insertID)
		return err
	})
	if err != nil || v == "" {
		if err != nil {
			s.log.Warn("the triggers of a fork could not be read: its last insert id stays the server's 0", zap.Error(err))
		}
		return 0, false, nil
	}
	// LIMIT: sql_select_limit leaves it. The variable is cleared as it is
	// read: a later statement can only find its own rows' value there.
	q := "SELECT @" + quote.Ident(v) + ", ROW_COUNT(), FOUND_ROWS(), @" + quote.Ident(v) + " := NULL LIMIT 1"
	r, err := s.up.Query(ctx, q)
	switch {
	case err != nil && !isServerError(err):
		return 0, false, err
	case err != nil || len(r.Rows) != 1 || len(r.Rows[0]) != 4:
		s.log.Warn("the last insert id of a fork could not be read: it stays the server's 0", zap.Error(err))
		return 0, false, nil
	}
	row := r.Rows[0]
	rowCount, err1 := strconv.ParseInt(sideconn.Str(row[1]), 10, 64)
	foundRows, err2 := strconv.ParseInt(sideconn.Str(row[2]), 10, 64)
	if err1 == nil && err2 == nil {
		s.counts = &lastCounts{rowCount: rowCount, rowCountKnown: true, foundRows: foundRows}
	}
	if row[0] == nil {
		return 0, false, nil
	}
	id, err = strconv.ParseUint(*row[0], 10, 64)
	if err != nil {
		s.log.Warn("the last insert id of a fork is not a number: it stays the server's 0", zap.String("value", *row[0]))
		return 0, false, nil
	}
	return id, true, nil
}

// OtherCommand tells the session a command other than COM_QUERY,
// COM_STMT_PREPARE or COM_STMT_CLOSE came: the server's ROW_COUNT() is the
// command's now (COM_PING sets it to 0), and FOUND_ROWS() too unless
// keepsFoundRows (a command that runs no query: COM_PING, COM_INIT_DB).
func (s *Session) OtherCommand(keepsFoundRows bool) {
	switch {
	case s.counts == nil:
	case keepsFoundRows:
		s.counts = &lastCounts{foundRows: s.counts.foundRows}
	default:
		s.counts = nil
	}
}

// takeCounts is what the proxy knows of ROW_COUNT() and FOUND_ROWS() for
// in, a text to run (nil for any other input); it is then forgotten
// (carryCounts keeps FOUND_ROWS() past a statement that leaves it), but for
// a text to prepare (COM_STMT_PREPARE leaves both as they are).
func (s *Session) takeCounts(in Input) *lastCounts {
	c := s.counts
	if in.Prepare {
		return nil
	}
	s.counts = nil
	if in.Prepared != nil {
		return nil
	}
	return c
}

// carryCounts keeps the FOUND_ROWS() of counts, taken for the input p
// planned, for the inputs after it when p runs no query (keepsFoundRows)
// and no read of a last insert id replaced them.
func (s *Session) carryCounts(p *Plan, counts *lastCounts) {
	if counts != nil && s.counts == nil && keepsFoundRows(p) {
		s.counts = &lastCounts{foundRows: counts.foundRows}
	}
}

// keepsFoundRows reports a plan whose statements leave FOUND_ROWS() as it
// was: SHOW WARNINGS or ERRORS, the transaction's start and end, SET and DO
// of no table and no function (no query runs for them).
func keepsFoundRows(p *Plan) bool {
	if p == nil || p.analysis == nil || len(p.analysis.Statements) == 0 {
		return false
	}
	for _, st := range p.analysis.Statements {
		switch st.Kind {
		case rewrite.KindShowWarnings, rewrite.KindShowErrors, rewrite.KindBegin, rewrite.KindCommit, rewrite.KindRollback:
		case rewrite.KindSet, rewrite.KindDo:
			if len(st.Reads) > 0 || len(st.Funcs) > 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// PreviousCounts implements rewrite.CountsResolver.
func (r resolver) PreviousCounts() (rowCount int64, rowCountKnown bool, foundRows int64, ok bool) {
	if r.counts == nil {
		return 0, false, 0, false
	}
	return r.counts.rowCount, r.counts.rowCountKnown, r.counts.foundRows, true
}
