// Package recovery masks, in a text the parser rejects, the MariaDB forms
// the proxy still reads for sure, so that the parser reads the rest.
package recovery

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Texts the parser does not read, but that the proxy still reads for sure.
//
// When the parser rejects a text, the engine looks for MariaDB forms
// it can read without it, and masks them in the text the parser and every
// later reading of the input see (a.text: same length, so offsets into the
// client's text hold); the client's text reaches the server as sent:
//
//   - SET STATEMENT var=value[, …] FOR <statement>: the per-statement
//     settings are blanked when every variable is one that changes neither
//     how the text is read nor which rows the statement locks
//     (setStatementVars) and every value is a single literal or word. The
//     statement that follows is analysed as if sent alone.
//   - Spatial column types (GEOMETRY, POINT, LINESTRING, …) and SPATIAL
//     KEY/INDEX, which the parser does not know: a type becomes BLOB and
//     SPATIAL is blanked. Types name no table, so the statement's tables
//     are read the same.
//   - SELECT … INTO a stored program's local variables (the parser knows
//     only @variables there): the INTO clause is blanked; variables name
//     no table.
//   - Operators whose operands MariaDB takes more freely than the parser:
//     LIKE, REGEXP and RLIKE (any operand, chained: 2 LIKE 3 IN (0,1)) and
//     ESCAPE (any operand: ?, a call, a subquery) are read as '=', and
//     x IS [NOT] TRUE | FALSE | UNKNOWN | NULL (chained: x IS TRUE = 1) is
//     read as x: every operand keeps its place, so its names are read.
//   - FROM DUAL before HAVING (blanked: the parser takes HAVING without
//     FROM), HAVING after FROM DUAL's WHERE or GROUP BY (read as AND or
//     ',': one more WHERE term or GROUP BY item) and a table's alias
//     after '=' (FROM t = a, read as FROM t a).
//   - JSON_TABLE(document, path COLUMNS (…)) alias, read as the derived
//     table (SELECT document) alias: the path and columns, which name
//     nothing, are blanked.
//   - A statement the server rejects for sure as a syntax error: its first
//     word is no keyword that can start a statement, nor a label. The
//     server runs the statements before it and stops there with 1064, so
//     it and everything after it are blanked and it becomes a statement of
//     its own (Kind "SYNTAX ERROR") that reaches nothing.
//
// Each applies only after the parser has rejected the text, and the text is
// parsed again once masked: what still does not parse is refused as before.

// setStatementVars are the variables SET STATEMENT … FOR may set in a text
// the proxy reads: none changes which rows a statement locks (isolation) or
// reaches beyond the session. sql_mode is one: the server reads the whole
// statement, under the session's sql_mode, before it sets the variables
// (SET STATEMENT sql_mode='ANSI_QUOTES' FOR SELECT "a" returns the string
// 'a' on MariaDB 10.11); character sets cannot be set there.
// keep_files_on_create only decides whether a MyISAM table's CREATE
// overwrites stray files of that table's own name; old_passwords only the
// hash PASSWORD() computes; log_queries_not_using_indexes only what the
// session's statements add to the slow log, as log_slow_filter. Not here:
// binlog_format (the rows a replica gets; InnoDB's locking of the rows an
// INSERT … SELECT reads depends on it), last_insert_id (what
// LAST_INSERT_ID() returns, which a replay follows), debug_dbug and
// debug_sync (the server's behaviour, other sessions'), skip_replication,
// gtid_domain_id and sql_log_off (what replicas and logs get),
// default_storage_engine but to an engine the proxy confines (engineVars),
// autocommit and the isolation level.
var setStatementVars = map[string]bool{
	"max_statement_time": true, "long_query_time": true, "lock_wait_timeout": true, "innodb_lock_wait_timeout": true,
	"optimizer_switch": true, "optimizer_search_depth": true, "optimizer_prune_level": true,
	"optimizer_use_condition_selectivity": true, "optimizer_max_sel_arg_weight": true, "join_buffer_size": true,
	"join_cache_level": true, "sort_buffer_size": true, "tmp_table_size": true, "tmp_memory_table_size": true,
	"max_heap_table_size": true, "max_join_size": true, "sql_select_limit": true, "max_sort_length": true,
	"max_length_for_sort_data": true, "group_concat_max_len": true, "div_precision_increment": true,
	"big_tables": true, "sql_big_selects": true, "sql_buffer_result": true, "sql_safe_updates": true,
	"max_recursive_iterations": true, "sql_mode": true, "myisam_repair_threads": true, "myisam_sort_buffer_size": true,
	"slow_query_log": true, "log_slow_filter": true, "log_slow_rate_limit": true, "log_slow_verbosity": true,
	"log_slow_query_time": true, "log_slow_min_examined_row_limit": true, "min_examined_row_limit": true,
	"profiling": true, "profiling_history_size": true, "optimizer_trace": true, "standard_compliant_cte": true,
	"optimizer_adjust_secondary_key_costs": true, "in_predicate_conversion_threshold": true, "histogram_size": true,
	"histogram_type": true, "use_stat_tables": true, "query_cache_type": true, "time_zone": true, "timestamp": true,
	"lc_time_names": true, "default_week_format": true, "sql_notes": true, "sql_warnings": true,
	"max_error_count": true, "unique_checks": true, "auto_increment_increment": true, "auto_increment_offset": true,
	"expensive_subquery_limit": true, "eq_range_index_dive_limit": true, "range_alloc_block_size": true,
	"read_buffer_size": true, "read_rnd_buffer_size": true, "net_write_timeout": true, "net_read_timeout": true,
	"wait_timeout": true, "interactive_timeout": true, "keep_files_on_create": true, "old_passwords": true,
	"log_queries_not_using_indexes": true,
}

