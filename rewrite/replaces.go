package rewrite

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
)

// replacesRestored gives the REPLACE statements recovery read as INSERT
// (recovery.Masked.Replaces, the offsets of their first word in text, the
// masked text) their REPLACE back. It reports false, and the text is then
// refused as the parser's, when one of them is not a statement of stmts
// (one in a routine's body), or no INSERT REPLACE's grammar allows (IGNORE,
// ON DUPLICATE KEY UPDATE or a row alias, which REPLACE does not take):
// the reading would not be the statement sent.
func replacesRestored(text string, stmts []ast.StmtNode, at []int) bool {
	if len(at) == 0 {
		return true
	}
	cursor, found := 0, 0
	for _, s := range stmts {
		st := strings.TrimSpace(s.Text())
		i := strings.Index(text[cursor:], st)
		if st == "" || i < 0 {
			return false
		}
		start := cursor + i
		cursor = start + len(st)
		if !slices.Contains(at, start) {
			continue
		}
		x, ok := s.(*ast.InsertStmt)
		if !ok || x.IsReplace || x.IgnoreErr || len(x.OnDuplicate) > 0 || x.RowAlias.O != "" || len(x.ColumnAliases) > 0 {
			return false
		}
		x.IsReplace = true
		found++
	}
	return found == len(at)
}
