package kind

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// ShowsNoTable reports whether toks are one of MariaDB's SHOW statements
// the parser does not read that name no table: SHOW AUTHORS |
// CONTRIBUTORS | STORAGE ENGINES | SLAVE HOSTS | BINARY LOGS | MASTER
// LOGS, and SHOW CLIENT_STATISTICS | USER_STATISTICS | INDEX_STATISTICS
// | TABLE_STATISTICS, which show an information_schema table
// (StatisticsTable).
func ShowsNoTable(text string, toks []lexer.Token) bool {
	word := func(i int) string { return lexer.Word(text, toks, i) }
	switch w1, w2 := word(1), word(2); {
	case len(toks) == 2:
		return w1 == "AUTHORS" || w1 == "CONTRIBUTORS" || StatisticsTable(text, toks) != ""
	case len(toks) == 3:
		return w1 == "STORAGE" && w2 == "ENGINES" || w1 == "SLAVE" && w2 == "HOSTS" || (w1 == "BINARY" || w1 == "MASTER") && w2 == "LOGS"
	}
	return false
}

// StatisticsTable is the information_schema table (upper case) SHOW
// CLIENT_STATISTICS | USER_STATISTICS | INDEX_STATISTICS |
// TABLE_STATISTICS shows, "" for any other statement: the server's
// statistics of every user, client, table and index.
func StatisticsTable(text string, toks []lexer.Token) string {
	if len(toks) != 2 || lexer.Word(text, toks, 0) != "SHOW" {
		return ""
	}
	switch w := lexer.Word(text, toks, 1); w {
	case "CLIENT_STATISTICS", "USER_STATISTICS", "INDEX_STATISTICS", "TABLE_STATISTICS":
		return w
	}
	return ""
}
