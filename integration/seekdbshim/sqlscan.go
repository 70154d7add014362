package seekdbshim

import (
	"strings"
)

// This file holds the small SQL scanner the shim uses to recognise the
// statements it emulates (FORK TABLE, VERSION() / @@version, DDL naming a
// table that a fork keeps busy). It is a lexer plus pattern matching, not a
// parser: anything it does not recognise is passed through to MariaDB.

type tokKind int

const (
	tkWord   tokKind = iota // bare identifier, keyword or number
	tkQuoted                // `back-quoted identifier`
	tkString                // 'string' or "string"
	tkPunct                 // any other single character
)

type token struct {
	kind       tokKind
	val        string // identifier without quotes; the character for tkPunct
	start, end int    // byte offsets in the statement text
}

func (t token) isWord(kw string) bool { return t.kind == tkWord && strings.EqualFold(t.val, kw) }

func (t token) isPunct(c byte) bool { return t.kind == tkPunct && t.val[0] == c }

func (t token) isIdent() bool {
	return t.kind == tkQuoted || (t.kind == tkWord && t.val != "")
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 ||
		('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

// lex splits s into tokens, dropping whitespace and comments. The content of
// MySQL/MariaDB executable comments (/*! ... */, /*M! ... */) is lexed as
// ordinary SQL, like the server does.
func lex(s string) []token {
	var toks []token
	inExec := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#':
			i = skipLine(s, i)
		case c == '-' && strings.HasPrefix(s[i:], "--") &&
			(i+2 == len(s) || s[i+2] <= ' '):
			i = skipLine(s, i)
		case c == '/' && strings.HasPrefix(s[i:], "/*!"), c == '/' && strings.HasPrefix(s[i:], "/*M!"):
			i = skipExecOpening(s, i)
			inExec++
		case c == '/' && strings.HasPrefix(s[i:], "/*"):
			i = skipComment(s, i)
		case c == '*' && inExec > 0 && strings.HasPrefix(s[i:], "*/"):
			inExec--
			i += 2
		default:
			t := lexToken(s, i)
			toks = append(toks, t)
			i = t.end
		}
	}
	return toks
}

// lexToken is the token at s[i], which is not white space or a comment: a
// string, a back-quoted identifier, a word or one punctuation character.
func lexToken(s string, i int) token {
	switch c := s[i]; {
	case c == '\'' || c == '"':
		return lexString(s, i)
	case c == '`':
		return lexQuoted(s, i)
	case isWordByte(c):
		j := i
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		return token{kind: tkWord, val: s[i:j], start: i, end: j}
	}
	return token{kind: tkPunct, val: s[i : i+1], start: i, end: i + 1}
}

// lexString is the string token s[i] opens, quote doubled or backslashed
// inside, up to its closing quote (or the end of s).
func lexString(s string, i int) token {
	c := s[i]
	j := i + 1
	for j < len(s) {
		if s[j] == '\\' {
			j += 2
			continue
		}
		if s[j] == c {
			if j+1 < len(s) && s[j+1] == c {
				j += 2
				continue
			}
			break
		}
		j++
	}
	end := min(j+1, len(s))
	return token{kind: tkString, val: s[i:end], start: i, end: end}
}

// lexQuoted is the back-quoted identifier s[i] opens, its name with a
// doubled back quote read as one, up to its closing quote (or the end of s).
func lexQuoted(s string, i int) token {
	var b strings.Builder
	j := i + 1
	for j < len(s) {
		if s[j] == '`' {
			if j+1 < len(s) && s[j+1] == '`' {
				b.WriteByte('`')
				j += 2
				continue
			}
			break
		}
		b.WriteByte(s[j])
		j++
	}
	end := min(j+1, len(s))
	return token{kind: tkQuoted, val: b.String(), start: i, end: end}
}

// skipExecOpening is the offset past the opening of the executable comment
// at s[i] (/*! or /*M!, and its version number).
func skipExecOpening(s string, i int) int {
	i += strings.Index(s[i:], "!") + 1
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
	}
	return i
}

// skipComment is the offset past the /* … */ comment at s[i] (the end of s
// if it is not closed).
func skipComment(s string, i int) int {
	if j := strings.Index(s[i+2:], "*/"); j >= 0 {
		return i + j + 4
	}
	return len(s)
}