// setStatementRefused are the variables the server refuses in SET
// STATEMENT while it reads the statement (1971, the variable cannot be set
// in SET STATEMENT; MariaDB 10.11), before it runs anything: a prefix
// setting one is read (the statement after it analysed as if sent alone)
// and the server answers it with that error.
// (The character sets and collations it refuses as well stay unread: the
// proxy reads no text under a prefix that names them.)
var setStatementRefused = map[string]bool{"autocommit": true, "tx_isolation": true, "skip_replication": true, "sql_log_off": true}

// engineVars are the variables that give the engine of the tables a
// statement creates: SET STATEMENT may set them to an engine the proxy
// can confine (collect.SafeEngine, as a plain SET may), named by a word
// or a string.
var engineVars = map[string]bool{"default_storage_engine": true, "storage_engine": true, "default_tmp_storage_engine": true}

// safeEngineValue reports whether t, a value, is a word or a string that
// names an engine the proxy can confine.
func safeEngineValue(text string, t lexer.Token) bool {
	switch t.Kind {
	case lexer.Ident:
		return collect.SafeEngine(text[t.Start:t.End])
	case lexer.String:
		return collect.SafeEngine(lexer.Unquote(text[t.Start:t.End], true))
	}
	return false
}

// statementStarters are the words a MariaDB (or MySQL) statement can start
// with, compound statements and labels' keywords included: a statement
// starting with any other word that is no keyword of the parser either is
// a syntax error for sure.
var statementStarters = map[string]bool{
	"ALTER": true, "ANALYZE": true, "BACKUP": true, "BEGIN": true, "BINLOG": true, "CACHE": true, "CALL": true,
	"CASE": true, "CHANGE": true, "CHECK": true, "CHECKSUM": true, "CLONE": true, "CLOSE": true, "COMMIT": true,
	"CREATE": true, "DEALLOCATE": true, "DECLARE": true, "DELETE": true, "DESC": true, "DESCRIBE": true, "DO": true,
	"DROP": true, "END": true, "EXECUTE": true, "EXPLAIN": true, "FETCH": true, "FLUSH": true, "FOR": true,
	"GET": true, "GOTO": true, "GRANT": true, "HANDLER": true, "HELP": true, "IF": true, "IMPORT": true,
	"INSERT": true, "INSTALL": true, "ITERATE": true, "KILL": true, "LEAVE": true, "LOAD": true, "LOCK": true,
	"LOOP": true, "OPEN": true, "OPTIMIZE": true, "PREPARE": true, "PURGE": true, "RAISE": true, "RELEASE": true,
	"RENAME": true, "REPAIR": true, "REPEAT": true, "REPLACE": true, "RESET": true, "RESIGNAL": true,
	"RESTART": true, "RETURN": true, "REVOKE": true, "ROLLBACK": true, "SAVEPOINT": true, "SELECT": true,
	"SET": true, "SHOW": true, "SHUTDOWN": true, "SIGNAL": true, "START": true, "STOP": true, "TABLE": true,
	"TRUNCATE": true, "UNINSTALL": true, "UNLOCK": true, "UPDATE": true, "USE": true, "VALUES": true,
	"WHILE": true, "WITH": true, "XA": true, "SANDBOX": true,
}

// spatialTypes are MariaDB's spatial column types.
var spatialTypes = map[string]bool{
	"GEOMETRY": true, "POINT": true, "LINESTRING": true, "POLYGON": true, "MULTIPOINT": true,
	"MULTILINESTRING": true, "MULTIPOLYGON": true, "GEOMETRYCOLLECTION": true, "GEOMCOLLECTION": true,
}

// Masked is a text rewritten for the parser by Mask.
type Masked struct {
	Text string
	// setStatements are the SET STATEMENT prefixes blanked: where each
	// ends, and the variables it sets (lower case).
	SetStatements []SetStatement
	// junk is the offset of a statement the server rejects as a syntax
	// error, blanked with everything after it; -1 when there is none.
	Junk int
	// intoVars are the user variables a blanked SELECT … INTO sets, with
	// where each is: the statement holding it sets them.
	IntoVars []IntoVar
	// Placeholders are the names words of serverNames were read as
	// (names.go): none may name a table, a database, a qualifier or a
	// common table expression.
	Placeholders []Placeholder
	// Temporary are the offsets of the TEMPORARY blanked in DROP TEMPORARY
	// SEQUENCE (temporary.go): the statement holding one is temporary DDL,
	// which leaves the open transaction open.
	Temporary []int
	// Replaces are the offsets of the REPLACE statements read as INSERT
	// (returning.go): the engine gives each its REPLACE back.
	Replaces []int
}

// IntoVar is a user variable a blanked INTO list sets, at offset at.
type IntoVar struct {
	At int
	// name is the variable as written (@x, @@session.x).
	Name string
}

// SetStatement is a blanked SET STATEMENT prefix: where it ends, and the
// variables it sets (lower case).
type SetStatement struct {
	End  int
	Vars []string
}

// Words are what Mask knows of the parser and the server: the
// parser's reserved words and all its keywords (lower case), whether
// the server has a character set (lower case), and whether the parser
// knows a collation.
type Words struct {
	Reserved, Keywords map[string]bool
	Charset            func(name string) bool
	// Collation reports whether the parser knows a collation (lower
	// case); nil: no collation is read as another (collate.go).
	Collation func(name string) bool
}

