package rewrite

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// A statement the proxy sends a second time — when it replays a
// transaction past a fork (session/transaction.go) — must do exactly what
// it did the first time. Its text is the same; what else it depends on is
// recorded here: the variables it reads and sets, and (in Funcs) the
// functions it calls. Volatile says, from that, whether a second run could
// differ.

// Var is a variable a statement reads or sets (collect.Var).
type Var = collect.Var

// TxChars are characteristics of a transaction: what BEGIN / START
// TRANSACTION starts one with, or what SET TRANSACTION gives the next one.
type TxChars struct {
	// Isolation is the isolation level ("READ COMMITTED", …, "" when not
	// said).
	Isolation string
	// Access is "READ ONLY" or "READ WRITE" ("" when not said).
	Access string
	// Snapshot: START TRANSACTION WITH CONSISTENT SNAPSHOT.
	Snapshot bool
}

// nextTransaction is what SET TRANSACTION … gives the next transaction
// (nil for other statements).
func nextTransaction(s ast.StmtNode) *TxChars {
	x, ok := s.(*ast.SetStmt)
	if !ok || !collect.OneShot(x) {
		return nil
	}
	ch := &TxChars{}
	for _, v := range x.Variables {
		switch v.Name {
		case "tx_isolation_one_shot":
			ch.Isolation = strings.ReplaceAll(strings.ToUpper(collect.ExprText(v.Value)), "-", " ")
		case "tx_read_only":
			ch.Access = "READ WRITE"
			if collect.ExprText(v.Value) == "1" {
				ch.Access = "READ ONLY"
			}
		}
	}
	return ch
}

// transactionStart reads what a BEGIN / START TRANSACTION text starts its
// transaction with (the parser tells neither READ WRITE nor WITH
// CONSISTENT SNAPSHOT, and does not read every form MariaDB does, such as
// START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT).
func transactionStart(text string, lo lexer.Options) *TxChars {
	ch := &TxChars{}
	var prev string
	for _, t := range lexer.Lex(text, lo) {
		w := ""
		if t.Kind == lexer.Ident {
			w = strings.ToUpper(text[t.Start:t.End])
		}
		switch {
		case prev == "READ" && w == "ONLY":
			ch.Access = "READ ONLY"
		case prev == "READ" && w == "WRITE":
			ch.Access = "READ WRITE"
		case prev == "CONSISTENT" && w == "SNAPSHOT":
			ch.Snapshot = true
		}
		if t.Kind == lexer.Punct && text[t.Start] == ';' {
			break
		}
		prev = w
	}
	return ch
}

// textVars are the variables a text the parser cannot read names: every
// @x and @@x, each taken as both read and set.
func textVars(text string, toks []lexer.Token) []Var {
	var out []Var
	for _, t := range toks {
		v := text[t.Start:t.End]
		if t.Kind != lexer.Variable || !strings.HasPrefix(v, "@") {
			continue
		}
		out = append(out, varOfToken(v))
	}
	return out
}

// varOfToken reads @x, @'x', @@x or @@session.x as a variable.
func varOfToken(v string) Var {
	if strings.HasPrefix(v, "@@") {
		name, global := strings.ToLower(v[2:]), false
		for _, scope := range []string{"session.", "local.", "global."} {
			if strings.HasPrefix(name, scope) {
				name, global = name[len(scope):], scope == "global."
			}
		}
		return Var{Name: name, System: true, Set: true, Global: global}
	}
	return Var{Name: strings.ToLower(strings.Trim(v[1:], "`'\"")), Set: true}
}

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
		case volatileVars[v.Name]:
			return "it reads @@" + v.Name + ", which changes from statement to statement"
		}
	}
	for _, f := range st.Funcs {
		if why, ok := volatileFuncs[strings.ToLower(f.Name)]; ok && f.Schema == "" {
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
