package kind

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// MariaDB's administrative statements the parser does not read, which name
// no table (sql/sql_yacc.yy): their kinds, read from their words when
// Nameless has found only words, literals, variables, '=', ',' and '.'.
const (
	Reset        Kind = "RESET"
	Flush        Kind = "FLUSH"
	Purge        Kind = "PURGE"
	StartSlave   Kind = "START SLAVE"
	StopSlave    Kind = "STOP SLAVE"
	BackupUnlock Kind = "BACKUP UNLOCK"
	BackupLock   Kind = "BACKUP LOCK" // names a table: read by rewrite/mariadb.go
	// CreateOrReplaceDatabase drops the database it replaces, read by
	// rewrite/mariadb.go: DDL that names no table.
	CreateOrReplaceDatabase Kind = "CREATE OR REPLACE DATABASE"
)

// admin names the administrative statement of toks (see above), with its
// class: "" when it is none of them.
//
//   - RESET MASTER [TO n] | QUERY CACHE | SLAVE ['connection'] [ALL]: the
//     binary logs, the query cache, a replica's state.
//   - FLUSH [NO_WRITE_TO_BINLOG | LOCAL] option[, …]: every option is a
//     word (LOGS, SLOW LOGS, RELAY LOGS 'connection', QUERY CACHE,
//     USER_RESOURCES, an information_schema table a plugin resets:
//     THREAD_POOL_STATS, …) but TABLE and TABLES, which take a list of
//     tables — FLUSH TABLES WITH READ LOCK AND DISABLE CHECKPOINT, the
//     global read lock, names none.
//   - PURGE BINARY | MASTER LOGS TO 'file' | BEFORE literal (an expression
//     with a call or a subquery is not read here).
//   - START | STOP SLAVE | ALL SLAVES [words, literals]: replication
//     threads, connections and positions.
//   - BACKUP UNLOCK.
//   - KILL [HARD | SOFT] [CONNECTION | QUERY] [ID] target, or … USER
//     account, where the target is a variable, a literal or a word (no
//     parenthesis: no subquery, no call); the proxy's KILL reader
//     (package kill) evaluates the target, and refuses USER and QUERY ID.
//
// All are class other, which a sandbox refuses: they change the server
// outside any table. And START TRANSACTION with its characteristics in
// orders the parser does not take (READ ONLY, WITH CONSISTENT SNAPSHOT)
// and BEGIN WORK, class transaction: what they start the transaction with
// is read from their words (collect.TransactionStart).
func admin(text string, toks []lexer.Token) (Kind, Class) {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	switch w1 := word(1); word(0) {
	case "RESET":
		if w1 == "MASTER" || w1 == "SLAVE" || w1 == "QUERY" && word(2) == "CACHE" {
			return Reset, ClassOther
		}
	case "FLUSH":
		if flushOptions(text, toks) {
			return Flush, ClassOther
		}
	case "PURGE":
		if (w1 == "BINARY" || w1 == "MASTER") && word(2) == "LOGS" && (word(3) == "TO" || word(3) == "BEFORE") && len(toks) == 5 &&
			toks[4].Kind == lexer.String {
			return Purge, ClassOther
		}
	case "START", "STOP":
		if w1 == "SLAVE" || w1 == "ALL" && word(2) == "SLAVES" {
			return Kind(word(0) + " SLAVE"), ClassOther
		}
		if word(0) == "START" && w1 == "TRANSACTION" {
			return Begin, ClassTransaction
		}
	case "BACKUP":
		if w1 == "UNLOCK" && len(toks) == 2 {
			return BackupUnlock, ClassOther
		}
	case "KILL":
		if len(toks) > 1 {
			return Kill, ClassOther
		}
	case "BEGIN":
		if w1 == "WORK" && len(toks) == 2 {
			return Begin, ClassTransaction
		}
	}
	return "", 0
}

// flushOptions reports whether toks are FLUSH of options that name no
// table (see admin).
func flushOptions(text string, toks []lexer.Token) bool {
	rest := make([]string, 0, len(toks))
	for i := 1; i < len(toks); i++ {
		if toks[i].Kind == lexer.Punct && text[toks[i].Start] != ',' || toks[i].Kind == lexer.Variable {
			return false
		}
		rest = append(rest, strings.ToUpper(text[toks[i].Start:toks[i].End]))
	}
	if len(rest) > 0 && (rest[0] == "NO_WRITE_TO_BINLOG" || rest[0] == "LOCAL") {
		rest = rest[1:]
	}
	if strings.Join(rest, " ") == "TABLES WITH READ LOCK AND DISABLE CHECKPOINT" {
		return true
	}
	for _, w := range rest {
		if w == "TABLE" || w == "TABLES" {
			return false
		}
	}
	return len(rest) > 0
}