// Mask masks, in text (normalized, tokens toks), the forms above:
// statementStart those that start a statement, maskAt the others, one
// masker each (recovery.go). ok is false when it finds none.
func Mask(text string, toks []lexer.Token, w Words) (Masked, bool) {
	r := &recovery{w: w, text: text, toks: toks, starts: map[int]bool{}, start: true}
	r.m.Junk = -1
	for i := 0; i < len(toks); i++ {
		if toks[i].Kind == lexer.Comment {
			continue
		}
		if r.start {
			next, done, stop := r.statementStart(i)
			if stop {
				break
			}
			if done {
				i = next
				continue
			}
		}
		i = r.maskAt(i)
	}
	if r.b == nil {
		return r.m, false
	}
	r.m.Text = string(r.b)
	return r.m, true
}

// predicateOperator reports whether toks[i] (LIKE, REGEXP, RLIKE or
// ESCAPE, possibly after NOT) is the operator of an expression in the
// statement starting at toks[first]: between an operand's end (a name, a
// literal, a variable or '?', a ')') and the start of another, not in a
// SHOW statement (SHOW … LIKE 'pattern'), and not CREATE TABLE's LIKE of the
// table to copy (at the top level of a CREATE or ALTER TABLE, or right
// after '(').
func predicateOperator(text string, toks []lexer.Token, first, i int, tableDDL bool, reserved map[string]bool) bool {
	if lexer.Word(text, toks, first) == "SHOW" || i == first {
		return false
	}
	prev := i - 1
	if w := lexer.Word(text, toks, prev); w == "NOT" && lexer.Word(text, toks, i) != "ESCAPE" {
		prev--
	}
	if prev < first || !operandEnd(text, toks, prev, reserved) || !operandStart(text, toks, i+1, reserved) {
		return false
	}
	if tableDDL {
		depth := 0
		for j := first; j < i; j++ {
			switch {
			case lexer.PunctAt(text, toks, j, '('):
				depth++
			case lexer.PunctAt(text, toks, j, ')'):
				depth--
			}
		}
		if depth <= 0 {
			return false
		}
	}
	return true
}

// operandEnd reports whether toks[j] can end an operand of an expression:
// a name or a word no statement's grammar reserves (NULL, TRUE, … are), a
// literal, a variable or '?', a ')'.
func operandEnd(text string, toks []lexer.Token, j int, reserved map[string]bool) bool {
	if j < 0 || j >= len(toks) {
		return false
	}
	switch t := toks[j]; t.Kind {
	case lexer.Quoted, lexer.String, lexer.Number, lexer.Variable:
		return true
	case lexer.Punct:
		return text[t.Start] == ')'
	case lexer.Ident:
		w := strings.ToUpper(text[t.Start:t.End])
		return operandWords[w] || !reserved[strings.ToLower(w)]
	}
	return false
}

// operandStart reports whether toks[j] can start an operand: a name, a
// literal, a variable or '?', '(' or a unary operator, or a reserved word
// that starts an expression (NULL, a CASE, a call of a keyword function).
func operandStart(text string, toks []lexer.Token, j int, reserved map[string]bool) bool {
	if j >= len(toks) {
		return false
	}
	switch t := toks[j]; t.Kind {
	case lexer.Quoted, lexer.String, lexer.Number, lexer.Variable:
		return true
	case lexer.Punct:
		return strings.IndexByte("(-+~!", text[t.Start]) >= 0
	case lexer.Ident:
		w := strings.ToUpper(text[t.Start:t.End])
		return !reserved[strings.ToLower(w)] || operandWords[w] || lexer.PunctAt(text, toks, j+1, '(') ||
			w == "CASE" || w == "BINARY" || w == "INTERVAL" || w == "EXISTS" || w == "NOT"
	}
	return false
}

// tableAliasEquals reports whether the '=' at toks[i] gives a table its
// alias: it follows FROM, JOIN, STRAIGHT_JOIN or UPDATE and a table's name
// (db.t or t), outside a call's parentheses, and precedes a name that is no
// reserved word, a function or a qualifier.
func tableAliasEquals(text string, toks []lexer.Token, i int, reserved map[string]bool) bool {
	name := func(j int) bool {
		return j >= 0 && j < len(toks) && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted)
	}
	k := i - 2
	if !name(i - 1) {
		return false
	}
	if lexer.PunctAt(text, toks, i-2, '.') {
		if !name(i - 3) {
			return false
		}
		k = i - 4
	}
	switch lexer.Word(text, toks, k) {
	case "FROM", "JOIN", "STRAIGHT_JOIN", "UPDATE":
	default:
		return false
	}
	if !name(i+1) || lexer.PunctAt(text, toks, i+2, '(') || lexer.PunctAt(text, toks, i+2, '.') {
		return false
	}
	// FROM in a call (TRIM(… FROM a = b), EXTRACT(DAY FROM a = b)) is
	// no table's: the parentheses around FROM, if any, hold a query.
	depth := 0
	for j := k - 1; j >= 0 && !lexer.PunctAt(text, toks, j, ';'); j-- {
		switch {
		case lexer.PunctAt(text, toks, j, ')'):
			depth++
		case lexer.PunctAt(text, toks, j, '('):
			if depth--; depth < 0 {
				if w := lexer.Word(text, toks, j+1); w != "SELECT" && w != "WITH" && !lexer.PunctAt(text, toks, j+1, '(') {
					return false
				}
				j = 0 // the enclosing parenthesis decides
			}
		}
	}
	return toks[i+1].Kind == lexer.Quoted || !reserved[strings.ToLower(text[toks[i+1].Start:toks[i+1].End])]
}

