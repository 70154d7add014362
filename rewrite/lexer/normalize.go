package lexer

import (
	"fmt"
	"strconv"

	"github.com/sqlfork/sqlfork-proxy/rewrite/charset"
	"github.com/sqlfork/sqlfork-proxy/rewrite/dialect"
)

// Normalized is a text as the server reads it (see Normalize).
type Normalized struct {
	Text string
	// Altered are the offsets of bytes replaced inside string literals
	// (trail bytes of multi-byte characters): the text's literal values
	// differ from the client's there.
	Altered []int
	// Literals are the [start, end) spans of the string literals and
	// quoted identifiers, from the opening quote to after the closing one,
	// in order: what every other reader of text must find too.
	Literals [][2]int32
}

// AlteredIn reports whether a replaced byte lies in [start, end).
func (n *Normalized) AlteredIn(start, end int) bool {
	for _, p := range n.Altered {
		if p >= start && p < end {
			return true
		}
	}
	return false
}

// Comment states of the server's lexer (Lex_input_stream::in_comment).
const (
	noComment      = iota
	discardComment // inside an executed /*! … */: its */ ends it
	preserveComment
)

// scanner follows MariaDB's lexer (sql/sql_lex.cc, lex_one_token) just far
// enough to know which bytes are code, string, quoted identifier or
// comment. It copies the text lazily: most statements need no change.
type scanner struct {
	src      string
	out      []byte // nil until a byte changes
	altered  []int
	literals [][2]int32
	cs       *charset.Info
	lo       Options
	server   dialect.Server
	// inComment is the lexer's in_comment: whether a */ closes an
	// executable comment.
	inComment int
	// err is set by blank when it cannot blank without changing how the
	// text reads.
	err *Unreadable
}

// Unreadable is a text the scanner cannot be sure how the server reads:
// what it found there, and where.
type Unreadable struct {
	At   int
	What string
}

// Normalize returns sql, sent in the character set cs, as server reads
// it under o (see rewrite.Normalize): the same length, with what the
// server skips blanked and what other readers would misread replaced.
// An Unreadable says where the proxy cannot be sure how the server reads
// sql.
func Normalize(sql string, cs *charset.Info, lo Options, server dialect.Server) (*Normalized, *Unreadable) {
	s := &scanner{src: sql, cs: cs, lo: lo, server: server}
	if err := s.run(); err != nil {
		return nil, err
	}
	if s.out == nil {
		return &Normalized{Text: sql, Literals: s.literals}, nil
	}
	return &Normalized{Text: string(s.out), Altered: s.altered, Literals: s.literals}, nil
}

// set replaces the byte at i in the output.
func (s *scanner) set(i int, c byte) {
	if s.out == nil {
		if s.src[i] == c {
			return
		}
		s.out = []byte(s.src)
	}
	s.out[i] = c
}

// blank turns src[i:j] into spaces (line breaks kept, for error positions).
// Right after "--", spaces would make a comment of what the server reads
// as two minus signs and code: the text is refused then.
func (s *scanner) blank(i, j int) {
	if i >= 2 && i < j && s.src[i-1] == '-' && s.src[i-2] == '-' && s.err == nil {
		s.err = s.fail(i, "a comment right after \"--\" (the server reads two minus signs there)")
	}
	for ; i < j; i++ {
		if c := s.src[i]; c != '\n' {
			s.set(i, ' ')
		}
	}
}

// fail is the text unreadable at byte at, for the reason format says.
func (s *scanner) fail(at int, format string, args ...any) *Unreadable {
	return &Unreadable{At: at, What: fmt.Sprintf(format, args...)}
}

// isDigit reports the ASCII digits.
func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isASCIIIdent reports bytes MariaDB's ident_map holds in every character
// set: letters, digits, '_' and '$'.
func isASCIIIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '$'
}

