package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// SETVAL(sequence, n, is_used[, round]). MariaDB's SETVAL takes up to
// four arguments; the parser takes the first two. The sequence, the one
// name, stays where it is (the proxy takes SETVAL for a change of it, and
// forks it); is_used and round, literals, are blanked.

// setvalArgs: SETVAL(name[.name], number, literal[, literal]), the
// literals numbers, TRUE or FALSE.
func (r *recovery) setvalArgs(i int) (int, bool) {
	if r.word(i) != "SETVAL" || !r.punct(i+1, '(') || r.punct(i-1, '.') || i+2 >= len(r.toks) ||
		r.toks[i+2].Kind != lexer.Ident && r.toks[i+2].Kind != lexer.Quoted {
		return i, false
	}
	j := i + 3
	if r.punct(j, '.') {
		if !r.nameAt(j + 1) {
			return i, false
		}
		j += 2
	}
	if !r.punct(j, ',') {
		return i, false
	}
	j++
	if r.punct(j, '-') {
		j++
	}
	if j >= len(r.toks) || r.toks[j].Kind != lexer.Number || !r.punct(j+1, ',') {
		return i, false
	}
	from := j + 1
	k := from
	for r.punct(k, ',') && k-from < 4 && k+1 < len(r.toks) &&
		(r.toks[k+1].Kind == lexer.Number || r.word(k+1) == "TRUE" || r.word(k+1) == "FALSE") {
		k += 2
	}
	if k == from || !r.punct(k, ')') {
		return i, false
	}
	r.span(from, k-1)
	return k, true
}