// jsonTableColumns reads JSON_TABLE's arguments from their '(' at
// toks[open]: comma is the index of the ',' after the document (0 when the
// arguments are not read), end the index of the closing ')'. What follows
// the document — the path and COLUMNS (…) — must hold only words,
// literals, quoted names and the parentheses, commas and signs of types:
// no expression that could name a table.
func jsonTableColumns(text string, toks []lexer.Token, open int) (comma, end int) {
	end = lexer.Closing(text, toks, open)
	if end == 0 {
		return 0, 0
	}
	comma = atTop(text, toks, open+1, end, func(j int) bool { return lexer.PunctAt(text, toks, j, ',') })
	if comma == 0 || comma == open+1 || lexer.Word(text, toks, comma+1) == "" && (comma+1 >= end || toks[comma+1].Kind != lexer.String) {
		return 0, 0
	}
	for j := comma + 1; j < end; j++ {
		switch t := toks[j]; t.Kind {
		case lexer.String, lexer.Number, lexer.Quoted, lexer.Comment:
		case lexer.Ident:
			switch lexer.Word(text, toks, j) {
			case "SELECT", "WITH", "VALUES", "TABLE":
				return 0, 0
			}
		case lexer.Punct:
			if c := text[t.Start]; c != '(' && c != ')' && c != ',' && c != '-' && c != '+' && c != '.' {
				return 0, 0
			}
		default:
			return 0, 0
		}
	}
	return comma, end
}

// atTop is the index of the first token of toks[from:to] outside the
// parentheses opened there for which is holds; 0 when none does.
func atTop(text string, toks []lexer.Token, from, to int, is func(j int) bool) int {
	depth := 0
	for j := from; j < to; j++ {
		switch {
		case lexer.PunctAt(text, toks, j, '('):
			depth++
		case lexer.PunctAt(text, toks, j, ')'):
			depth--
		case depth == 0 && is(j):
			return j
		}
	}
	return 0
}

// bracketedLockingRead reports, for a statement starting at toks[i] with
// '(' around one SELECT (no UNION, EXCEPT or INTERSECT at its top level)
// followed by FOR UPDATE, FOR SHARE or LOCK IN SHARE MODE and the
// statement's end, the index of the closing ')'; 0 for any other.
func bracketedLockingRead(text string, toks []lexer.Token, i int) int {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	if !lexer.PunctAt(text, toks, i, '(') || word(i+1) != "SELECT" {
		return 0
	}
	end := lexer.Closing(text, toks, i)
	if end == 0 {
		return 0
	}
	if atTop(text, toks, i+1, end, func(j int) bool {
		return word(j) == "UNION" || word(j) == "EXCEPT" || word(j) == "INTERSECT" ||
			word(j) == "FOR" && (word(j+1) == "UPDATE" || word(j+1) == "SHARE") || word(j) == "LOCK" && word(j+1) == "IN"
	}) != 0 {
		return 0
	}
	k := end + 1
	switch {
	case word(k) == "FOR" && (word(k+1) == "UPDATE" || word(k+1) == "SHARE"):
		k += 2
	case word(k) == "LOCK" && word(k+1) == "IN" && word(k+2) == "SHARE" && word(k+3) == "MODE":
		k += 4
	default:
		return 0
	}
	switch {
	case word(k) == "NOWAIT":
		k++
	case word(k) == "SKIP" && word(k+1) == "LOCKED", word(k) == "WAIT" && k+1 < len(toks) && toks[k+1].Kind == lexer.Number:
		k += 2
	}
	if !statementEnd(text, toks, k) {
		return 0
	}
	return end
}

// dualHaving finds, in the clauses of a SELECT … FROM DUAL from toks[i]
// (after DUAL) to the end of that SELECT, a HAVING after WHERE or GROUP
// BY: h is its index (0 for none), sep what it is read as — "," after
// GROUP BY, "AND" after WHERE alone.
func dualHaving(text string, toks []lexer.Token, i int) (h int, sep string) {
	depth := 0
	where, group := false, false
	for ; i < len(toks); i++ {
		switch {
		case lexer.PunctAt(text, toks, i, '('):
			depth++
		case lexer.PunctAt(text, toks, i, ')'):
			if depth == 0 {
				return 0, ""
			}
			depth--
		case lexer.PunctAt(text, toks, i, ';'):
			return 0, ""
		case depth > 0:
		default:
			switch lexer.Word(text, toks, i) {
			case "UNION", "EXCEPT", "INTERSECT":
				return 0, ""
			case "WHERE":
				where = true
			case "GROUP":
				group = true
			case "HAVING":
				switch {
				case group:
					return i, ","
				case where:
					return i, "AND"
				}
				return 0, ""
			}
		}
	}
	return 0, ""
}

// truthTests are the words IS [NOT] tests an operand against.
var truthTests = map[string]bool{"TRUE": true, "FALSE": true, "UNKNOWN": true, "NULL": true}

// operandWords are reserved words that are operands: literals and
// functions called without parentheses.
var operandWords = map[string]bool{"NULL": true, "TRUE": true, "FALSE": true, "END": true, "CURRENT_DATE": true,
	"CURRENT_TIME": true, "CURRENT_TIMESTAMP": true, "CURRENT_USER": true, "LOCALTIME": true, "LOCALTIMESTAMP": true,
	"UTC_DATE": true, "UTC_TIME": true, "UTC_TIMESTAMP": true, "DEFAULT": true}

