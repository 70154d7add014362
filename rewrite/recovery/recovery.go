package recovery

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"strings"
)

// recovery is Mask's reading of one text: the masked bytes (b,
// made on the first change), what it found, and what it knows of the
// statement it is in.
type recovery struct {
	w    Words
	text string
	toks []lexer.Token
	b    []byte
	m    Masked
	// starts are the token indexes that start a statement; start is true
	// when the next token does.
	starts map[int]bool
	start  bool
	// Of the current statement: its first token, and whether it is a
	// SELECT, a CREATE or ALTER TABLE, an INSERT, REPLACE or DELETE, a
	// LOCK TABLE[S], and whether one of its LIKEs was read as '='.
	first                                 int
	selecting, tableDDL, writing, locking bool
	liking                                bool
}

// blank turns text[from:to] into spaces (line ends kept).
func (r *recovery) blank(from, to int) {
	r.ensure()
	for i := from; i < to; i++ {
		if r.b[i] != '\n' {
			r.b[i] = ' '
		}
	}
}

// put writes s over the text at offset at.
func (r *recovery) put(at int, s string) {
	r.ensure()
	copy(r.b[at:], s)
}

// putWord writes w over toks[i] (a word no shorter), blanks after it.
func (r *recovery) putWord(i int, w string) {
	t := r.toks[i]
	r.put(int(t.Start), w)
	r.blank(int(t.Start)+len(w), int(t.End))
}

// ensure makes the masked bytes on the first change.
func (r *recovery) ensure() {
	if r.b == nil {
		r.b = []byte(r.text)
	}
}

// blanked reports whether toks[i] was blanked already.
func (r *recovery) blanked(i int) bool { return r.b != nil && r.b[r.toks[i].Start] == ' ' }

// word is toks[i] in upper case when it is a word, else "".
func (r *recovery) word(i int) string {
	if i >= 0 && i < len(r.toks) && r.toks[i].Kind == lexer.Ident {
		return strings.ToUpper(r.text[r.toks[i].Start:r.toks[i].End])
	}
	return ""
}

// punct reports whether toks[i] is the punctuation c.
func (r *recovery) punct(i int, c byte) bool {
	return i >= 0 && i < len(r.toks) && r.toks[i].Kind == lexer.Punct && r.text[r.toks[i].Start] == c
}

// span blanks the tokens from i to end (both included).
func (r *recovery) span(i, end int) { r.blank(int(r.toks[i].Start), int(r.toks[end].End)) }

// spanN blanks the n tokens from i, a rule's match: the index of the
// last, and false when n is 0 (no match).
func (r *recovery) spanN(i, n int) (int, bool) {
	if n == 0 {
		return i, false
	}
	r.span(i, i+n-1)
	return i + n - 1, true
}