// run scans the whole text, blanking and replacing bytes as it goes; a
// refusal says what the proxy cannot read for sure.
func (s *scanner) run() *Unreadable {
	src, n := s.src, len(s.src)
	// The server drops trailing semicolons and white space before it
	// lexes (alloc_query), so "--" right before them ends the text.
	end := n
	for end > 0 && (src[end-1] == ';' || s.cs.Space.Has(src[end-1])) {
		end--
	}
	for i := 0; i < n; {
		c := src[i]
		if s.cs.Space.Has(c) {
			if c >= 0x80 {
				s.set(i, ' ') // white space to the server, a letter to other readers
			}
			i++
			continue
		}
		j, err := s.step(i, end)
		if err != nil {
			return err
		}
		i = j
	}
	if s.inComment != noComment {
		return s.fail(n, "an executable comment is not closed")
	}
	if s.out != nil && s.err == nil {
		// Blanking must not move the end the server finds: in "1--;#x"
		// the ';' is not last, so "--" is two minus signs, but with the
		// comment blanked the "--" would come right before the trailing
		// ';', where it starts a comment.
		e := n
		for e > 0 && (s.out[e-1] == ';' || s.cs.Space.Has(s.out[e-1])) {
			e--
		}
		if e < end && e >= 2 && s.out[e-2] == '-' && s.out[e-1] == '-' {
			return s.fail(e-2, "\"--\" before a final ';' and a comment (two minus signs to the server, a comment to other readers)")
		}
	}
	return s.err
}

// step reads what starts at src[i], no white space (end is where the
// server's text ends, before trailing semicolons and white space), and
// returns where it ends.
func (s *scanner) step(i, end int) (int, *Unreadable) {
	src, n := s.src, len(s.src)
	switch c := src[i]; {
	case c == 0 && i == n-1:
		s.set(i, ' ') // the server stops at a last NUL byte
		return i + 1, nil
	case c == 0:
		return 0, s.fail(i, "a NUL byte outside a string ends what the server reads")
	case c == '-' && i+2 < end && src[i+1] == '-' && (src[i+2] == 0x85 || src[i+2] == 0xA0) && !s.cs.DashEnd.Has(src[i+2]):
		// Not a comment to the server, but other readers take the byte
		// for white space and read "--" as one.
		return 0, s.fail(i, "\"--\" followed by a byte some readers take for white space")
	case c == '#':
		return s.lineComment(i), nil
	case c == '-' && i+1 < n && src[i+1] == '-' && (i+2 >= end || s.cs.DashEnd.Has(src[i+2])):
		return s.lineComment(i), nil
	case c == '/' && i+1 < n && src[i+1] == '*':
		return s.longComment(i)
	case c == '*' && i+1 < n && src[i+1] == '/' && s.inComment != noComment:
		s.blank(i, i+2)
		s.inComment = noComment
		return i + 2, nil
	case c == ';':
		// The server parses each statement of a multi-statement input
		// with a fresh lexer: an executable comment does not span them.
		s.inComment = noComment
		return i + 1, nil
	case c == '\'' || c == '"' && !s.lo.ANSIQuotes:
		return s.text(i+1, c)
	case c == '`' || c == '"' && s.lo.ANSIQuotes:
		return s.quotedIdent(i+1, c)
	case (c == 'x' || c == 'X' || c == 'b' || c == 'B') && i+1 < n && src[i+1] == '\'':
		return s.numericString(i, c)
	case (c == 'n' || c == 'N') && i+1 < n && src[i+1] == '\'':
		return s.text(i+2, '\'')
	case c == '@':
		// @var, @@var, 'user'@'host': what follows is read as a
		// host name without regard to multi-byte characters.
		i++
		if i < n && src[i] == '@' {
			i++
		}
		if i < n && src[i] >= 0x80 && s.cs.ASCIITrail() {
			return 0, s.fail(i, "a %s character right after @", s.cs.Name)
		}
		return i, nil
	case isASCIIIdent(c) || c >= 0x80:
		return s.word(i)
	}
	return i + 1, nil
}

// lineComment blanks a # or -- comment starting at i and returns where it
// ends: at the line break, or at a NUL byte, which the server stops at too.
func (s *scanner) lineComment(i int) int {
	j := i
	for j < len(s.src) && s.src[j] != '\n' && s.src[j] != 0 {
		j++
	}
	s.blank(i, j)
	return j
}