// JunkAt reports whether the statement starting at toks[i] is a syntax
// error for sure: it starts with a word that is neither a keyword (of
// MariaDB's statements or of the parser) nor a label (followed by ':'), or
// with a number or a string.
func JunkAt(text string, toks []lexer.Token, i int, keywords map[string]bool) bool {
	t := toks[i]
	next := i + 1
	for next < len(toks) && toks[next].Kind == lexer.Comment {
		next++
	}
	label := next < len(toks) && toks[next].Kind == lexer.Punct && text[toks[next].Start] == ':'
	switch t.Kind {
	case lexer.Number, lexer.String:
		return true
	case lexer.Quoted:
		return !label
	case lexer.Ident:
		w := text[t.Start:t.End]
		return !label && !statementStarters[strings.ToUpper(w)] && !keywords[strings.ToLower(w)]
	}
	return false
}

// SetStatementPrefix reads the settings of SET STATEMENT from toks[i] to its
// FOR: var = value pairs separated by commas, each var in setStatementVars
// (or setStatementRefused), each value one literal or word (a sign allowed
// before a number). end is
// the index of FOR.
func SetStatementPrefix(text string, toks []lexer.Token, i int) (end int, vars []string, ok bool) {
	punct := func(j int, c byte) bool {
		return j < len(toks) && toks[j].Kind == lexer.Punct && text[toks[j].Start] == c
	}
	for {
		if i >= len(toks) || toks[i].Kind != lexer.Ident {
			return 0, nil, false
		}
		v := strings.ToLower(text[toks[i].Start:toks[i].End])
		engine := engineVars[v] && i+2 < len(toks) && safeEngineValue(text, toks[i+2])
		if !setStatementVars[v] && !setStatementRefused[v] && !engine || !punct(i+1, '=') {
			return 0, nil, false
		}
		vars = append(vars, v)
		i += 2
		if punct(i, '-') || punct(i, '+') {
			i++
			if i >= len(toks) || toks[i].Kind != lexer.Number {
				return 0, nil, false
			}
		}
		if i >= len(toks) {
			return 0, nil, false
		}
		switch toks[i].Kind {
		case lexer.Number, lexer.String, lexer.Ident:
		default:
			return 0, nil, false
		}
		i++
		switch {
		case punct(i, ','):
			i++
		case i < len(toks) && toks[i].Kind == lexer.Ident && strings.EqualFold(text[toks[i].Start:toks[i].End], "FOR"):
			return i, vars, true
		default:
			return 0, nil, false
		}
	}
}

// ModeForLaterText reports whether a SET STATEMENT prefix setting vars
// applies to a statement, at toks[next], that carries a text the server
// reads only when it runs it, under the prefix's settings: PREPARE … FROM
// 'text' and EXECUTE IMMEDIATE 'text'. The server reads the statement
// itself under the session's sql_mode, but that text under the one SET
// STATEMENT gives (with sql_mode='NO_BACKSLASH_ESCAPES', a '\' in the text
// ends a string and what follows it is code), so neither is read with a
// prefix that sets sql_mode.
func ModeForLaterText(text string, toks []lexer.Token, next int, vars []string) bool {
	// EXECUTE s runs what its PREPARE read, under the mode of then.
	if w := lexer.Word(text, toks, next); w != "PREPARE" && !(w == "EXECUTE" && lexer.Word(text, toks, next+1) == "IMMEDIATE") {
		return false
	}
	for _, v := range vars {
		if v == "sql_mode" {
			return true
		}
	}
	return false
}

// Analyzes reports whether sql starts with MariaDB's ANALYZE [FORMAT=JSON]
// of a statement (ANALYZE SELECT …, ANALYZE FORMAT=JSON UPDATE …), which
// runs the statement and answers its plan, as EXPLAIN does, with what
// running it measured. The engine reads the statement without the prefix,
// as of the statement's own kind.
func Analyzes(sql string) bool {
	toks := lexer.Lex(sql, lexer.Options{})
	n := 0
	for _, t := range toks {
		if t.Kind != lexer.Comment {
			toks[n] = t
			n++
		}
	}
	toks = toks[:n]
	if w := lexer.Word(sql, toks, 1); lexer.Word(sql, toks, 0) != "ANALYZE" || w == "TABLE" || w == "TABLES" {
		return false // ANALYZE TABLE is table maintenance
	}
	_, _, ok := explainPrefix(sql, toks, 0)
	return ok
}

// explainPrefix reads, at toks[i], EXPLAIN or DESCRIBE followed by EXTENDED
// or PARTITIONS, or ANALYZE [FORMAT=JSON], followed by a statement the
// parser reads (SELECT, INSERT, …): toks[from:end] are to be blanked (the
// modifier of EXPLAIN; all of ANALYZE's prefix) and toks[end] starts the
// statement.
func explainPrefix(text string, toks []lexer.Token, i int) (from, end int, ok bool) {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	from, end = i, i+1
	switch word(i) {
	case "EXPLAIN", "DESCRIBE", "DESC":
		if word(end) != "EXTENDED" && word(end) != "PARTITIONS" {
			return 0, 0, false
		}
		from, end = i+1, i+2
	case "ANALYZE":
		if word(end) == "FORMAT" && lexer.PunctAt(text, toks, end+1, '=') && word(end+2) == "JSON" {
			end += 3
		}
	default:
		return 0, 0, false
	}
	switch word(end) {
	case "SELECT", "INSERT", "UPDATE", "DELETE", "REPLACE", "WITH", "VALUES", "TABLE":
		return from, end, true
	}
	return from, end, lexer.PunctAt(text, toks, end, '(')
}

