// Package forms reads, from a statement's tokens, the MariaDB forms the
// parser does not read: the tables of table maintenance, key cache and
// table DDL statements, the session statements that name none, and what
// a text the parser rejects reads like.
package forms

import (
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/kind"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// maintenanceOptions are the words that may follow the table list of a
// maintenance statement (CHECK's FOR UPGRADE, QUICK, FAST, MEDIUM,
// EXTENDED, CHANGED; REPAIR's QUICK, EXTENDED, USE_FRM, FORCE; CHECKSUM's
// QUICK, EXTENDED).
var maintenanceOptions = map[string]bool{
	"FOR": true, "UPGRADE": true, "QUICK": true, "FAST": true, "MEDIUM": true, "EXTENDED": true, "CHANGED": true,
	"USE_FRM": true, "FORCE": true,
}

// MaintenanceTables reads CHECK | CHECKSUM TABLE[S] list [options] and
// REPAIR | ANALYZE | OPTIMIZE [NO_WRITE_TO_BINLOG | LOCAL] TABLE[S] list
// [options]: the list's names are tables (REPAIR and OPTIMIZE change
// them), and CHECK and REPAIR VIEW list (maintenanceViews). ANALYZE's
// PERSISTENT FOR … (which names columns and indexes) is not read. ok is
// false when the text is not that.
func MaintenanceTables(text string, toks []lexer.Token, db string) (sites []ident.Site, ok bool) {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	w0 := word(0)
	i := 1
	if (w0 == "REPAIR" || w0 == "ANALYZE" || w0 == "OPTIMIZE") && (word(i) == "NO_WRITE_TO_BINLOG" || word(i) == "LOCAL") {
		i++
	}
	if word(i) == "VIEW" && (w0 == "CHECK" || w0 == "REPAIR") {
		return maintenanceViews(text, toks, i+1, db)
	}
	if word(i) != "TABLE" && word(i) != "TABLES" {
		return nil, false
	}
	i++
	sites, i, ok = TableNamesAt(text, toks, i, db, w0 == "REPAIR" || w0 == "OPTIMIZE", nil)
	if !ok {
		return nil, false
	}
	if w0 == "ANALYZE" && word(i) == "PERSISTENT" && word(i+1) == "FOR" {
		// PERSISTENT FOR ALL | COLUMNS (…) INDEXES (…): columns and
		// indexes of the tables.
		i += 2
		for ; i < len(toks); i++ {
			switch w := word(i); {
			case w == "ALL" || w == "COLUMNS" || w == "INDEXES":
			case lexer.PunctAt(text, toks, i, '('):
				next, ok := ParenNames(text, toks, i)
				if !ok {
					return nil, false
				}
				i = next - 1
			default:
				return nil, false
			}
		}
	}
	for ; i < len(toks); i++ {
		if !maintenanceOptions[word(i)] || w0 == "ANALYZE" || w0 == "OPTIMIZE" {
			return nil, false
		}
	}
	return sites, true
}

// maintenanceViews reads, from toks[i], the list of CHECK VIEW list [FOR
// UPGRADE] and REPAIR [NO_WRITE_TO_BINLOG | LOCAL] VIEW list [FROM MYSQL]:
// each name of the list is a view, a table to the proxy (REPAIR writes
// the view's definition again).
func maintenanceViews(text string, toks []lexer.Token, i int, db string) (sites []ident.Site, ok bool) {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	repair := word(0) == "REPAIR"
	sites, i, ok = TableNamesAt(text, toks, i, db, repair, nil)
	if !ok {
		return nil, false
	}
	switch {
	case i == len(toks):
	case repair && word(i) == "FROM" && word(i+1) == "MYSQL" && i+2 == len(toks),
		!repair && word(i) == "FOR" && word(i+1) == "UPGRADE" && i+2 == len(toks):
	default:
		return nil, false
	}
	return sites, true
}

// ParenNames reads, at toks[i], a parenthesized list of names (or ALL),
// possibly empty: the index after it.
func ParenNames(text string, toks []lexer.Token, i int) (next int, ok bool) {
	if !lexer.PunctAt(text, toks, i, '(') {
		return 0, false
	}
	i++
	if lexer.PunctAt(text, toks, i, ')') {
		return i + 1, true
	}
	for {
		if i >= len(toks) || toks[i].Kind != lexer.Ident && toks[i].Kind != lexer.Quoted {
			return 0, false
		}
		i++
		switch {
		case lexer.PunctAt(text, toks, i, ')'):
			return i + 1, true
		case lexer.PunctAt(text, toks, i, ','):
			i++
		default:
			return 0, false
		}
	}
}

// KeyCacheTables reads CACHE INDEX list IN cache and LOAD INDEX INTO CACHE
// list, the list's items being table [PARTITION (…)] [INDEX | KEY (…)]
// (and IGNORE LEAVES for LOAD INDEX): the tables' sites.
func KeyCacheTables(text string, toks []lexer.Token, db string) (sites []ident.Site, ok bool) {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	load := word(0) == "LOAD"
	i := 2
	if load {
		if word(2) != "INTO" || word(3) != "CACHE" {
			return nil, false
		}
		i = 4
	}
	for {
		s, next, ok := TableNameAt(text, toks, i, db)
		if !ok {
			return nil, false
		}
		sites = append(sites, s)
		i = next
		if word(i) == "PARTITION" {
			if i, ok = ParenNames(text, toks, i+1); !ok {
				return nil, false
			}
		}
		if word(i) == "INDEX" || word(i) == "KEY" {
			if i, ok = ParenNames(text, toks, i+1); !ok {
				return nil, false
			}
		}
		if load && word(i) == "IGNORE" && word(i+1) == "LEAVES" {
			i += 2
		}
		if !lexer.PunctAt(text, toks, i, ',') {
			break
		}
		i++
	}
	if load {
		return sites, i == len(toks)
	}
	// IN cache_name (a name or DEFAULT).
	return sites, word(i) == "IN" && i+2 == len(toks) && (toks[i+1].Kind == lexer.Ident || toks[i+1].Kind == lexer.Quoted)
}

// TableNamesAt reads a list of table names (name or db.name, separated by
// commas) at toks[i]: their sites, marked as writes when write is set, and
// the index after the list. ok is false when a name is not one, or when
// fits, if set, refuses the token a name starts at.
func TableNamesAt(text string, toks []lexer.Token, i int, db string, write bool, fits func(j int) bool) (sites []ident.Site, next int, ok bool) {
	for {
		if fits != nil && !fits(i) {
			return nil, i, false
		}
		s, next, ok := TableNameAt(text, toks, i, db)
		if !ok {
			return nil, i, false
		}
		s.Write = write
		sites = append(sites, s)
		i = next
		if !lexer.PunctAt(text, toks, i, ',') {
			return sites, i, true
		}
		i++
	}
}

// TableNameAt reads a table name, name or db.name, at toks[i]: its site
// and the index after it.
func TableNameAt(text string, toks []lexer.Token, i int, db string) (s ident.Site, next int, ok bool) {
	isName := func(j int) bool {
		return j < len(toks) && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted)
	}
	if !isName(i) {
		return ident.Site{}, 0, false
	}
	t := sqlname.Table{DB: db, Name: lexer.IdentText(text, toks[i])}
	end, qualified := toks[i].End, false
	next = i + 1
	if lexer.PunctAt(text, toks, next, '.') {
		if !isName(next + 1) {
			return ident.Site{}, 0, false
		}
		t = sqlname.Table{DB: lexer.IdentText(text, toks[i]), Name: lexer.IdentText(text, toks[next+1])}
		end, qualified = toks[next+1].End, true
		next += 2
	}
	if lexer.PunctAt(text, toks, next, '.') {
		return ident.Site{}, 0, false
	}
	return ident.Site{Start: int(toks[i].Start), End: int(end), Kind: collect.RefTable, Table: t, Qualified: qualified}, next, true
}

