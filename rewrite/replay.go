package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
)

// A statement the proxy sends a second time — when it replays a
// transaction past a fork (session/txn) — must do exactly what
// it did the first time. Its text is the same; what else it depends on is
// recorded here: the variables it reads and sets, and (in Funcs) the
// functions it calls. Volatile says, from that, whether a second run could
// differ.

// TxChars are characteristics of a transaction (collect.TxChars).
type TxChars = collect.TxChars

// Var is a variable a statement reads or sets (collect.Var).
type Var = collect.Var

// Volatile says why running the statement a second time, with the same
// text on the same connection and with the same rows, could have another
// effect than its first run ("" when it would have the same): it reads or
// sets a user variable (what it read may have changed since, and what it
// set would be set again), calls a function of Funcs whose value depends on
// the clock, chance, the statement before it, user-level locks or a
// sequence (collect.VolatileFunc), reads a server variable that changes by itself
// (@@last_insert_id, @@timestamp, …), or runs a procedure (CALL), whose
// statements the proxy does not check.
func (st *Statement) Volatile() string {
	for _, v := range st.Vars {
		switch {
		case !v.System:
			return "it reads or sets the user variable @" + v.Name + ", which would not hold the same value, or would be set again"
		case v.Global:
			return "it reads or sets the global variable @@" + v.Name + ", which other connections may change"
		case collect.VolatileVar(v.Name):
			return "it reads @@" + v.Name + ", which changes from statement to statement"
		}
	}
	for _, f := range st.Funcs {
		if why, ok := collect.VolatileFunc(strings.ToLower(f.Name)); ok && f.Schema == "" {
			return "it calls " + strings.ToUpper(f.Name) + "(), whose value depends on " + why
		}
	}
	if st.Kind == KindCall {
		return "it runs a procedure, whose statements the proxy does not check for a second run"
	}
	return ""
}

// Previous says what the statement reads that the statement run before it
// on the connection leaves ("" when nothing): ROW_COUNT(), FOUND_ROWS(),
// @@warning_count, @@error_count. Anything the proxy runs first on the
// connection — a restart or replay of the transaction — changes it.
func (st *Statement) Previous() string {
	for _, f := range st.Funcs {
		switch n := strings.ToLower(f.Name); {
		case f.Schema == "" && (n == "row_count" || n == "found_rows"):
			return strings.ToUpper(n) + "()"
		}
	}
	for _, v := range st.Vars {
		if v.System && !v.Global && (v.Name == "warning_count" || v.Name == "error_count") {
			return "@@" + v.Name
		}
	}
	return ""
}

// SetsLastInsertID reports whether the statement may call LAST_INSERT_ID
// with an argument, which sets what LAST_INSERT_ID() returns next (for a
// statement the parser cannot read: whether it names LAST_INSERT_ID).
func (st *Statement) SetsLastInsertID() bool {
	for _, f := range st.Funcs {
		if f.Schema == "" && strings.EqualFold(f.Name, "last_insert_id") && (f.Args != 0 || st.Class == ClassUnparseable) {
			return true
		}
	}
	return false
}
