package recovery

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// A collation the parser does not know after COLLATE (MariaDB's
// charset-less uca1400_ai_ci, one a server defines in its own Index.xml,
// utf8mb4_test_ci, …): the parser rejects the statement, which names its
// tables the same whatever the collation. The name is read as a collation
// the parser knows, of the same character set when the name starts with
// one (<charset>_bin), else binary, padded with blanks to the same length;
// a name too short for either is left as it is. The server itself says
// whether it has the collation (1273 when it does not). Not in a SET
// statement (SET NAMES … COLLATE, SET collation_connection), which changes
// how the server reads the texts after it.

// unknownCollation: toks[i] is a collation's name after COLLATE (or
// COLLATE =) the parser does not know.
func (r *recovery) unknownCollation(i int) (int, bool) {
	t := r.toks[i]
	if r.w.Collation == nil || r.word(r.first) == "SET" || t.Kind != lexer.Ident && t.Kind != lexer.Quoted && t.Kind != lexer.String ||
		!(r.word(i-1) == "COLLATE" || r.punct(i-1, '=') && r.word(i-2) == "COLLATE") || r.word(i) == "DEFAULT" || r.blanked(i) {
		return i, false
	}
	name := strings.ToLower(lexer.IdentText(r.text, t))
	if t.Kind == lexer.String {
		name = strings.ToLower(lexer.Unquote(r.text[t.Start:t.End], true))
	}
	if r.w.Collation(name) {
		return i, false
	}
	known := "binary"
	if cs, _, ok := strings.Cut(name, "_"); ok && r.w.Collation(cs+"_bin") {
		known = cs + "_bin"
	}
	if len(known) > int(t.End-t.Start) {
		return i, false
	}
	r.putWord(i, known)
	return i, true
}
