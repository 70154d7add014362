package session

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// A transaction the session restarts or replays past a fork
// (transaction.go) starts again as the client started it: with the same
// isolation level — one SET TRANSACTION gave it, or the session's when it
// began, which a SET SESSION inside it does not change — and access mode
// (READ ONLY: a write then fails with 1792, as in the first one), and WITH
// CONSISTENT SNAPSHOT when it had one. MariaDB shows none of this for the
// open transaction, so the session follows it from the statements: SET
// TRANSACTION (pending until a transaction starts with it, one ends, or a
// statement using a table runs in autocommit mode — measured on 10.11: one
// that reads an InnoDB table uses it up, SELECT 1, SET and SHOW WARNINGS
// do not), and BEGIN / START TRANSACTION with its words.

// txStart is how the open transaction started.
type txStart struct {
	// chars are the isolation level, access mode and snapshot it runs
	// with ("" when not known).
	chars rewrite.TxChars
	// explicit: BEGIN / START TRANSACTION started it (else a statement
	// with autocommit off).
	explicit bool
}

// began records how the transaction p (nil: a statement the proxy did not
// plan) started: its BEGIN's words, else what a SET TRANSACTION before it
// gave it, else the session's settings; a chained one keeps those of the
// transaction before it.
func (s *Session) began(p *Plan) {
	if p != nil && p.txEnd && p.start == nil && s.cur != (txStart{}) {
		// COMMIT / ROLLBACK AND CHAIN (or completion_type CHAIN): the new
		// transaction has the isolation level and access mode of the one
		// that ended.
		s.cur.chars.Snapshot = false
		return
	}
	c := rewrite.TxChars{Isolation: isolationLevel(s.vars.Isolation), Access: accessMode(s.vars.ReadOnly)}
	if s.nextTx.Isolation != "" {
		c.Isolation = s.nextTx.Isolation
	}
	if s.nextTx.Access != "" {
		c.Access = s.nextTx.Access
	}
	explicit := p != nil && p.start != nil
	if explicit {
		if p.start.Access != "" {
			c.Access = p.start.Access
		}
		c.Snapshot = p.start.Snapshot
	}
	s.cur, s.nextTx = txStart{chars: c, explicit: explicit}, rewrite.TxChars{}
}

// nextTransaction follows SET TRANSACTION, which gives the next
// transaction its characteristics (after p ran; now: a transaction is open
// after it, started: p started it).
func (s *Session) nextTransaction(p *Plan, failed, now, started bool) {
	switch {
	case p != nil && p.next != nil:
		if !failed {
			if p.next.Isolation != "" {
				s.nextTx.Isolation = p.next.Isolation
			}
			if p.next.Access != "" {
				s.nextTx.Access = p.next.Access
			}
		}
	case started:
		// began took it
	case !now && (p == nil || p.locks || p.txEnd || usesTables(p.analysis)):
		// The end of a transaction used it up, and so did a statement
		// that used a table with autocommit on (its own transaction).
		s.nextTx = rewrite.TxChars{}
	}
}

// usesTables reports whether an input reads or writes a table (a view of
// information_schema or performance_schema aside).
func usesTables(a *rewrite.Analysis) bool {
	if a == nil {
		return false
	}
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.Names} {
			for _, t := range list {
				if !strings.EqualFold(t.DB, "information_schema") && !strings.EqualFold(t.DB, "performance_schema") {
					return true
				}
			}
		}
	}
	return false
}

// startAgain readies the start of the restarted transaction (its last
// COMMIT or ROLLBACK sent): SET TRANSACTION with its isolation level and
// access mode, then, when start is set, START TRANSACTION [WITH
// CONSISTENT SNAPSHOT] (else the caller resends the recorded BEGIN, or the
// next statement starts it, as with autocommit off the first one did).
func (s *Session) startAgain(ctx context.Context, start bool) error {
	c := s.cur.chars
	var set []string
	if c.Isolation != "" {
		set = append(set, "ISOLATION LEVEL "+c.Isolation)
	}
	if c.Access != "" {
		set = append(set, c.Access)
	}
	if len(set) > 0 {
		if _, err := s.up.Query(ctx, "SET TRANSACTION "+strings.Join(set, ", ")); err != nil {
			return err
		}
	}
	if !start {
		return nil
	}
	q := "START TRANSACTION"
	if c.Snapshot {
		q += " WITH CONSISTENT SNAPSHOT"
	}
	_, err := s.up.Query(ctx, q)
	return err
}

// isolationLevel is an @@tx_isolation value as SET TRANSACTION takes it
// ("" for anything but the four levels).
func isolationLevel(v string) string {
	l := strings.ToUpper(strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSpace(v)))
	switch l {
	case "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE":
		return l
	}
	return ""
}

// accessMode is an @@tx_read_only value as SET TRANSACTION takes it.
func accessMode(v string) string {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON":
		return "READ ONLY"
	case "0", "OFF":
		return "READ WRITE"
	}
	return ""
}

// setsAccess reports statements that set the session's access mode
// (SET SESSION TRANSACTION READ ONLY, SET tx_read_only = …), after which
// the session reads it back.
func setsAccess(st rewrite.Statement) bool {
	for _, v := range st.Vars {
		if v.System && v.Set && (v.Name == "tx_read_only" || v.Name == "transaction_read_only") {
			return true
		}
	}
	return false
}

// effectless are server variables whose value decides whether a
// statement runs to its end or what it reports, not what it does when it
// does: a replay under another value has the same effect, or fails (and is
// refused). autocommit's changes show in the server status.
var effectless = map[string]bool{
	"autocommit": true, "profiling": true, "profiling_history_size": true, "sql_notes": true, "sql_warnings": true,
	"max_statement_time": true, "lock_wait_timeout": true, "innodb_lock_wait_timeout": true, "wait_timeout": true,
	"interactive_timeout": true, "net_read_timeout": true, "net_write_timeout": true,
}

// replayFacts adds to p what a replay must know of its statement st: the
// transaction characteristics it sets, why a second run could differ, the
// server variable it sets, the tables it writes, what it reads of the
// statement before it, whether it sets LAST_INSERT_ID().
func replayFacts(p *Plan, st rewrite.Statement) {
	if st.Start != nil {
		p.start = st.Start
	}
	if st.Next != nil {
		p.next = st.Next
	}
	if p.volatile == "" {
		p.volatile = st.Volatile()
	}
	for _, v := range st.Vars {
		if v.System && v.Set && !effectless[v.Name] && p.setsVar == "" {
			p.setsVar = v.Name
		}
	}
	p.writes = append(p.writes, st.Writes...)
	if p.previous == "" {
		p.previous = st.Previous()
	}
	p.setsInsertID = p.setsInsertID || st.SetsLastInsertID()
}