// statementStart reads the first token of a statement, toks[i]: it notes
// what the statement is and masks the forms that only start one. done is
// true when it read the tokens up to next (the statement then starts
// after them), stop when the rest of the text is blanked.
func (r *recovery) statementStart(i int) (next int, done, stop bool) {
	t := r.toks[i]
	r.start = false
	r.starts[i] = true
	r.first, r.liking = i, false
	w := r.word(i)
	r.selecting = w == "SELECT" || w == "WITH" || r.punct(i, '(') ||
		(w == "EXPLAIN" || w == "DESCRIBE" || w == "DESC") && (r.word(i+1) == "SELECT" || r.word(i+1) == "WITH" || r.punct(i+1, '('))
	r.writing = w == "INSERT" || w == "REPLACE" || w == "DELETE"
	r.locking = w == "LOCK" && (r.word(i+1) == "TABLE" || r.word(i+1) == "TABLES")
	r.tableDDL = (w == "CREATE" || w == "ALTER") && r.tableDDLAt(i)
	if (w == "COMMIT" || w == "ROLLBACK") && r.word(i+1) == "WORK" {
		// COMMIT WORK, ROLLBACK WORK [TO …]: WORK is a noise word the
		// parser does not take; the statement names no table.
		r.span(i+1, i+1)
	}
	if JunkAt(r.text, r.toks, i, r.w.Keywords) {
		r.blank(int(t.Start), len(r.text))
		r.m.Junk = int(t.Start)
		return i, false, true
	}
	if from, end, ok := explainPrefix(r.text, r.toks, i); ok {
		// EXPLAIN EXTENDED / PARTITIONS and ANALYZE [FORMAT=JSON] of a
		// statement: the modifier (or ANALYZE, which runs the statement)
		// is blanked.
		r.span(from, end-1)
		r.start = true
		return end - 1, true, false
	}
	if end := bracketedLockingRead(r.text, r.toks, i); end > 0 {
		// (SELECT …) FOR UPDATE: the parser takes the locking clause
		// after a SELECT, not after its brackets; without them the SELECT
		// reads and locks the same tables.
		r.span(i, i)
		r.span(end, end)
	}
	for _, mk := range [...]func(*recovery, int){
		(*recovery).temporarySequence, (*recovery).alterIfExists, (*recovery).namesDefaultCollate, (*recovery).showLocal,
		(*recovery).showLimit, (*recovery).renameTableIfExists,
	} {
		mk(r, i)
	}
	if w == "SET" && r.word(i+1) == "STATEMENT" {
		if end, vars, ok := SetStatementPrefix(r.text, r.toks, i+2); ok && !ModeForLaterText(r.text, r.toks, end+1, vars) {
			r.span(i, end)
			r.m.SetStatements = append(r.m.SetStatements, SetStatement{End: int(r.toks[end].End), Vars: vars})
			r.start = true // the statement it applies to
			return end, true, false
		}
	}
	return i, false, false
}

// tableDDLAt reports whether the CREATE or ALTER at toks[i] is of a
// table. CREATE OR REPLACE TABLE / INDEX / SEQUENCE / USER / ROLE and
// ALTER ONLINE TABLE lose the words: the statement without them names the
// same tables (OR REPLACE drops what it replaces, in the table's place).
func (r *recovery) tableDDLAt(i int) bool {
	j := i + 1
	if r.word(i) == "CREATE" && r.word(j) == "OR" && r.word(j+1) == "REPLACE" && orReplaceable[r.word(j+2)] {
		r.span(j, j+1)
		j += 2
	} else if r.word(i) == "ALTER" && r.word(j) == "ONLINE" && r.word(j+1) == "TABLE" {
		r.span(j, j)
		j++
	}
	if r.word(j) == "TEMPORARY" {
		j++
	}
	return r.word(j) == "TABLE"
}

// maskAt masks the form at toks[i], if any, and returns the index of the
// last token it read. The maskers are tried in order; the first whose
// form is there decides (it may then leave the text as it is).
func (r *recovery) maskAt(i int) int {
	for _, mk := range [...]func(*recovery, int) (int, bool){
		(*recovery).limitVars, (*recovery).limitClause, (*recovery).semicolon, (*recovery).soundsLike, (*recovery).naturalJoin,
		(*recovery).likeOperator, (*recovery).aliasEquals, (*recovery).dualThenHaving, (*recovery).jsonTable,
		(*recovery).fromDual, (*recovery).truthTest, (*recovery).ignoredIndex, (*recovery).columnAttribute, (*recovery).checkOption,
		(*recovery).lockAlias, (*recovery).lockWrite, (*recovery).procedureAnalyse, (*recovery).valuesRows,
		(*recovery).lockWait, (*recovery).withinGroup, (*recovery).orderedSetAggregate, (*recovery).valueCall,
		(*recovery).returning, (*recovery).forExport, (*recovery).selectInto, (*recovery).castSpatial, (*recovery).castDouble, (*recovery).castUnknownType, (*recovery).typeSchema, (*recovery).castPrecision, (*recovery).castCharWords2, (*recovery).spatialType,
		(*recovery).spatialKey, (*recovery).introducer, (*recovery).castInt, (*recovery).bracketedTwice, (*recovery).bracketedQuery,
		(*recovery).concatLimit, (*recovery).longNumber, (*recovery).reservedAlias, (*recovery).reservedName, (*recovery).windowCount,
		(*recovery).castInterval, (*recovery).dynamicTypes, (*recovery).renameIfExists, (*recovery).systemVersioning,
		(*recovery).cycleRestrict, (*recovery).lastValue, (*recovery).forPortion, (*recovery).setvalArgs,
		(*recovery).columnConstraint,
		(*recovery).fullTextSearch,
		(*recovery).ignoreValue, (*recovery).defaultExpression, (*recovery).defaultVariable, (*recovery).castCharType,
		(*recovery).argAlias, (*recovery).unknownCollation, (*recovery).hugeFloat, (*recovery).arrayAgg, (*recovery).updateOrder, (*recovery).noCopy, (*recovery).allValue,
		(*recovery).loadPartition, (*recovery).weightLevel, (*recovery).frameExclude, (*recovery).windowDistinct, (*recovery).withCube, (*recovery).frameString, (*recovery).allDistinct, (*recovery).spacedAggregate,
	} {
		if next, ok := mk(r, i); ok {
			return next
		}
	}
	return i
}