// parserIntroducers are the character sets the parser takes as an
// introducer (_utf8mb4'…').
var parserIntroducers = map[string]bool{"utf8": true, "utf8mb3": true, "utf8mb4": true, "ascii": true, "latin1": true, "binary": true}

// introducerLen is the length of the introducer starting toks[i] when it
// names one of the server's character sets the parser does not take and
// it introduces a literal: a string (lexed with it as one token) or the
// number or string after it; 0 otherwise.
func introducerLen(text string, toks []lexer.Token, i int, charset func(string) bool) int {
	t := toks[i]
	w := text[t.Start:t.End]
	if t.Kind == lexer.String {
		q := strings.IndexByte(w, '\'')
		if q < 0 {
			return 0
		}
		w = w[:q]
	} else if i+1 >= len(toks) || toks[i+1].Kind != lexer.String && toks[i+1].Kind != lexer.Number {
		return 0
	}
	cs := strings.ToLower(w[1:])
	if !charset(cs) || parserIntroducers[cs] {
		return 0
	}
	return len(w)
}

// dynamicColumnFuncs are MariaDB's dynamic column functions, whose
// arguments may carry an AS type.
var dynamicColumnFuncs = map[string]bool{"COLUMN_GET": true, "COLUMN_CREATE": true, "COLUMN_ADD": true}

// dynamicColumnTypes returns the ranges of text holding "AS type" among the
// arguments of the call whose '(' is toks[open]: from AS up to the next
// comma or the closing parenthesis at the call's own depth. A range holding
// anything but words, numbers, strings, parentheses and commas (which a
// type never does: no subquery, no variable) is not returned, nor is any
// when the call does not close.
func dynamicColumnTypes(text string, toks []lexer.Token, open int) [][2]int {
	var out [][2]int
	depth, from := 0, -1
	for j := open; j < len(toks); j++ {
		t := toks[j]
		if t.Kind == lexer.Punct {
			switch text[t.Start] {
			case '(':
				depth++
				continue
			case ')', ',':
				if depth == 1 && from >= 0 {
					out = append(out, [2]int{from, int(toks[j-1].End)})
					from = -1
				}
				if text[t.Start] == ')' {
					depth--
					if depth == 0 {
						return out
					}
				}
				continue
			}
		}
		if depth == 1 && from < 0 && t.Kind == lexer.Ident && strings.EqualFold(text[t.Start:t.End], "AS") {
			from = int(t.Start)
			continue
		}
		if from >= 0 {
			switch {
			case t.Kind == lexer.Ident && strings.EqualFold(text[t.Start:t.End], "SELECT"):
				from = -1
				return nil
			case t.Kind == lexer.Ident, t.Kind == lexer.Number, t.Kind == lexer.String:
			default:
				return nil
			}
		}
	}
	return nil
}

// orReplaceable are the objects CREATE OR REPLACE is read for by blanking
// OR REPLACE.
var orReplaceable = map[string]bool{"TABLE": true, "TEMPORARY": true, "INDEX": true, "UNIQUE": true, "FULLTEXT": true,
	"SEQUENCE": true, "USER": true, "ROLE": true}

// columnAttributes are MariaDB's attributes of a column or an index the
// parser does not know.
var columnAttributes = map[string]bool{"COMPRESSED": true, "INVISIBLE": true, "IGNORED": true}

// statementEnd reports whether toks[i] is past the statement: the end of
// the input or a ';'.
func statementEnd(text string, toks []lexer.Token, i int) bool {
	return i >= len(toks) || lexer.PunctAt(text, toks, i, ';')
}

// limitExtension is the number of tokens from toks[i] of a MariaDB row
// limit the parser does not know — ROWS EXAMINED n (after LIMIT …), and
// OFFSET n ROW[S] / FETCH { FIRST | NEXT } [n] ROW[S] { ONLY | WITH TIES }
// (n a number or a variable) — and of a LIMIT left empty by them; 0 when
// toks[i] starts none.
func limitExtension(text string, toks []lexer.Token, i int) int {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	// A count: a number, a variable, or a stored program's local variable
	// (a bare name, which names no table there).
	count := func(j int) bool {
		return j < len(toks) && (toks[j].Kind == lexer.Number || toks[j].Kind == lexer.Variable ||
			toks[j].Kind == lexer.Ident && !lexer.PunctAt(text, toks, j+1, '.') && !lexer.PunctAt(text, toks, j+1, '(') && !lexer.PunctAt(text, toks, j-1, '.'))
	}
	switch word(i) {
	case "LIMIT":
		if word(i+1) == "ROWS" && word(i+2) == "EXAMINED" && count(i+3) {
			return 4
		}
	case "ROWS":
		if word(i+1) == "EXAMINED" && count(i+2) && i > 0 && count(i-1) {
			return 3
		}
	case "OFFSET":
		if count(i+1) && (word(i+2) == "ROW" || word(i+2) == "ROWS") && i > 0 && word(i-1) != "LIMIT" &&
			!(toks[i-1].Kind == lexer.Number || toks[i-1].Kind == lexer.Variable) {
			return 3
		}
	case "FETCH":
		if word(i+1) != "FIRST" && word(i+1) != "NEXT" {
			return 0
		}
		j := i + 2
		// FETCH FIRST ROW ONLY: ROW is the word, not a count.
		if count(j) && !((word(j) == "ROW" || word(j) == "ROWS") && (word(j+1) == "ONLY" || word(j+1) == "WITH")) {
			j++
		}
		if word(j) != "ROW" && word(j) != "ROWS" {
			return 0
		}
		switch {
		case word(j+1) == "ONLY":
			return j + 2 - i
		case word(j+1) == "WITH" && word(j+2) == "TIES":
			return j + 3 - i
		}
	}
	return 0
}

