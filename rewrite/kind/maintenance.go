package kind

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// PartitionMaintenance names ALTER [ONLINE] [IGNORE] TABLE t ANALYZE |
// CHECK | OPTIMIZE | REPAIR PARTITION (toks, the statement's first
// tokens): "ANALYZE PARTITION" …, or "".
func PartitionMaintenance(text string, toks []lexer.Token) Kind {
	word := func(j int) string { return lexer.Word(text, toks, j) }
	j := 1
	for word(j) == "ONLINE" || word(j) == "IGNORE" {
		j++
	}
	if word(j) != "TABLE" {
		return ""
	}
	j += 2 // the table's name: t or db.t
	if lexer.PunctAt(text, toks, j, '.') {
		j += 2
	}
	switch op := word(j); {
	case (op == "ANALYZE" || op == "CHECK" || op == "OPTIMIZE" || op == "REPAIR") && word(j+1) == "PARTITION":
		return Kind(op + " PARTITION")
	}
	return ""
}

// FirstWord is s up to its first space.
func FirstWord(s string) string {
	for i := range len(s) {
		if s[i] == ' ' {
			return s[:i]
		}
	}
	return s
}

// tableMaintenance are the statements of table maintenance, by first word.
var tableMaintenance = map[string]Kind{
	"CHECK": CheckTable, "CHECKSUM": ChecksumTable, "REPAIR": RepairTable, "ANALYZE": AnalyzeTable,
	"OPTIMIZE": OptimizeTable,
}

// Maintenance is the kind of table maintenance statement whose first
// word is w, "" for none.
func Maintenance(w string) Kind { return tableMaintenance[w] }