// limitVars: LIMIT with a stored program's local variables, names of
// variables, not of tables or columns.
func (r *recovery) limitVars(i int) (int, bool) {
	return r.spanN(i, limitVariables(r.text, r.toks, i))
}

// limitClause: LIMIT … ROWS EXAMINED n, OFFSET n ROWS, FETCH FIRST n
// ROWS ONLY / WITH TIES: numbers and words, no name.
func (r *recovery) limitClause(i int) (int, bool) {
	return r.spanN(i, limitExtension(r.text, r.toks, i))
}

// semicolon: a ';' ends the statement.
func (r *recovery) semicolon(i int) (int, bool) {
	if !r.punct(i, ';') {
		return i, false
	}
	r.start = true
	return i, true
}

// likeOperator: MariaDB's LIKE, REGEXP and ESCAPE take any operand (an
// expression after ESCAPE, a '?'), and LIKE … IN (…) chains; the parser
// takes a simple one after LIKE and REGEXP and a string after ESCAPE.
// Each is read as '=' (NOT before LIKE or REGEXP blanked), which the
// parser takes between any operands: every operand keeps its place, so
// every name in them (a subquery's tables) is read as it is.
func (r *recovery) likeOperator(i int) (int, bool) {
	w := r.word(i)
	if !(w == "LIKE" || w == "REGEXP" || w == "RLIKE" || w == "ESCAPE" && r.liking) ||
		!predicateOperator(r.text, r.toks, r.first, i, r.tableDDL, r.w.Reserved) {
		return i, false
	}
	if r.word(i-1) == "NOT" {
		r.span(i-1, i-1)
	}
	r.span(i, i)
	r.put(int(r.toks[i].Start), "=")
	r.liking = r.liking || w == "LIKE"
	return i, true
}

// aliasEquals: FROM t = a, MariaDB's alias after '=' (table_alias), which
// the parser does not take; read as FROM t a.
func (r *recovery) aliasEquals(i int) (int, bool) {
	if !r.punct(i, '=') || !tableAliasEquals(r.text, r.toks, i, r.w.Reserved) {
		return i, false
	}
	r.span(i, i)
	return i, true
}

// dualThenHaving: SELECT … FROM DUAL HAVING …; the parser takes HAVING
// without FROM, not after FROM DUAL, which names no table.
func (r *recovery) dualThenHaving(i int) (int, bool) {
	if r.word(i) != "FROM" || r.word(i+1) != "DUAL" || r.word(i+2) != "HAVING" {
		return i, false
	}
	r.span(i, i+1)
	return i + 1, true
}