// tableDDLStop are the words after which a CREATE or ALTER TABLE the
// parser does not read may name a table (or a file, another server, a
// sequence): such a statement is not read from its words.
var tableDDLStop = map[string]bool{
	"SELECT": true, "LIKE": true, "REFERENCES": true, "UNION": true, "TABLE": true, "RENAME": true, "EXCHANGE": true,
	"NEXTVAL": true, "NEXT": true, "LASTVAL": true, "PREVIOUS": true, "SETVAL": true, "CONNECTION": true,
	"DIRECTORY": true, "IMPORT": true, "DISCARD": true,
}

// TableDDL reads CREATE [OR REPLACE] [TEMPORARY] TABLE [IF NOT EXISTS] t
// and ALTER [ONLINE] [IGNORE] TABLE [IF EXISTS] t, followed by anything
// that names no table (see tableDDLStop): the target's site, the kind and
// whether the table is temporary.
func TableDDL(text string, toks []lexer.Token, db string) (s ident.Site, k kind.Kind, temporary bool, ok bool) {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	i := 1
	switch word(0) {
	case "CREATE":
		if word(i) == "OR" && word(i+1) == "REPLACE" {
			i += 2
		}
		if word(i) == "TEMPORARY" {
			temporary = true
			i++
		}
		k = kind.CreateTable
	case "ALTER":
		for word(i) == "ONLINE" || word(i) == "IGNORE" {
			i++
		}
		k = kind.AlterTable
	}
	if word(i) != "TABLE" {
		return ident.Site{}, "", false, false
	}
	i++
	if word(i) == "IF" && (word(i+1) == "EXISTS" || word(i+1) == "NOT" && word(i+2) == "EXISTS") {
		i += 2
		if word(i) == "EXISTS" {
			i++
		}
	}
	s, next, ok := TableNameAt(text, toks, i, db)
	if !ok {
		return ident.Site{}, "", false, false
	}
	s.Write = true
	depth := 0
	for j := next; j < len(toks); j++ {
		t := toks[j]
		switch {
		case lexer.PunctAt(text, toks, j, '('):
			depth++
		case lexer.PunctAt(text, toks, j, ')'):
			depth--
		case t.Kind == lexer.Punct && text[t.Start] == '.':
			return ident.Site{}, "", false, false // a qualified name
		case t.Kind == lexer.Variable:
			return ident.Site{}, "", false, false
		case t.Kind == lexer.Ident:
			w := word(j)
			if w == "LIKE" && depth > 0 && !lexer.PunctAt(text, toks, j-1, '(') {
				// An operator in a column's DEFAULT or CHECK expression
				// (a LIKE 'x%'), not the LIKE of a table to copy, which
				// comes first in the parentheses.
				continue
			}
			if tableDDLStop[w] {
				return ident.Site{}, "", false, false
			}
			if w == "ENGINE" {
				v := j + 1
				if lexer.PunctAt(text, toks, v, '=') {
					v++
				}
				if v >= len(toks) || !collect.SafeEngine(lexer.IdentText(text, toks[v])) {
					return ident.Site{}, "", false, false
				}
			}
		}
	}
	return s, k, temporary, true
}