// longComment handles "/*" at i: a comment (blanked), or an executable
// comment whose markers are blanked and whose contents are code.
func (s *scanner) longComment(i int) (int, *Unreadable) {
	src, n := s.src, len(s.src)
	exec := i+2 < n && src[i+2] == '!'
	maria := i+3 < n && src[i+2] == 'M' && src[i+3] == '!'
	if maria && s.server.Flavor == dialect.MySQL && s.server.Version > 0 {
		maria = false // MySQL reads /*M! as a plain comment
	}
	saved := s.inComment
	if !exec && !maria {
		end, ok := consumeComment(src, i+2, false)
		if !ok {
			return 0, s.fail(i, "a comment is not closed")
		}
		s.blank(i, end)
		s.inComment = saved
		return end, nil
	}
	j := i + 3
	if maria {
		j++
	}
	if maria && (s.server.Version == 0 || s.server.Flavor != dialect.MariaDB) {
		return 0, s.fail(i, "only MariaDB runs /*M! comments, and the server is not known to be MariaDB")
	}
	digits := 0
	for digits < 6 && j+digits < n && isDigit(src[j+digits]) {
		digits++
	}
	if digits < 5 {
		// Not a version comment: the contents, digits too, are code.
		s.blank(i, j)
		s.inComment = discardComment
		return j, nil
	}
	version, _ := strconv.Atoi(src[j : j+digits])
	run, err := s.executes(version, digits == 6, maria, i)
	if err != nil {
		return 0, err
	}
	if run {
		s.blank(i, j+digits)
		s.inComment = discardComment
		return j + digits, nil
	}
	end, ok := consumeComment(src, j, true)
	if !ok {
		return 0, s.fail(i, "a version comment is not closed")
	}
	s.blank(i, end)
	s.inComment = saved
	return end, nil
}

// executes decides whether the server runs a version comment.
func (s *scanner) executes(version int, sixDigits, maria bool, at int) (bool, *Unreadable) {
	srv := s.server
	switch {
	case srv.Version > 0 && srv.Flavor == dialect.MariaDB:
		// MariaDB skips MySQL 5.7+ versions (50700-99999) unless /*M!.
		return version <= srv.Version && (version < 50700 || version > 99999 || maria), nil
	case srv.Version > 0 && srv.Flavor == dialect.MySQL && !sixDigits:
		return version <= srv.Version, nil
	case !maria && !sixDigits && version < 50700:
		return true, nil // every server the proxy may face runs these
	}
	return false, s.fail(at, "the server version decides whether the comment %s is code", s.src[at:min(len(s.src), at+10)])
}

// consumeComment finds the end of a comment whose contents start at i (the
// server's consume_comment): after the first "*/", or, when nested is set
// (a version comment the server skips), one level of /* */ may nest inside.
// ok is false when the comment is not closed.
func consumeComment(src string, i int, nested bool) (int, bool) {
	for i < len(src) {
		c := src[i]
		i++
		if nested && c == '/' && i < len(src) && src[i] == '*' {
			end, ok := consumeComment(src, i+1, false)
			if !ok {
				return 0, false
			}
			i = end
			continue
		}
		if c == '*' && i < len(src) && src[i] == '/' {
			return i + 1, true
		}
	}
	return 0, false
}

// text scans a string literal whose contents start at i and returns the
// offset after its closing quote q (the server's get_text): a multi-byte
// character is taken whole, a backslash takes the next byte, a doubled
// quote stands for one. Bytes below 0x80 inside multi-byte characters are
// replaced, so that no other reader takes them for quotes or backslashes.
func (s *scanner) text(i int, q byte) (int, *Unreadable) {
	src, n := s.src, len(s.src)
	start := i - 1
	mb := s.cs.ASCIITrail()
	backslash := !s.lo.NoBackslashEscapes
	for i < n {
		c := src[i]
		if mb && c >= 0x80 {
			if l := s.cs.CharLen(src[i:]); l > 1 {
				for k := i + 1; k < i+l; k++ {
					if src[k] < 0x80 {
						s.set(k, 'x')
						s.altered = append(s.altered, k)
					}
				}
				i += l
				continue
			}
		}
		i++
		switch {
		case c == '\\' && backslash:
			if i >= n {
				return 0, s.fail(start, "a string literal is not closed")
			}
			i++ // one byte, whatever it is
		case c == q:
			var end bool
			if i, end = s.closingQuote(start, i, q); end {
				return i, nil
			}
		}
	}
	return 0, s.fail(start, "a string literal is not closed")
}

// closingQuote reads the quote q before src[i] in a string literal or a
// quoted identifier that starts at start: doubled, it stands for one and
// the scan goes on at the offset returned; alone, it closes the literal,
// whose span is recorded, at i (end set).
func (s *scanner) closingQuote(start, i int, q byte) (next int, end bool) {
	if i < len(s.src) && s.src[i] == q {
		return i + 1, false
	}
	s.literals = append(s.literals, [2]int32{int32(start), int32(i)})
	return i, true
}