func skipLine(s string, i int) int {
	if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(s)
}

// splitStatements splits a token list at top-level semicolons, dropping
// empty statements.
func splitStatements(toks []token) [][]token {
	var out [][]token
	depth, start := 0, 0
	for i, t := range toks {
		switch {
		case t.isPunct('('):
			depth++
		case t.isPunct(')'):
			depth--
		case t.isPunct(';') && depth <= 0:
			if i > start {
				out = append(out, toks[start:i])
			}
			start = i + 1
		}
	}
	if start < len(toks) {
		out = append(out, toks[start:])
	}
	return out
}

// tableRef is a possibly database-qualified table name as written.
type tableRef struct {
	db, name string
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// sql renders the reference with back-quoted identifiers.
func (r tableRef) sql() string {
	if r.db == "" {
		return quoteIdent(r.name)
	}
	return quoteIdent(r.db) + "." + quoteIdent(r.name)
}

// key is the busy-registry key of r, resolved against the current database.
// Names are compared case-insensitively, which can only over-match.
func (r tableRef) key(curDB string) string {
	db := r.db
	if db == "" {
		db = curDB
	}
	return strings.ToLower(db) + "." + strings.ToLower(r.name)
}

// parseRef reads "name" or "db.name" at toks[i:].
func parseRef(toks []token, i int) (tableRef, int, bool) {
	if i >= len(toks) || !toks[i].isIdent() {
		return tableRef{}, i, false
	}
	if i+2 < len(toks) && toks[i+1].isPunct('.') && toks[i+2].isIdent() {
		return tableRef{db: toks[i].val, name: toks[i+2].val}, i + 3, true
	}
	return tableRef{name: toks[i].val}, i + 1, true
}

// parseFork recognises "FORK TABLE src TO dst" (optionally followed by
// semicolons). Keywords are case-insensitive, identifiers may be
// back-quoted and database-qualified.
func parseFork(query string) (src, dst tableRef, ok bool) {
	toks := lex(query)
	for len(toks) > 0 && toks[len(toks)-1].isPunct(';') {
		toks = toks[:len(toks)-1]
	}
	if len(toks) < 5 || !toks[0].isWord("FORK") || !toks[1].isWord("TABLE") {
		return src, dst, false
	}
	src, i, ok := parseRef(toks, 2)
	if !ok || i >= len(toks) || !toks[i].isWord("TO") {
		return src, dst, false
	}
	dst, i, ok = parseRef(toks, i+1)
	if !ok || i != len(toks) {
		return src, dst, false
	}
	return src, dst, true
}

// ddlTargets returns the tables (and whole databases) that the DDL
// statements in query would alter, drop, rename, truncate or re-index:
// ALTER TABLE, DROP TABLE, RENAME TABLE, TRUNCATE [TABLE], CREATE [OR
// REPLACE] TABLE, CREATE INDEX ... ON, DROP INDEX ... ON, DROP
// DATABASE/SCHEMA. Other statements yield nothing.
func ddlTargets(query string) (tables []tableRef, dbs []string) {
	for _, st := range splitStatements(lex(query)) {
		t, d := stmtTargets(st)
		tables = append(tables, t...)
		dbs = append(dbs, d...)
	}
	return tables, dbs
}

// stmtTargets returns the tables and databases one DDL statement's tokens
// name (ddlTargets).
func stmtTargets(toks []token) (tables []tableRef, dbs []string) {
	if len(toks) == 0 {
		return nil, nil
	}
	sc := &targetScan{toks: toks}
	switch {
	case toks[0].isWord("ALTER"):
		sc.alter()
	case toks[0].isWord("DROP"):
		sc.drop()
	case toks[0].isWord("RENAME"):
		sc.rename()
	case toks[0].isWord("TRUNCATE"):
		sc.refList(sc.skip(1, "TABLE"))
	case toks[0].isWord("CREATE"):
		sc.create()
	}
	return sc.tables, sc.dbs
}

// targetScan reads the targets of one DDL statement's tokens.
type targetScan struct {
	toks   []token
	tables []tableRef
	dbs    []string
}

// alter reads ALTER [ONLINE|OFFLINE|IGNORE] TABLE [IF EXISTS] ref.
func (sc *targetScan) alter() {
	if i := sc.skip(1, "ONLINE", "OFFLINE", "IGNORE"); sc.isWord(i, "TABLE") {
		sc.ref(sc.skipIfExists(i + 1))
	}
}

// drop reads DROP [TEMPORARY|ONLINE|OFFLINE] TABLE[S] refs, DROP INDEX …
// ON ref and DROP DATABASE|SCHEMA db.
func (sc *targetScan) drop() {
	i := sc.skip(1, "TEMPORARY", "ONLINE", "OFFLINE")
	switch {
	case sc.isWord(i, "TABLE", "TABLES"):
		sc.refList(sc.skipIfExists(i + 1))
	case sc.isWord(i, "INDEX"):
		sc.refAfterOn(i + 1)
	case sc.isWord(i, "DATABASE", "SCHEMA"):
		if j := sc.skipIfExists(i + 1); j < len(sc.toks) && sc.toks[j].isIdent() {
			sc.dbs = append(sc.dbs, sc.toks[j].val)
		}
	}
}

// rename reads RENAME TABLE[S] a TO b [, c TO d]…: both names of each pair.
func (sc *targetScan) rename() {
	if !sc.isWord(1, "TABLE", "TABLES") {
		return
	}
	toks := sc.toks
	for i := sc.skipIfExists(2); i < len(toks); {
		ref, next, ok := parseRef(toks, i)
		if !ok {
			i++
			continue
		}
		sc.tables = append(sc.tables, ref)
		i = next
		for i < len(toks) && !toks[i].isWord("TO") && !toks[i].isPunct(',') {
			i++ // WAIT n / NOWAIT
		}
		if i < len(toks) {
			i++
		}
	}
}

// create reads CREATE [OR REPLACE] [UNIQUE|FULLTEXT|SPATIAL|ONLINE|OFFLINE|
// TEMPORARY] INDEX … ON ref, or … TABLE [IF NOT EXISTS] ref.
func (sc *targetScan) create() {
	i := 1
	if sc.isWord(i, "OR") && sc.isWord(i+1, "REPLACE") {
		i += 2
	}
	i = sc.skip(i, "UNIQUE", "FULLTEXT", "SPATIAL", "ONLINE", "OFFLINE", "TEMPORARY")
	switch {
	case sc.isWord(i, "INDEX"):
		sc.refAfterOn(i + 1)
	case sc.isWord(i, "TABLE"):
		sc.ref(sc.skipIfExists(i + 1))
	}
}

// isWord reports whether toks[i] is one of words.
func (sc *targetScan) isWord(i int, words ...string) bool {
	if i >= len(sc.toks) {
		return false
	}
	for _, w := range words {
		if sc.toks[i].isWord(w) {
			return true
		}
	}
	return false
}

// skip is the index of the first token at or after i that is not one of
// words.
func (sc *targetScan) skip(i int, words ...string) int {
	for sc.isWord(i, words...) {
		i++
	}
	return i
}

// skipIfExists is the index after IF EXISTS or IF NOT EXISTS at i, or i.
func (sc *targetScan) skipIfExists(i int) int {
	switch {
	case sc.isWord(i, "IF") && sc.isWord(i+1, "EXISTS"):
		return i + 2
	case sc.isWord(i, "IF") && sc.isWord(i+1, "NOT") && sc.isWord(i+2, "EXISTS"):
		return i + 3
	}
	return i
}

// ref reads the table named at i, if one is.
func (sc *targetScan) ref(i int) {
	if ref, _, ok := parseRef(sc.toks, i); ok {
		sc.tables = append(sc.tables, ref)
	}
}

// refList reads "ref [, ref]..." starting at i.
func (sc *targetScan) refList(i int) {
	for {
		ref, next, ok := parseRef(sc.toks, i)
		if !ok {
			return
		}
		sc.tables = append(sc.tables, ref)
		if next >= len(sc.toks) || !sc.toks[next].isPunct(',') {
			return
		}
		i = next + 1
	}
}

// refAfterOn reads the table after the first top-level ON at or after i.
func (sc *targetScan) refAfterOn(i int) {
	for ; i < len(sc.toks); i++ {
		if sc.toks[i].isWord("ON") {
			sc.ref(i + 1)
			return
		}
	}
}

// selectModifiers may directly precede a select-list item.
var selectModifiers = map[string]bool{
	"SELECT": true, "DISTINCT": true, "ALL": true, "DISTINCTROW": true,
	"HIGH_PRIORITY": true, "STRAIGHT_JOIN": true, "SQL_SMALL_RESULT": true,
	"SQL_BIG_RESULT": true, "SQL_BUFFER_RESULT": true, "SQL_CACHE": true,
	"SQL_NO_CACHE": true, "SQL_CALC_FOUND_ROWS": true,
}

// selectListEnd are keywords that end a select list.
var selectListEnd = map[string]bool{
	"FROM": true, "INTO": true, "WHERE": true, "GROUP": true, "HAVING": true,
	"ORDER": true, "LIMIT": true, "UNION": true, "EXCEPT": true, "INTERSECT": true,
	"FOR": true, "LOCK": true, "WINDOW": true, "PROCEDURE": true, "OFFSET": true,
}

// rewriteVersion replaces VERSION() and @@version (also @@global.version,
// @@session.version; any case and spacing) by a string literal holding
// version. When the expression is a whole select-list item without an alias,
// it is aliased to its original text so the column keeps the name MariaDB
// would have given it. It reports whether anything was replaced.
func rewriteVersion(query, version string) (string, bool) {
	// Cheap pre-check: most statements do not mention it at all.
	if !strings.Contains(strings.ToLower(query), "version") {
		return query, false
	}
	toks := lex(query)
	type repl struct {
		start, end int
		text       string
	}
	var repls []repl
	selList := map[int]bool{} // paren depth -> inside a select list
	depth := 0
	literal := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(version) + "'"
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.isPunct('('):
			depth++
			continue
		case t.isPunct(')'):
			delete(selList, depth)
			depth--
			continue
		case t.kind == tkWord && strings.EqualFold(t.val, "SELECT"):
			selList[depth] = true
			continue
		case t.kind == tkWord && selectListEnd[strings.ToUpper(t.val)]:
			selList[depth] = false
			continue
		}
		end := -1 // index of the last token of a match
		switch {
		case t.isWord("VERSION") && i+2 < len(toks) && toks[i+1].isPunct('(') && toks[i+2].isPunct(')') &&
			(i == 0 || !(toks[i-1].isPunct('.') || toks[i-1].isPunct('@') || toks[i-1].isWord("FUNCTION"))):
			end = i + 2
		case t.isPunct('@') && i+2 < len(toks) && toks[i+1].isPunct('@') &&
			toks[i+1].start == t.end && toks[i+2].start == toks[i+1].end && // "@@name", no spaces
			!(i > 0 && toks[i-1].end == t.start && (toks[i-1].isPunct('@') || toks[i-1].isIdent())):
			j := i + 2
			if j+2 < len(toks) && toks[j+1].isPunct('.') &&
				(toks[j].isWord("GLOBAL") || toks[j].isWord("SESSION") || toks[j].isWord("LOCAL")) {
				j += 2
			}
			if toks[j].isWord("version") {
				end = j
			}
		}
		if end < 0 {
			continue
		}
		text := literal
		if selList[depth] && wholeSelectItem(toks, i, end) {
			text += " AS " + quoteIdent(query[t.start:toks[end].end])
		}
		repls = append(repls, repl{t.start, toks[end].end, text})
		i = end
	}
	if len(repls) == 0 {
		return query, false
	}
	var b strings.Builder
	last := 0
	for _, r := range repls {
		b.WriteString(query[last:r.start])
		b.WriteString(r.text)
		last = r.end
	}
	b.WriteString(query[last:])
	return b.String(), true
}

// wholeSelectItem reports whether toks[first..last] form a complete
// select-list item with no alias.
func wholeSelectItem(toks []token, first, last int) bool {
	if first == 0 {
		return false
	}
	prev := toks[first-1]
	if !prev.isPunct(',') && !(prev.kind == tkWord && selectModifiers[strings.ToUpper(prev.val)]) {
		return false
	}
	if last+1 == len(toks) {
		return true
	}
	next := toks[last+1]
	return next.isPunct(',') || next.isPunct(';') || next.isPunct(')') ||
		(next.kind == tkWord && selectListEnd[strings.ToUpper(next.val)])
}