// unreservedWords are words the parser reserves that MariaDB 10.11 takes
// as a table's name unquoted (checked with PREPARE of DROP TABLE word).
var unreservedWords = map[string]bool{"OPTION": true, "ARRAY": true, "LATERAL": true, "RANK": true, "DENSE_RANK": true,
	"CUME_DIST": true, "PERCENT_RANK": true, "NTILE": true, "LAG": true, "LEAD": true, "FIRST_VALUE": true,
	"LAST_VALUE": true, "NTH_VALUE": true, "GROUPS": true, "ROW": true, "OF": true, "WINDOW": true, "GENERATED": true,
	"STORED": true, "VIRTUAL": true, "UNTIL": true, "TABLESAMPLE": true, "ILIKE": true}

// Unreserved reports whether w (upper case) is one of unreservedWords.
func Unreserved(w string) bool { return unreservedWords[w] }

// ShowColumnsSite locates, in the single statement sh of text (tokens toks),
// the table u that SHOW [FULL] COLUMNS … {FROM | IN} t {FROM | IN} db names
// in two places: one site from t to db, which a rewrite replaces with the
// qualified name. ok is false unless the tokens appear exactly once, each
// name unqualified. (The parser reads SHOW INDEX FROM t FROM db as of
// db.t, which the text does not spell: still refused.)
func ShowColumnsSite(text string, toks []lexer.Token, sh *ast.ShowStmt, u sqlname.Table) (ident.Site, bool) {
	if sh.Tp != ast.ShowColumns {
		return ident.Site{}, false
	}
	in := func(j int) bool { w := lexer.Word(text, toks, j); return w == "FROM" || w == "IN" }
	name := func(j int, n string) bool {
		return j < len(toks) && (toks[j].Kind == lexer.Ident || toks[j].Kind == lexer.Quoted) && lexer.IdentText(text, toks[j]) == n
	}
	var found ident.Site
	n := 0
	for i := range toks {
		if !in(i-1) || !name(i, u.Name) || !in(i+1) || !name(i+2, u.DB) || lexer.PunctAt(text, toks, i-2, '.') ||
			lexer.PunctAt(text, toks, i+3, '.') {
			continue
		}
		n++
		found = ident.Site{Start: int(toks[i].Start), End: int(toks[i+2].End), Kind: collect.RefTable, Table: u, Qualified: true}
	}
	return found, n == 1
}
