package rewrite

import (
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/rewrite/splice"
)

// ROW_COUNT() and FOUND_ROWS() of the statement before. When the proxy ran
// a statement of its own on the session's connection after the client's
// last one (a read of a fork's last insert id, session/insertid.go), the
// server's ROW_COUNT() and FOUND_ROWS() are that statement's. A resolver
// that knows the values the client's statement left (CountsResolver) gets
// each call of them in the input's first statement sent as that value, of
// the server's type for them (BIGINT(21) NOT NULL): that statement reads
// them before any other of the input ran. Statements that define a view,
// a routine, a trigger or an event, and compound statements, keep theirs:
// they read them later, after other statements.

// CountsResolver is a Resolver that knows what FOUND_ROWS() and, when
// rowCountKnown, ROW_COUNT() give the input's first statement (ok), when
// the server no longer does.
type CountsResolver interface {
	Resolver
	PreviousCounts() (rowCount int64, rowCountKnown bool, foundRows int64, ok bool)
}

// countsReps send the calls of ROW_COUNT() and FOUND_ROWS() of the input's
// first statement as the values r knows (none when r knows none).
func (a *Analysis) countsReps(r Resolver) []splice.Replacement {
	cr, ok := r.(CountsResolver)
	if !ok || len(a.Statements) == 0 || keepsCounts(a.Statements[0].Kind) {
		return nil
	}
	rowCount, rowCountKnown, foundRows, ok := cr.PreviousCounts()
	if !ok {
		return nil
	}
	var reps []splice.Replacement
	toks := lexer.Lex(a.text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	for _, c := range a.callSites() {
		var text string
		switch {
		case c.stmt != 0 || c.f.Schema != "":
			continue
		case strings.EqualFold(c.f.Name, "ROW_COUNT") && rowCountKnown:
			text = "GREATEST(" + strconv.FormatInt(rowCount, 10) + ", " + minBigint + ")"
		case strings.EqualFold(c.f.Name, "FOUND_ROWS"):
			text = "GREATEST(" + minBigint + ", " + strconv.FormatInt(foundRows, 10) + ")"
		default:
			continue
		}
		if end, ok := emptyArgs(a.text, toks, c.end); ok {
			reps = append(reps, splice.Replacement{Start: c.start, End: end, Text: text})
		}
	}
	return reps
}

// emptyArgs is the end of "()" right after the name ending at end, when
// the call has no argument.
func emptyArgs(text string, toks []lexer.Token, end int) (int, bool) {
	for i, t := range toks {
		if int(t.Start) < end {
			continue
		}
		if lexer.PunctAt(text, toks, i, '(') && lexer.PunctAt(text, toks, i+1, ')') {
			return int(toks[i+1].End), true
		}
		return 0, false
	}
	return 0, false
}

// minBigint is the least BIGINT: GREATEST of it and a value is the value
// in ROW_COUNT()'s type, BIGINT, 21 characters wide, NOT NULL (a plain
// literal is an INT as wide as its digits). The two calls write it on
// either side, so that their texts, which label their columns, differ.
const minBigint = "-9223372036854775807 - 1"

// keepsCounts reports the statements whose calls of ROW_COUNT() and
// FOUND_ROWS() run later than the statement: definitions, whose bodies run
// later, and compound statements, whose statements run in turn.
func keepsCounts(k Kind) bool {
	switch k {
	case KindCreateView, KindAlterView, KindCreateProcedure, KindCreateFunction, KindCreateTrigger, KindCompound:
		return true
	}
	return strings.Contains(string(k), "EVENT")
}
