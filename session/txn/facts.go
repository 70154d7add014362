package txn

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// Facts are what the statements of one input tell the transaction: the
// characteristics they give it, whether they may take its read view, and
// what a replay must know of them. Add gathers them statement by statement;
// the session adds what only planning finds (Volatile: a stored function
// called).
type Facts struct {
	// Start is what the input's BEGIN starts its transaction with, Next
	// what its SET TRANSACTION gives the next one.
	Start, Next *rewrite.TxChars
	// Volatile says why a second run of the input could differ from its
	// first (rewrite.Statement.Volatile), SetsVar names a server variable
	// it sets: a replay refuses both.
	Volatile, SetsVar string
	// Writes are the tables the input writes, whose column defaults a
	// replay checks.
	Writes []rewrite.Table
	// Previous names what the input reads that the statement before it
	// left (ROW_COUNT(), …), which a restart or replay before it would
	// change; SetsInsertID: it may set LAST_INSERT_ID(), which a replay
	// sets to its last insert's id.
	Previous     string
	SetsInsertID bool
	// OpensView: running the input may give the open transaction its read
	// view (see opensView).
	OpensView bool
	// Serializable: the input asks for SERIALIZABLE for the next
	// transaction.
	Serializable bool
}

// effectless reports server variables whose value decides whether a
// statement runs to its end or what it reports, not what it does when it
// does: a replay under another value has the same effect, or fails (and is
// refused). autocommit's changes show in the server status.
func effectless(name string) bool {
	switch name {
	case "autocommit", "profiling", "profiling_history_size", "sql_notes", "sql_warnings",
		"max_statement_time", "lock_wait_timeout", "innodb_lock_wait_timeout", "wait_timeout",
		"interactive_timeout", "net_read_timeout", "net_write_timeout":
		return true
	}
	return false
}

// Add adds what the statement st of the input sql tells: the transaction
// characteristics it sets, why a second run could differ, the server
// variable it sets, the tables it writes, what it reads of the statement
// before it, whether it sets LAST_INSERT_ID(), may take a read view or
// asks for SERIALIZABLE.
func (f *Facts) Add(st rewrite.Statement, sql string) {
	if st.Start != nil {
		f.Start = st.Start
	}
	if st.Next != nil {
		f.Next = st.Next
	}
	if f.Volatile == "" {
		f.Volatile = st.Volatile()
	}
	for _, v := range st.Vars {
		if v.System && v.Set && !effectless(v.Name) && f.SetsVar == "" {
			f.SetsVar = v.Name
		}
	}
	f.Writes = append(f.Writes, st.Writes...)
	if f.Previous == "" {
		f.Previous = st.Previous()
	}
	f.SetsInsertID = f.SetsInsertID || st.SetsLastInsertID()
	f.Serializable = f.Serializable || st.Serializable
	f.OpensView = f.OpensView || opensView(st, sql)
}

// opensView reports whether running st (of the input sql) may give the
// open transaction its read view: a plain read of a table may (a SELECT,
// and any statement the proxy does not know to lock what it reads), START
// TRANSACTION WITH CONSISTENT SNAPSHOT does; InnoDB reads the tables of
// INSERT, UPDATE, DELETE, LOAD DATA and DDL with locks, the latest rows,
// without one (ha_innobase::store_lock: a locking read for every statement
// but a plain SELECT).
func opensView(st rewrite.Statement, sql string) bool {
	switch {
	case st.Kind == rewrite.KindBegin:
		return strings.Contains(strings.ToUpper(sql), "CONSISTENT")
	case st.Kind == rewrite.KindCall:
		return true // its body may read
	case st.Class == rewrite.ClassWrite || st.Class == rewrite.ClassDDL:
		return false
	case st.Class == rewrite.ClassUnparseable:
		return true
	}
	return len(st.Reads)+len(st.Writes)+len(st.Names) > 0
}

// SetsAccess reports statements that set the session's access mode (SET
// SESSION TRANSACTION READ ONLY, SET tx_read_only = …), after which the
// session reads it back.
func SetsAccess(st rewrite.Statement) bool {
	for _, v := range st.Vars {
		if v.System && v.Set && (v.Name == "tx_read_only" || v.Name == "transaction_read_only") {
			return true
		}
	}
	return false
}
