package rewrite

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// showsServer are the words after SHOW (and FULL, GLOBAL, SESSION, ALL)
// whose statements show what the whole server holds, every connection's
// and database's: other connections' statements and plans, the binary
// log, the table cache, the engines' internal state and the statistics of
// every table, index, user and client.
var showsServer = map[string]bool{
	"PROCESSLIST": true, "ENGINE": true, "EXPLAIN": true, "ANALYZE": true, "OPEN": true, "BINLOG": true,
	"RELAYLOG": true, "TABLE_STATISTICS": true, "INDEX_STATISTICS": true, "USER_STATISTICS": true,
	"CLIENT_STATISTICS": true, "QUERY_RESPONSE_TIME": true,
}

// ServerWide says why the input holds a statement that shows what the
// whole server holds ("" when it holds none), read from its words so that
// forms the parser does not know are found too: SHOW PROCESSLIST, SHOW
// ENGINE …, SHOW EXPLAIN / ANALYZE FOR, EXPLAIN / ANALYZE … FOR CONNECTION,
// SHOW OPEN TABLES, SHOW BINLOG / RELAYLOG EVENTS, SHOW *_STATISTICS.
// A word spelled like one of these elsewhere (a bare column named
// processlist after SHOW) is refused too: it fails closed.
func (a *Analysis) ServerWide() string {
	text := a.text
	if text == "" {
		text = a.src
	}
	toks := lexer.Lex(text, lexer.Options{ANSIQuotes: a.opts.ANSIQuotes, NoBackslashEscapes: a.opts.NoBackslashEscapes})
	word := func(i int) string {
		if i < len(toks) && toks[i].Kind == lexer.Ident {
			return strings.ToUpper(text[toks[i].Start:toks[i].End])
		}
		return ""
	}
	for i := range toks {
		switch word(i) {
		case "SHOW":
			j := i + 1
			for word(j) == "FULL" || word(j) == "GLOBAL" || word(j) == "SESSION" || word(j) == "ALL" {
				j++
			}
			if w := word(j); showsServer[w] {
				return "SHOW " + w + " shows what the whole server holds, every connection's statements and every " +
					"sandbox's tables included"
			}
		case "FOR":
			if word(i+1) == "CONNECTION" {
				return "EXPLAIN … FOR CONNECTION shows another connection's statement"
			}
		}
	}
	return ""
}
