package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
)

// A statement the proxy sends a second time — when it replays a
// transaction past a fork (session/transaction.go) — must do exactly what
// it did the first time. Its text is the same; what else it depends on is
// recorded here: the variables it reads and sets, and (in Funcs) the
// functions it calls. Volatile says, from that, whether a second run could
// differ.

// TxChars are characteristics of a transaction (collect.TxChars).
type TxChars = collect.TxChars

// Var is a variable a statement reads or sets (collect.Var).
type Var = collect.Var

// volatileFuncs are the server's functions whose value or effect differs
// when a statement runs a second time on the same connection: the clock
// (a replay runs later, and the proxy cannot know the time the first run
// saw, so it cannot pin it with SET timestamp), randomness, the result of
// the statement run before (which in a replay is another one), user-level
// locks (not transactional: a second GET_LOCK takes the lock again) and
// sequences (not transactional: a rollback does not set them back).
// CONNECTION_ID() and the like stay: a replay runs on the same connection.
var volatileFuncs = volatileGroups(map[string][]string{
	"the clock": {"now", "current_timestamp", "localtime", "localtimestamp", "sysdate", "curdate", "current_date",
		"curtime", "current_time", "utc_date", "utc_time", "utc_timestamp", "unix_timestamp"},
	"randomness":                 {"rand", "uuid", "uuid_short", "sys_guid", "uuid_v4", "uuid_v7", "random_bytes"},
	"randomness (a random salt)": {"encrypt"},
	"the statements before it":   {"last_insert_id", "row_count", "found_rows"},
	"user-level locks, which a rollback does not release": {"get_lock", "release_lock", "release_all_locks",
		"is_free_lock", "is_used_lock"},
	"replication": {"master_pos_wait", "master_gtid_wait", "source_pos_wait"},
	"a sequence, which a rollback does not set back": {"nextval", "setval", "lastval"},
})

// volatileGroups maps each function of groups to its reason.
func volatileGroups(groups map[string][]string) map[string]string {
	out := map[string]string{}
	for why, names := range groups {
		for _, n := range names {
			out[n] = why
		}
	}
	return out
}

// volatileVars are server variables that change without a SET of the
// client's: a second run of a statement reading them can read another value.
var volatileVars = map[string]bool{
	"last_insert_id": true, "identity": true, "insert_id": true, "timestamp": true, "warning_count": true,
	"error_count": true, "rand_seed1": true, "rand_seed2": true, "last_gtid": true, "gtid_seq_no": true,
}

// volatileVar reports whether the server variable name (lower case) is
// one of volatileVars.
func volatileVar(name string) bool { return volatileVars[name] }

// volatileFunc is why the value of the function name (lower case) depends
// on more than its arguments, ok false when it does not (volatileFuncs).
func volatileFunc(name string) (why string, ok bool) {
	why, ok = volatileFuncs[name]
	return why, ok
}

// Volatile says why running the statement a second time, with the same
// text on the same connection and with the same rows, could have another
// effect than its first run ("" when it would have the same): it reads or
// sets a user variable (what it read may have changed since, and what it
// set would be set again), calls a function of Funcs whose value depends on
// the clock, chance, the statement before it, user-level locks or a
// sequence (volatileFuncs), reads a server variable that changes by itself
// (@@last_insert_id, @@timestamp, …), or runs a procedure (CALL), whose
// statements the proxy does not check.
func (st *Statement) Volatile() string {
	for _, v := range st.Vars {
		switch {
		case !v.System:
			return "it reads or sets the user variable @" + v.Name + ", which would not hold the same value, or would be set again"
		case v.Global:
			return "it reads or sets the global variable @@" + v.Name + ", which other connections may change"
		case volatileVar(v.Name):
			return "it reads @@" + v.Name + ", which changes from statement to statement"
		}
	}
	for _, f := range st.Funcs {
		if why, ok := volatileFunc(strings.ToLower(f.Name)); ok && f.Schema == "" {
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