// quotedIdent scans a `quoted` identifier (or "quoted" under ANSI_QUOTES)
// whose contents start at i (the server's scan_ident_delimited). A
// backslash in it is an ordinary character; the TiDB parser, which reads
// "quoted" names as strings, would take it for an escape, so it is
// replaced there (and the name marked as changed).
func (s *scanner) quotedIdent(i int, q byte) (int, *Unreadable) {
	src, n := s.src, len(s.src)
	start := i - 1
	mb := s.cs.ASCIITrail()
	for i < n {
		c := src[i]
		if c == 0 {
			break
		}
		if c == '\\' && q == '"' && !s.lo.NoBackslashEscapes {
			// '0': no character set takes it for the trail of a
			// multi-byte character, so the text reads the same again.
			s.set(i, '0')
			s.altered = append(s.altered, i)
		}
		if mb && c >= 0x80 {
			if l := s.cs.CharLen(src[i:]); l > 1 {
				for k := i + 1; k < i+l; k++ {
					if b := src[k]; b == q || b == '\\' && q == '"' {
						return 0, s.fail(i, "a quoted identifier holds a %s character whose second byte is %q", s.cs.Name, b)
					}
				}
				i += l
				continue
			}
		}
		i++
		if c == q {
			var end bool
			if i, end = s.closingQuote(start, i, q); end {
				return i, nil
			}
		}
	}
	return 0, s.fail(start, "a quoted identifier is not closed")
}

// numericString scans x'…' or b'…' at i: only hex or binary digits may
// come before the closing quote, else the server reports a syntax error.
func (s *scanner) numericString(i int, c byte) (int, *Unreadable) {
	hex := c == 'x' || c == 'X'
	j := i + 2
	for j < len(s.src) {
		d := s.src[j]
		if hex && (isDigit(d) || d >= 'a' && d <= 'f' || d >= 'A' && d <= 'F') || !hex && (d == '0' || d == '1') {
			j++
			continue
		}
		break
	}
	if j >= len(s.src) || s.src[j] != '\'' {
		return 0, s.fail(i, "a %c'…' literal holds something other than digits", c)
	}
	s.literals = append(s.literals, [2]int32{int32(i + 1), int32(j + 1)})
	return j + 1, nil
}

// word scans an unquoted identifier, keyword or number starting at i. In
// character sets whose multi-byte characters can end in an ASCII byte,
// such a character must end in a byte every reader takes for part of a
// name; otherwise the server and other readers split the text differently.
func (s *scanner) word(i int) (int, *Unreadable) {
	src, n := s.src, len(s.src)
	mb := s.cs.ASCIITrail()
	for i < n {
		c := src[i]
		switch {
		case c >= 0x80:
			if s.cs.Space.Has(c) {
				return i, nil
			}
			if mb {
				l := s.cs.CharLen(src[i:])
				if l < 1 {
					return 0, s.fail(i, "a broken %s character", s.cs.Name)
				}
				for k := i + 1; k < i+l; k++ {
					if !isASCIIIdent(src[k]) && src[k] < 0x80 {
						return 0, s.fail(i, "a name holds a %s character one of whose bytes looks like ASCII punctuation", s.cs.Name)
					}
				}
				i += l
				continue
			}
			i++
		case isASCIIIdent(c):
			i++
		default:
			return i, nil
		}
	}
	return i, nil
}

// Agrees reports whether the proxy's lexer, reading the normalized text
// under lo, finds exactly the string literals and quoted identifiers the
// scanner found (and no comment, since the scanner blanked them all). Two
// readers that split a text differently would let a statement mean one
// thing to the proxy and another to the server; where they differ, the
// offset of the first difference is returned and the text is refused.
func (n *Normalized) Agrees(lo Options) (int, bool) {
	return n.AgreesWith(Lex(n.Text, lo))
}

// AgreesWith is Agrees on toks, the lexer's tokens of n.text.
func (n *Normalized) AgreesWith(toks []Token) (int, bool) {
	text, k := n.Text, 0
	for _, t := range toks {
		switch t.Kind {
		case Comment:
			return int(t.Start), false
		case String, Quoted, Variable:
			q := t.Start
			for q < t.End && text[q] != '\'' && text[q] != '"' && text[q] != '`' {
				q++
			}
			if q == t.End {
				continue // @name, @@name or ?
			}
			if k >= len(n.Literals) || n.Literals[k] != [2]int32{q, t.End} {
				return int(q), false
			}
			k++
		}
	}
	if k < len(n.Literals) {
		return int(n.Literals[k][0]), false
	}
	return 0, true
}