// jsonTable: JSON_TABLE(document, path COLUMNS (…)) alias, a table
// function the parser does not know, read as the derived table (SELECT
// document) alias. The document, an expression, keeps its place (its
// subqueries' tables are read); the path and the columns, words, literals
// and types, name nothing.
func (r *recovery) jsonTable(i int) (int, bool) {
	if r.word(i) != "JSON_TABLE" || !r.punct(i+1, '(') || !(r.word(i-1) == "FROM" || r.word(i-1) == "JOIN" || r.punct(i-1, ',')) {
		return i, false
	}
	if comma, end := jsonTableColumns(r.text, r.toks, i+1); comma > 0 {
		r.span(i, i+1)
		r.put(int(r.toks[i].Start), "(SELECT")
		r.span(comma, end-1)
		return end, true
	}
	return i, true
}

// fromDual: SELECT … FROM DUAL WHERE … [GROUP BY …] HAVING …; the parser
// takes no HAVING after FROM DUAL's other clauses. HAVING's condition is
// read as one more GROUP BY item (',') or, without GROUP BY, as one more
// WHERE term (AND): it keeps its place, so its names are read as they
// are.
func (r *recovery) fromDual(i int) (int, bool) {
	if r.word(i) != "FROM" || r.word(i+1) != "DUAL" {
		return i, false
	}
	if h, sep := dualHaving(r.text, r.toks, i+2); h > 0 {
		r.span(h, h)
		r.put(int(r.toks[h].Start), sep)
	}
	return i + 1, true
}

// truthTest: x IS [NOT] TRUE | FALSE | UNKNOWN | NULL, which MariaDB
// chains (x IS TRUE IS FALSE, x IS NULL = 3) and the parser does not:
// blanked, the operand it tests stays; the words name nothing. Not in
// SHOW … WHERE, whose condition the proxy may answer with.
func (r *recovery) truthTest(i int) (int, bool) {
	if r.word(i) != "IS" || i <= r.first || r.word(r.first) == "SHOW" || !operandEnd(r.text, r.toks, i-1, r.w.Reserved) ||
		!(truthTests[r.word(i+1)] || r.word(i+1) == "NOT" && truthTests[r.word(i+2)]) {
		return i, false
	}
	end := i + 1
	if r.word(end) == "NOT" {
		end++
	}
	r.span(i, end)
	return end, true
}

// columnAttribute: MariaDB's column and index attributes
// COMPRESSED[=method], INVISIBLE, IGNORED after a column's type or an
// index's columns; they name nothing.
func (r *recovery) columnAttribute(i int) (int, bool) {
	if !r.tableDDL || !columnAttributes[r.word(i)] || i == 0 || r.toks[i-1].Kind == lexer.Punct && !r.punct(i-1, ')') ||
		r.word(i-1) == "TABLE" || !(r.punct(i+1, ',') || r.punct(i+1, ')') || r.punct(i+1, '=') || r.word(i+1) == "NOT" ||
		r.word(i+1) == "NULL" || r.word(i+1) == "DEFAULT" || i+1 == len(r.toks)) {
		return i, false
	}
	end := i
	if r.word(i) == "COMPRESSED" && r.punct(i+1, '=') && i+2 < len(r.toks) && r.toks[i+2].Kind == lexer.Ident {
		end = i + 2
	}
	r.span(i, end)
	return end, true
}

// checkOption: a view's WITH [CASCADED | LOCAL] CHECK OPTION.
func (r *recovery) checkOption(i int) (int, bool) {
	if r.word(i) != "WITH" || !(r.word(i+1) == "CHECK" && r.word(i+2) == "OPTION" && statementEnd(r.text, r.toks, i+3) ||
		(r.word(i+1) == "CASCADED" || r.word(i+1) == "LOCAL") && r.word(i+2) == "CHECK" && r.word(i+3) == "OPTION" &&
			statementEnd(r.text, r.toks, i+4)) {
		return i, false
	}
	end := i + 2
	if r.word(i+1) != "CHECK" {
		end++
	}
	r.span(i, end)
	return end, true
}

