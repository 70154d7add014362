package rewrite

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/forms"
	"github.com/sqlfork/sqlfork-proxy/rewrite/ident"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// ALTER [ONLINE] [IGNORE] TABLE t CONVERT PARTITION p TO TABLE t2 and
// ALTER … TABLE t CONVERT TABLE t2 TO PARTITION p VALUES {LESS THAN (…) |
// IN (…)} [{WITH | WITHOUT} VALIDATION] (MariaDB 10.7's alter_list_item),
// which the parser does not know: a partition of t becomes the table t2,
// or t2 becomes a partition of t. Both tables are written (t2 created, or
// moved into t and dropped); the values are literals, the partition's name
// names no table.

// convertPartition reads either form into st; ok is false for anything
// else.
func (e *Engine) convertPartition(a *Analysis, st *Statement, text string, toks []lexer.Token) bool {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	i := 1
	for word(i) == "ONLINE" || word(i) == "IGNORE" {
		i++
	}
	if word(i) != "TABLE" {
		return false
	}
	if i++; word(i) == "IF" && word(i+1) == "EXISTS" {
		i += 2
	}
	db := a.opts.DB
	t1, next, ok := forms.TableNameAt(text, toks, i, db)
	if !ok || word(next) != "CONVERT" {
		return false
	}
	var t2 ident.Site
	switch i = next + 1; word(i) {
	case "PARTITION":
		if !isName(toks, i+1) || word(i+2) != "TO" || word(i+3) != "TABLE" {
			return false
		}
		if t2, next, ok = forms.TableNameAt(text, toks, i+4, db); !ok || next != len(toks) {
			return false
		}
	case "TABLE":
		if t2, next, ok = forms.TableNameAt(text, toks, i+1, db); !ok || word(next) != "TO" || word(next+1) != "PARTITION" ||
			!isName(toks, next+2) || !partitionValues(text, toks, next+3) {
			return false
		}
	default:
		return false
	}
	t1.Write, t2.Write = true, true
	st.Class, st.Kind, st.Writes = ClassDDL, KindAlterTable, []Table{t1.Table, t2.Table}
	a.sites = []ident.Site{t1, t2}
	return true
}

// isName reports whether toks[i] is a bare or quoted name.
func isName(toks []lexer.Token, i int) bool {
	return i < len(toks) && (toks[i].Kind == lexer.Ident || toks[i].Kind == lexer.Quoted)
}

// partitionValues reports whether toks from i are VALUES LESS THAN (…) or
// VALUES IN (…) of literals (or MAXVALUE), then [WITH | WITHOUT]
// VALIDATION, to the statement's end.
func partitionValues(text string, toks []lexer.Token, i int) bool {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	if word(i) != "VALUES" {
		return false
	}
	switch i++; {
	case word(i) == "LESS" && word(i+1) == "THAN":
		i += 2
	case word(i) == "IN":
		i++
	default:
		return false
	}
	end := lexer.Closing(text, toks, i)
	if !lexer.PunctAt(text, toks, i, '(') || end <= 0 {
		return false
	}
	for j := i + 1; j < end; j++ {
		switch t := toks[j]; {
		case t.Kind == lexer.Number || t.Kind == lexer.String || lexer.PunctAt(text, toks, j, ',') || lexer.PunctAt(text, toks, j, '-'):
		case word(j) == "MAXVALUE" || word(j) == "NULL":
		default:
			return false
		}
	}
	i = end + 1
	if (word(i) == "WITH" || word(i) == "WITHOUT") && word(i+1) == "VALIDATION" {
		i += 2
	}
	return i == len(toks)
}