// limitVariables is the number of tokens from toks[i] of a row limit
// that names a stored program's local variable, which the parser does not
// read — LIMIT c, LIMIT c, c and LIMIT c OFFSET c, c a number, a '?' or a
// bare name or a ROW variable's field, r.f (the server reads a name there
// as a variable of the program, or refuses it: never a column) and one of
// them a name —; 0 when toks[i] starts none.
func limitVariables(text string, toks []lexer.Token, i int) int {
	named := false
	// count is the number of tokens of the count at toks[j], 0 for none.
	count := func(j int) int {
		name := func(j int) bool {
			t := toks[j]
			return t.Kind == lexer.Quoted || t.Kind == lexer.Ident && !limitWords[lexer.Word(text, toks, j)]
		}
		if j >= len(toks) || lexer.PunctAt(text, toks, j+1, '(') {
			return 0
		}
		if lexer.PunctAt(text, toks, j+1, '.') {
			if j+2 < len(toks) && name(j) && name(j+2) && !lexer.PunctAt(text, toks, j+3, '.') && !lexer.PunctAt(text, toks, j+3, '(') {
				named = true
				return 3
			}
			return 0
		}
		switch {
		case toks[j].Kind == lexer.Number, lexer.PunctAt(text, toks, j, '?'):
			return 1
		case name(j):
			named = true
			return 1
		}
		return 0
	}
	w := 0
	if lexer.Word(text, toks, i) != "LIMIT" {
		return 0
	}
	if w = count(i + 1); w == 0 {
		return 0
	}
	n := 1 + w
	if lexer.PunctAt(text, toks, i+n, ',') || lexer.Word(text, toks, i+n) == "OFFSET" {
		w2 := count(i + n + 1)
		if w2 == 0 {
			return 0
		}
		n += 1 + w2
	}
	if !named {
		return 0
	}
	return n
}

// limitWords are the words that may follow LIMIT and are no variable's
// name.
var limitWords = map[string]bool{"ROWS": true, "OFFSET": true, "ALL": true, "NULL": true, "DEFAULT": true}

// returningEnd is the index after the RETURNING list starting at toks[i]
// when it holds only unqualified names (no reserved word), '*', literals,
// variables, AS aliases, commas and arithmetic operators up to the
// statement's end; i otherwise.
func returningEnd(text string, toks []lexer.Token, i int, reserved map[string]bool) int {
	j := i
	for ; !statementEnd(text, toks, j); j++ {
		t := toks[j]
		switch t.Kind {
		case lexer.Ident, lexer.Quoted:
			if lexer.PunctAt(text, toks, j+1, '(') || lexer.PunctAt(text, toks, j+1, '.') {
				return i
			}
			if w := lexer.Word(text, toks, j); w != "AS" && reserved[strings.ToLower(w)] {
				return i // FROM, SELECT, …
			}
		case lexer.Number, lexer.String, lexer.Variable:
		case lexer.Punct:
			switch text[t.Start] {
			case ',', '*', '+', '-', '/', '%':
			default:
				return i
			}
		default:
			return i
		}
	}
	return j
}

// lockAliasAt reports whether toks[i], in LOCK TABLES, is a table's alias:
// after AS, or right after a table name (a chain's last part) and before
// READ, WRITE or LOW_PRIORITY.
func lockAliasAt(text string, toks []lexer.Token, i int) bool {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	switch word(i + 1) {
	case "READ", "WRITE", "LOW_PRIORITY":
	default:
		return false
	}
	if word(i-1) == "AS" {
		return i >= 2 && (toks[i-2].Kind == lexer.Ident || toks[i-2].Kind == lexer.Quoted)
	}
	if i < 1 || toks[i-1].Kind != lexer.Ident && toks[i-1].Kind != lexer.Quoted {
		return false
	}
	switch word(i - 1) {
	case "TABLE", "TABLES", "READ", "WRITE", "LOCAL", "CONCURRENT", "LOW_PRIORITY":
		return false
	}
	return true
}

// windowCall reports whether the call whose '(' is toks[open] is followed
// by WITHIN GROUP or OVER: a window or ordered-set function's call.
func windowCall(text string, toks []lexer.Token, open int) bool {
	j := lexer.Closing(text, toks, open)
	if j == 0 {
		return false
	}
	w := lexer.Word(text, toks, j+1)
	return w == "OVER" || w == "WITHIN" && lexer.Word(text, toks, j+2) == "GROUP"
}

// intoTargetEnd is the index after the INTO target at toks[j]: a user
// variable, a stored program's variable, or a ROW variable's field (v.f);
// 0 when there is none there.
func intoTargetEnd(text string, toks []lexer.Token, j int) int {
	if intoTarget(text, toks, j) {
		return j + 1
	}
	if j+2 < len(toks) && toks[j].Kind == lexer.Ident && lexer.PunctAt(text, toks, j+1, '.') && intoTarget(text, toks, j+2) &&
		toks[j+2].Kind == lexer.Ident {
		return j + 3
	}
	return 0
}

