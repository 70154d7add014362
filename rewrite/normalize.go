package rewrite

import (
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Normalize returns sql as the server will read it, for the proxy's own
// lexer and parser: the same length, with every byte the server skips
// (comments, version comments it does not execute) and the markers of the
// executable comments it does execute turned into spaces, and bytes of
// multi-byte characters that would look like quotes or backslashes to a
// reader unaware of the character set replaced. An error (a *Refusal) says
// the proxy cannot be sure how the server reads sql.
func Normalize(sql string, opts Options) (string, error) {
	n, err := normalize(sql, opts)
	if err != nil {
		return "", err
	}
	return n.Text, nil
}

// normalize is Normalize keeping what the normalizer found: the text,
// the bytes it replaced and the literals.
func normalize(sql string, opts Options) (*lexer.Normalized, *Refusal) {
	name := opts.Charset
	if name == "" {
		name = "utf8mb4"
	}
	cs, ok := lookupCharset(name)
	if !ok {
		// Every client character set reads ASCII as ASCII: a text of
		// ASCII bytes only (SET NAMES utf8mb4, say) reads the same in all.
		for i := 0; i < len(sql); i++ {
			if sql[i] >= 0x80 {
				return nil, Refuse(wire.ErUnknown, "the connection's character set %s is one the proxy cannot read "+
					"statements in; use SET NAMES utf8mb4 (or another common character set)", lexer.Quote(name, true))
			}
		}
		cs, _ = lookupCharset("utf8mb4")
	}
	lo := lexer.Options{ANSIQuotes: opts.ANSIQuotes, NoBackslashEscapes: opts.NoBackslashEscapes}
	n, u := lexer.Normalize(sql, cs, lo, opts.Server)
	if u != nil {
		return nil, Refuse(wire.ErUnknown, "%s (at byte %d), so the proxy cannot be sure how the server reads this statement; %s",
			u.What, u.At, "rewrite it without that construct")
	}
	return n, nil
}