// lockAlias: LOCK TABLES t [AS] alias READ; the alias names no table.
func (r *recovery) lockAlias(i int) (int, bool) {
	if !r.locking || r.toks[i].Kind != lexer.Ident && r.toks[i].Kind != lexer.Quoted || !lockAliasAt(r.text, r.toks, i) {
		return i, false
	}
	from := i
	if r.word(i-1) == "AS" {
		from = i - 1
	}
	r.span(from, i)
	return i, true
}

// lockWrite: WRITE CONCURRENT and LOW_PRIORITY WRITE lock for writing, as
// WRITE does.
func (r *recovery) lockWrite(i int) (int, bool) {
	if !r.locking || !(r.word(i) == "CONCURRENT" && r.word(i-1) == "WRITE" || r.word(i) == "LOW_PRIORITY" && r.word(i+1) == "WRITE") {
		return i, false
	}
	r.span(i, i)
	return i, true
}

// procedureAnalyse: SELECT … PROCEDURE ANALYSE([max [, memory]]), numbers
// only.
func (r *recovery) procedureAnalyse(i int) (int, bool) {
	if r.word(i) != "PROCEDURE" || r.word(i+1) != "ANALYSE" || !r.punct(i+2, '(') || i == 0 {
		return i, false
	}
	j := i + 3
	for j < len(r.toks) && (r.toks[j].Kind == lexer.Number || r.punct(j, ',')) {
		j++
	}
	if r.punct(j, ')') {
		r.span(i, j)
		return j, true
	}
	return i, true
}

// valuesRows: a table value constructor, VALUES (1, 2), (3, 4), where a
// query starts (an EXPLAIN's included), read as SELECT of row values (the same length); the rows'
// expressions are read as they are.
func (r *recovery) valuesRows(i int) (int, bool) {
	if r.word(i) != "VALUES" || !r.punct(i+1, '(') || !(i == 0 || r.starts[i] || r.punct(i-1, '(') || r.word(i-1) == "UNION" ||
		r.word(i-1) == "EXCEPT" || r.word(i-1) == "INTERSECT" || r.word(i-1) == "ALL" || r.word(i-1) == "DISTINCT" || r.explained(i) ||
		r.tableQuery(i)) {
		return i, false
	}
	r.put(int(r.toks[i].Start), "SELECT")
	return i, true
}

// tableQuery reports whether toks[i] starts the query of CREATE TABLE t
// (columns) <query>: right after the ')' that closes the columns, which
// follows the table's name.
func (r *recovery) tableQuery(i int) bool {
	if !r.tableDDL || r.word(r.first) != "CREATE" || !r.punct(i-1, ')') {
		return false
	}
	open := -1
	for j := r.first; j < i-1; j++ {
		if r.punct(j, '(') {
			open = j
			break
		}
	}
	return open > 0 && lexer.Closing(r.text, r.toks, open) == i-1 && (r.toks[open-1].Kind == lexer.Ident || r.toks[open-1].Kind == lexer.Quoted) &&
		(r.word(open-2) == "TABLE" || r.word(open-2) == "EXISTS" || r.punct(open-2, '.'))
}

// explained reports whether toks[i] is the statement EXPLAIN or DESCRIBE
// [EXTENDED | PARTITIONS | FORMAT = f] at the statement's start explains.
func (r *recovery) explained(i int) bool {
	j := i - 1
	switch w := r.word(j); {
	case w == "EXTENDED" || w == "PARTITIONS":
		j--
	case r.punct(j-1, '=') && r.word(j-2) == "FORMAT":
		j -= 3
	}
	w := r.word(j)
	return j == r.first && (w == "EXPLAIN" || w == "DESCRIBE" || w == "DESC")
}

// lockWait: NOWAIT and WAIT n (seconds to wait for a lock), no name.
func (r *recovery) lockWait(i int) (int, bool) {
	if !(r.word(i) == "NOWAIT" && i > 0 || r.word(i) == "WAIT" && i > 0 && i+1 < len(r.toks) && r.toks[i+1].Kind == lexer.Number) {
		return i, false
	}
	end := i
	if r.word(i) == "WAIT" {
		end++
	}
	r.span(i, end)
	return end, true
}

