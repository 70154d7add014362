package rewrite

// Maintenance names the table maintenance statement the input's i-th
// statement is — "CHECK TABLE", "CHECKSUM TABLE", "ANALYZE TABLE",
// "OPTIMIZE TABLE" or "REPAIR TABLE" — whichever reader read it (the
// parser's leaves its kind empty); "" for any other statement.
func (a *Analysis) Maintenance(i int) string {
	if i < 0 || i >= len(a.Statements) || i >= len(a.stmtStarts) || a.stmtStarts[i] > len(a.text) {
		return ""
	}
	if k := a.Statements[i].Kind; k != "" {
		if tableMaintenance[firstWord(k)] == k {
			return k
		}
		return ""
	}
	text := a.text[a.stmtStarts[i]:]
	var toks []token
	for _, t := range lex(text, lexOptions{ansiQuotes: a.opts.ANSIQuotes, noBackslashEscapes: a.opts.NoBackslashEscapes}) {
		if t.kind != tokComment {
			toks = append(toks, t)
		}
		if len(toks) == 3 {
			break
		}
	}
	word := func(j int) string { return tokWord(text, toks, j) }
	kind, j := tableMaintenance[word(0)], 1
	if (word(0) == "REPAIR" || word(0) == "ANALYZE" || word(0) == "OPTIMIZE") && (word(j) == "NO_WRITE_TO_BINLOG" || word(j) == "LOCAL") {
		j++
	}
	if kind == "" || word(j) != "TABLE" && word(j) != "TABLES" {
		return ""
	}
	return kind
}

// firstWord is s up to its first space.
func firstWord(s string) string {
	for i := range len(s) {
		if s[i] == ' ' {
			return s[:i]
		}
	}
	return s
}
