package collect

import (
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

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

// NextTransaction is what SET TRANSACTION … gives the next transaction
// (nil for other statements).
func NextTransaction(s ast.StmtNode) *TxChars {
	x, ok := s.(*ast.SetStmt)
	if !ok || !OneShot(x) {
		return nil
	}
	ch := &TxChars{}
	for _, v := range x.Variables {
		switch v.Name {
		case "tx_isolation_one_shot":
			ch.Isolation = strings.ReplaceAll(strings.ToUpper(ExprText(v.Value)), "-", " ")
		case "tx_read_only":
			ch.Access = "READ WRITE"
			if ExprText(v.Value) == "1" {
				ch.Access = "READ ONLY"
			}
		}
	}
	return ch
}

// TransactionStart reads what a BEGIN / START TRANSACTION text starts its
// transaction with (the parser tells neither READ WRITE nor WITH
// CONSISTENT SNAPSHOT, and does not read every form MariaDB does, such as
// START TRANSACTION READ ONLY, WITH CONSISTENT SNAPSHOT).
func TransactionStart(text string, lo lexer.Options) *TxChars {
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