// withinGroup: PERCENTILE_CONT(f) WITHIN GROUP (ORDER BY col [ASC |
// DESC]); the ordering names a column of the query (no qualifier, no
// call, no subquery).
func (r *recovery) withinGroup(i int) (int, bool) {
	if r.word(i) != "WITHIN" || r.word(i+1) != "GROUP" || !r.punct(i+2, '(') || r.word(i+3) != "ORDER" || r.word(i+4) != "BY" {
		return i, false
	}
	j := i + 5
	for j < len(r.toks) && (r.toks[j].Kind == lexer.Ident && !r.w.Reserved[strings.ToLower(r.text[r.toks[j].Start:r.toks[j].End])] ||
		r.toks[j].Kind == lexer.Quoted || r.word(j) == "ASC" || r.word(j) == "DESC" || r.punct(j, ',')) {
		j++
	}
	if r.punct(j, ')') && j > i+5 {
		r.span(i, j)
		return j, true
	}
	return i, true
}

// orderedSetAggregate: MariaDB's ordered-set aggregates, read as the
// window function LAG of the same arguments (the name padded with
// blanks): their arguments are expressions like any.
func (r *recovery) orderedSetAggregate(i int) (int, bool) {
	w := r.word(i)
	if w != "PERCENTILE_CONT" && w != "PERCENTILE_DISC" && w != "MEDIAN" || !r.punct(i+1, '(') || r.punct(i-1, '.') ||
		!windowCall(r.text, r.toks, i+1) {
		return i, false
	}
	r.putWord(i, "LAG")
	return i, true
}

// valueCall: VALUE(col), MariaDB's VALUES(col), read as a call of a
// built-in function of the same length (the column stays).
func (r *recovery) valueCall(i int) (int, bool) {
	if r.word(i) != "VALUE" || !r.punct(i+1, '(') || i == 0 || !(r.toks[i-1].Kind == lexer.Punct && !r.punct(i-1, '.') && !r.punct(i-1, ')') ||
		r.word(i-1) == "SELECT" || r.word(i-1) == "DISTINCT" || callContext[r.word(i-1)] || r.word(i-1) == "BY" || r.word(i-1) == "ON") {
		return i, false
	}
	r.put(int(r.toks[i].Start), "UPPER")
	return i, true
}

// returning: INSERT / REPLACE / DELETE … RETURNING columns; unqualified
// names, literals and operators only (no call, no subquery, no qualifier,
// which would name the table).
func (r *recovery) returning(i int) (int, bool) {
	if !r.writing || r.word(i) != "RETURNING" {
		return i, false
	}
	if end := returningEnd(r.text, r.toks, i+1, r.w.Reserved); end > i+1 {
		r.span(i, end-1)
		return end - 1, true
	}
	r.replaceReturning(i)
	return i, true
}

// forExport: FLUSH TABLES t FOR EXPORT.
func (r *recovery) forExport(i int) (int, bool) {
	if r.word(i) != "FOR" || r.word(i+1) != "EXPORT" || !statementEnd(r.text, r.toks, i+2) {
		return i, false
	}
	r.span(i, i+1)
	return i + 1, true
}

// selectInto: SELECT … INTO local variables of a stored program or user
// variables; the variables name no table. The user variables are kept for
// the statement (a replay must know it sets them).
func (r *recovery) selectInto(i int) (int, bool) {
	if !r.selecting || r.word(i) != "INTO" || r.word(i+1) == "OUTFILE" || r.word(i+1) == "DUMPFILE" || intoTargetEnd(r.text, r.toks, i+1) == 0 {
		return i, false
	}
	var targets []int
	end := i + 1
	for {
		next := intoTargetEnd(r.text, r.toks, end)
		if next == 0 {
			return i, true
		}
		targets = append(targets, end)
		if !r.punct(next, ',') {
			end = next - 1
			break
		}
		end = next + 1
	}
	for _, k := range targets {
		if tk := r.toks[k]; tk.Kind == lexer.Variable {
			r.m.IntoVars = append(r.m.IntoVars, IntoVar{At: int(tk.Start), Name: r.text[tk.Start:tk.End]})
		}
	}
	r.span(i, end)
	return end, true
}