// intoTarget reports a target of SELECT … INTO at toks[j]: a local
// variable (a bare or quoted name not followed by '.' or '(') or a user
// variable (@x, not @@x).
func intoTarget(text string, toks []lexer.Token, j int) bool {
	if j >= len(toks) {
		return false
	}
	switch t := toks[j]; t.Kind {
	case lexer.Ident, lexer.Quoted:
		next := j + 1
		return !(next < len(toks) && toks[next].Kind == lexer.Punct && (text[toks[next].Start] == '.' || text[toks[next].Start] == '('))
	case lexer.Variable:
		v := text[t.Start:t.End]
		return strings.HasPrefix(v, "@") && !strings.HasPrefix(v, "@@")
	}
	return false
}

// windowCountArg are the window functions whose argument (1-based) the
// parser takes as a number only.
var windowCountArg = map[string]int{"LAG": 2, "LEAD": 2, "NTILE": 1, "NTH_VALUE": 2}

// intervalUnits are MariaDB's INTERVAL units.
var intervalUnits = map[string]bool{"MICROSECOND": true, "SECOND": true, "MINUTE": true, "HOUR": true, "DAY": true, "WEEK": true,
	"MONTH": true, "QUARTER": true, "YEAR": true, "SECOND_MICROSECOND": true, "MINUTE_MICROSECOND": true, "MINUTE_SECOND": true,
	"HOUR_MICROSECOND": true, "HOUR_SECOND": true, "HOUR_MINUTE": true, "DAY_MICROSECOND": true, "DAY_SECOND": true,
	"DAY_MINUTE": true, "DAY_HOUR": true, "YEAR_MONTH": true}

// numberArg finds the argument n (from 0) of the call whose '(' is
// toks[open]: its tokens toks[from:to], ok when it is an expression of
// numbers, columns and operators only (no call, no qualified name, no
// reserved word such as a subquery's SELECT), not a number alone (which
// the parser reads).
func numberArg(text string, toks []lexer.Token, open, n int, reserved map[string]bool) (from, to int, ok bool) {
	depth, arg := 0, 0
	from = open + 1
	for j := open; j < len(toks); j++ {
		switch {
		case lexer.PunctAt(text, toks, j, '('):
			depth++
			continue
		case lexer.PunctAt(text, toks, j, ')'):
			depth--
		case depth == 1 && lexer.PunctAt(text, toks, j, ','):
		default:
			continue
		}
		if depth == 0 || depth == 1 && lexer.PunctAt(text, toks, j, ',') {
			if arg == n {
				return from, j, numbersOnly(text, toks[from:j], reserved)
			}
			arg++
			from = j + 1
		}
		if depth == 0 {
			break
		}
	}
	return 0, 0, false
}

// numbersOnly reports whether toks are numbers, column names (a name
// neither reserved nor next to '.' or '('), parentheses and arithmetic
// operators, and not a single unsigned number.
func numbersOnly(text string, toks []lexer.Token, reserved map[string]bool) bool {
	if len(toks) == 0 || len(toks) == 1 && toks[0].Kind == lexer.Number {
		return false
	}
	for k, t := range toks {
		switch {
		case t.Kind == lexer.Number:
		case t.Kind == lexer.Punct && strings.IndexByte("+-*/()", text[t.Start]) >= 0:
		case (t.Kind == lexer.Ident && !reserved[strings.ToLower(text[t.Start:t.End])] || t.Kind == lexer.Quoted) &&
			!lexer.PunctAt(text, toks, k+1, '(') && !lexer.PunctAt(text, toks, k+1, '.') && !lexer.PunctAt(text, toks, k-1, '.'):
		default:
			return false
		}
	}
	return true
}

// maxParsedNumber is the length past which the parser may not read a
// number literal.
const maxParsedNumber = 60

// groupConcatLimit reports whether the LIMIT at toks[i] ends a
// GROUP_CONCAT's arguments: numbers, commas and OFFSET up to its ')', in
// the parentheses of a call of GROUP_CONCAT.
func groupConcatLimit(text string, toks []lexer.Token, i int) bool {
	j := i + 1
	for j < len(toks) && (toks[j].Kind == lexer.Number || toks[j].Kind == lexer.Variable || lexer.PunctAt(text, toks, j, ',') ||
		lexer.Word(text, toks, j) == "OFFSET") {
		j++
	}
	if j == i+1 || !lexer.PunctAt(text, toks, j, ')') {
		return false
	}
	depth := 0
	for k := i - 1; k > 0; k-- {
		switch {
		case lexer.PunctAt(text, toks, k, ')'):
			depth++
		case lexer.PunctAt(text, toks, k, '('):
			if depth == 0 {
				return lexer.Word(text, toks, k-1) == "GROUP_CONCAT" || lexer.Word(text, toks, k-1) == "JSON_ARRAYAGG"
			}
			depth--
		case lexer.PunctAt(text, toks, k, ';'):
			return false
		}
	}
	return false
}

// castTypes are the types a CAST or CONVERT takes that the parser
// reserves: AS before them names a type, no alias.
var castTypes = map[string]bool{"CHAR": true, "BINARY": true, "DATE": true, "DATETIME": true, "TIME": true, "DECIMAL": true,
	"SIGNED": true, "UNSIGNED": true, "INT": true, "INTEGER": true, "DOUBLE": true, "FLOAT": true, "JSON": true, "NCHAR": true,
	"INTERVAL": true}
