package rewrite

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/kind"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Maintenance names the table maintenance statement the input's i-th
// statement is — "CHECK TABLE", "CHECKSUM TABLE", "ANALYZE TABLE",
// "OPTIMIZE TABLE" or "REPAIR TABLE", or ALTER TABLE's "ANALYZE PARTITION",
// "CHECK PARTITION", "OPTIMIZE PARTITION" or "REPAIR PARTITION" —
// whichever reader read it (the parser's leaves ANALYZE's kind empty, and
// reads the other partition forms as ALTER TABLE); "" for any other
// statement. Each answers a row per table, named db.table.
func (a *Analysis) Maintenance(i int) Kind {
	if i < 0 || i >= len(a.Statements) || i >= len(a.stmtStarts) || a.stmtStarts[i] > len(a.text) {
		return ""
	}
	k := a.Statements[i].Kind
	if k != "" && kind.Maintenance(kind.FirstWord(string(k))) == k {
		return k
	}
	if k != "" && k != KindAlterTable {
		return ""
	}
	text := a.text[a.stmtStarts[i]:]
	var toks []lexer.Token
	for _, t := range lexer.Lex(text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes}) {
		if t.Kind != lexer.Comment {
			toks = append(toks, t)
		}
		if len(toks) == 8 {
			break
		}
	}
	word := func(j int) string { return lexer.Word(text, toks, j) }
	if word(0) == "ALTER" {
		return kind.PartitionMaintenance(text, toks)
	}
	kind, j := kind.Maintenance(word(0)), 1
	if (word(0) == "REPAIR" || word(0) == "ANALYZE" || word(0) == "OPTIMIZE") && (word(j) == "NO_WRITE_TO_BINLOG" || word(j) == "LOCAL") {
		j++
	}
	if kind == "" || word(j) != "TABLE" && word(j) != "TABLES" {
		return ""
	}
	return kind
}