// spatialType: a column's spatial type, read as BLOB and blanks (the same
// length).
func (r *recovery) spatialType(i int) (int, bool) {
	if r.toks[i].Kind != lexer.Ident || !spatialTypes[r.word(i)] || i == 0 || r.toks[i-1].Kind != lexer.Ident && r.toks[i-1].Kind != lexer.Quoted ||
		r.punct(i+1, '(') || r.punct(i+1, '.') || r.punct(i-2, '.') {
		return i, false
	}
	r.putWord(i, "BLOB")
	return i, true
}

// spatialKey: SPATIAL KEY / INDEX, read as a plain one.
func (r *recovery) spatialKey(i int) (int, bool) {
	if r.word(i) != "SPATIAL" || r.word(i+1) != "KEY" && r.word(i+1) != "INDEX" ||
		!(r.punct(i-1, ',') || r.punct(i-1, '(') || r.word(i-1) == "ADD") {
		return i, false
	}
	r.span(i, i)
	return i, true
}

// introducer: a character set introducer the parser does not take (_ucs2
// 'a', _latin2 0x41); the literal keeps its place.
func (r *recovery) introducer(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Ident && t.Kind != lexer.String || r.text[t.Start] != '_' {
		return i, false
	}
	if n := introducerLen(r.text, r.toks, i, r.w.Charset); n > 0 {
		r.blank(int(t.Start), int(t.Start)+n)
	}
	return i, true
}

// castInt: CAST(x AS INT[EGER]), a type the parser reads as DEC[IMAL],
// the same length; types name no table. Not a type blanked already (a
// dynamic column's).
func (r *recovery) castInt(i int) (int, bool) {
	w := r.word(i)
	if r.word(i-1) != "AS" || w != "INT" && w != "INTEGER" || !r.punct(i+1, ')') && !r.punct(i+1, ',') || r.blanked(i) {
		return i, false
	}
	r.put(int(r.toks[i].Start), map[string]string{"INT": "DEC", "INTEGER": "DECIMAL"}[w])
	return i, true
}

// bracketedQuery: CREATE TABLE t (SELECT …) [UNION …], the query in
// parentheses, read without them (the same query).
func (r *recovery) bracketedQuery(i int) (int, bool) {
	if !r.tableDDL || !r.punct(i, '(') || r.word(i+1) != "SELECT" && r.word(i+1) != "WITH" || i < 2 ||
		r.toks[i-1].Kind != lexer.Ident && r.toks[i-1].Kind != lexer.Quoted ||
		!(r.word(i-2) == "TABLE" || r.word(i-2) == "EXISTS" || r.punct(i-2, '.')) {
		return i, false
	}
	if end := lexer.Closing(r.text, r.toks, i); end > 0 {
		r.span(i, i)
		r.span(end, end)
	}
	return i, true
}

// bracketedTwice: CREATE TABLE t ((SELECT …) [ORDER BY …] [LIMIT …])
// [LIMIT …], a query in two pairs of parentheses, read without both (the
// same query, its ORDER BY and LIMIT after it).
func (r *recovery) bracketedTwice(i int) (int, bool) {
	if !r.tableDDL || !r.punct(i, '(') || !r.punct(i+1, '(') || r.word(i+2) != "SELECT" && r.word(i+2) != "WITH" || i < 2 ||
		r.toks[i-1].Kind != lexer.Ident && r.toks[i-1].Kind != lexer.Quoted ||
		!(r.word(i-2) == "TABLE" || r.word(i-2) == "EXISTS" || r.punct(i-2, '.')) {
		return i, false
	}
	outer, inner := lexer.Closing(r.text, r.toks, i), lexer.Closing(r.text, r.toks, i+1)
	if outer <= 0 || inner <= 0 {
		return i, false
	}
	for _, j := range []int{i, i + 1, inner, outer} {
		r.span(j, j)
	}
	return i + 1, true
}

// concatLimit: GROUP_CONCAT(… LIMIT n [OFFSET m | , m]), numbers
// only.
func (r *recovery) concatLimit(i int) (int, bool) {
	if r.word(i) != "LIMIT" || !groupConcatLimit(r.text, r.toks, i) {
		return i, false
	}
	end := i + 1
	for end+1 < len(r.toks) && (r.toks[end+1].Kind == lexer.Number || r.toks[end+1].Kind == lexer.Variable || r.punct(end+1, ',') ||
		r.word(end+1) == "OFFSET") {
		end++
	}
	r.span(i, end)
	return end, true
}

// longNumber: a number longer than the parser reads (MariaDB's DECIMAL
// takes 65 digits, its literals more), read as 0; numbers name no table.
func (r *recovery) longNumber(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Number || t.End-t.Start <= maxParsedNumber || r.text[t.Start] < '0' || r.text[t.Start] > '9' {
		return i, false
	}
	r.span(i, i)
	r.put(int(t.Start), "0")
	return i, true
}

// reservedAlias: a column's alias the parser reserves and MariaDB does not
// (ROW, RANK, …); an alias names no table: read as another name of the
// same length.
func (r *recovery) reservedAlias(i int) (int, bool) {
	t := r.toks[i]
	if r.word(i-1) != "AS" || t.Kind != lexer.Ident || !r.w.Reserved[strings.ToLower(r.text[t.Start:t.End])] ||
		!(r.punct(i+1, ',') || r.punct(i+1, ';') || r.word(i+1) == "FROM" || i+1 == len(r.toks)) ||
		r.blanked(i) || IsTypeWord(r.word(i)) || castTypes[r.word(i)] {
		return i, false
	}
	r.put(int(t.Start), strings.Repeat("x", int(t.End-t.Start)))
	return i, true
}

// windowCount: LAG / LEAD offsets and NTILE / NTH_VALUE counts; MariaDB
// takes an expression, the parser a number only. One of literals and
// operators (no name, no call) is read as the number 1, padded with
// blanks.
func (r *recovery) windowCount(i int) (int, bool) {
	n := windowCountArg[r.word(i)]
	if n == 0 || !r.punct(i+1, '(') || r.punct(i-1, '.') || !windowCall(r.text, r.toks, i+1) {
		return i, false
	}
	if from, to, ok := numberArg(r.text, r.toks, i+1, n-1, r.w.Reserved); ok {
		r.span(from, to-1)
		r.put(int(r.toks[from].Start), "1")
	}
	return i, true
}

// castInterval: CAST(x AS INTERVAL unit[(n)]), a type, naming no table,
// read as CHAR.
func (r *recovery) castInterval(i int) (int, bool) {
	if r.word(i) != "INTERVAL" || r.word(i-1) != "AS" || !intervalUnits[r.word(i+1)] {
		return i, false
	}
	end := i + 1
	if r.punct(end+1, '(') && end+3 < len(r.toks) && r.toks[end+2].Kind == lexer.Number && r.punct(end+3, ')') {
		end += 3
	}
	r.span(i, end)
	r.put(int(r.toks[i].Start), "CHAR")
	return end, true
}

// dynamicTypes: COLUMN_GET(c, 1 AS CHAR); the types name no table.
func (r *recovery) dynamicTypes(i int) (int, bool) {
	if !dynamicColumnFuncs[r.word(i)] || !r.punct(i+1, '(') {
		return i, false
	}
	for _, s := range dynamicColumnTypes(r.text, r.toks, i+1) {
		r.blank(s[0], s[1])
	}
	return i, true
}
