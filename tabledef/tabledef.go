package tabledef

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// A CREATE TABLE text as the server writes it (SHOW CREATE TABLE on a side
// connection, whose sql_mode has no ANSI_QUOTES, NO_BACKSLASH_ESCAPES or
// NO_*_OPTIONS), read whole as a statement: its definitions are the
// comma-separated parts of its parenthesised body at depth 0, found by
// reading back-quoted names and quoted strings as the server does, never by
// lines (a name or comment may hold a line end, a comma or a parenthesis).
// Each definition is kept as the server's own text: taken whole into an
// ALTER TABLE, it says exactly what the server wrote.

// Def is a CREATE TABLE text read into its definitions, its table
// options and its partitioning.
type Def struct {
	Items     []Item
	Options   string // the table options, AUTO_INCREMENT left out
	Partition string // PARTITION BY …, "" when there is none
}

// Item is one definition of the body: a column, a key or a constraint,
// with the server's text of it.
type Item struct {
	Kind ItemKind
	Name string
	Text string
}

// ItemKind is what a definition defines.
type ItemKind string

// Kinds of definitions.
const (
	Column  ItemKind = "column"
	Primary ItemKind = "primary"
	Index   ItemKind = "index"
	Foreign ItemKind = "foreign"
	Check   ItemKind = "check"
)

var autoIncOption = regexp.MustCompile(`(^| )AUTO_INCREMENT=\d+`)

// Parse reads text, SHOW CREATE TABLE's statement.
func Parse(text string) (Def, error) {
	var td Def
	open, err := bodyStart(text)
	if err != nil {
		return td, err
	}
	parts, end, err := splitDepth0(text, open+1)
	if err != nil {
		return td, err
	}
	for _, p := range parts {
		it, err := readItem(strings.TrimSpace(p))
		if err != nil {
			return td, err
		}
		// The server never writes a name twice: a text that does is not
		// its, and which of the two an ALTER would mean is unknown.
		if _, dup := td.Find(it.Kind, it.Name); dup {
			return td, fmt.Errorf("%s %s defined twice in %.60q", it.Kind, quote.Ident(it.Name), text)
		}
		td.Items = append(td.Items, it)
	}
	td.Options, td.Partition = splitOptions(strings.TrimSpace(text[end+1:]))
	td.Options = strings.TrimSpace(autoIncOption.ReplaceAllString(td.Options, ""))
	return td, nil
}

// bodyStart is the offset of the parenthesis that opens the body, after
// CREATE TABLE and the table's back-quoted name.
func bodyStart(text string) (int, error) {
	rest, ok := strings.CutPrefix(text, "CREATE TABLE `")
	if !ok {
		return 0, fmt.Errorf("not a CREATE TABLE text: %.40q", text)
	}
	n, ok := identEnd(rest)
	if !ok {
		return 0, fmt.Errorf("unterminated table name in %.40q", text)
	}
	i := len(text) - len(rest) + n
	for i < len(text) && text[i] == ' ' {
		i++
	}
	if i >= len(text) || text[i] != '(' {
		return 0, fmt.Errorf("no definitions in %.60q", text)
	}
	return i, nil
}

// identEnd is the offset just past the backquote closing the name s starts
// inside (its opening backquote read already).
func identEnd(s string) (int, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			if i+1 < len(s) && s[i+1] == '`' {
				i++
				continue
			}
			return i + 1, true
		}
	}
	return 0, false
}

// quotedEnd is the offset just past the quote q closing the string s starts
// inside: a doubled quote or a backslash escape stays inside.
func quotedEnd(s string, q byte) (int, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(s) && s[i+1] == q {
				i++
				continue
			}
			return i + 1, true
		}
	}
	return 0, false
}

// skipQuoted returns the offset after the quoted token at text[i] (a name
// or a string), or i+1 for any other byte.
func skipQuoted(text string, i int) (int, error) {
	var n int
	var ok bool
	switch c := text[i]; c {
	case '`':
		n, ok = identEnd(text[i+1:])
	case '\'', '"':
		n, ok = quotedEnd(text[i+1:], c)
	default:
		return i + 1, nil
	}
	if !ok {
		return 0, fmt.Errorf("unterminated quote at %d of a definition", i)
	}
	return i + 1 + n, nil
}

// splitDepth0 splits text from from (just after the body's opening
// parenthesis) at its commas of depth 0, up to the parenthesis closing the
// body, whose offset is end.
func splitDepth0(text string, from int) (parts []string, end int, err error) {
	depth, start := 0, from
	for i := from; i < len(text); {
		switch text[i] {
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return append(parts, text[start:i]), i, nil
			}
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, text[start:i])
				start = i + 1
			}
		}
		if i, err = skipQuoted(text, i); err != nil {
			return nil, 0, err
		}
	}
	return nil, 0, fmt.Errorf("the definitions are not closed")
}

// ReplaceQualifiers is text, a definition the server wrote, with each
// back-quoted name that qualifies another (is followed by a dot) and that
// dbs maps replaced by its mapping, back-quoted: the names are read as the
// server reads them, so a name or string that merely holds the same bytes
// is left alone (a blind replace could end a string early).
func ReplaceQualifiers(text string, dbs map[string]string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		next, err := skipQuoted(text, i)
		if err != nil {
			b.WriteString(text[i:])
			break
		}
		tok := text[i:next]
		if tok[0] == '`' && next < len(text) && text[next] == '.' {
			if l, ok := dbs[strings.ReplaceAll(tok[1:len(tok)-1], "``", "`")]; ok {
				tok = quote.Ident(l)
			}
		}
		b.WriteString(tok)
		i = next
	}
	return b.String()
}

// readItem classifies one definition by its first words.
func readItem(text string) (Item, error) {
	it := Item{Text: text}
	upper := strings.ToUpper(text)
	// name reads the back-quoted name after the words after, and what
	// follows it.
	name := func(after string) (string, string, error) {
		rest := strings.TrimLeft(text[len(after):], " ")
		if !strings.HasPrefix(rest, "`") {
			return "", rest, nil
		}
		n, ok := identEnd(rest[1:])
		if !ok {
			return "", "", fmt.Errorf("unterminated name in %.60q", text)
		}
		return strings.ReplaceAll(rest[1:n], "``", "`"), rest[n+1:], nil
	}
	var err error
	switch {
	case strings.HasPrefix(text, "`"):
		it.Kind = Column
		it.Name, _, err = name("")
	case strings.HasPrefix(upper, "PRIMARY KEY"):
		it.Kind, it.Name = Primary, "PRIMARY"
	case strings.HasPrefix(upper, "CONSTRAINT "):
		var rest string
		it.Kind = Check
		if it.Name, rest, err = name("CONSTRAINT "); err != nil {
			return it, err
		}
		rest = strings.ToUpper(strings.TrimLeft(rest, " "))
		if strings.HasPrefix(rest, "FOREIGN KEY") {
			it.Kind = Foreign
		} else if !strings.HasPrefix(rest, "CHECK") {
			return it, fmt.Errorf("a constraint the proxy does not read: %.60q", text)
		}
	default:
		for _, k := range []string{"UNIQUE KEY", "FULLTEXT KEY", "SPATIAL KEY", "VECTOR KEY", "KEY"} {
			if strings.HasPrefix(upper, k+" ") {
				it.Kind = Index
				it.Name, _, err = name(k)
				return it, err
			}
		}
		return it, fmt.Errorf("a definition the proxy does not read: %.60q", text)
	}
	return it, err
}

// splitOptions splits the text after the body into the table options and
// the partitioning, which starts at a PARTITION BY of depth 0 outside
// quotes.
func splitOptions(text string) (options, partition string) {
	depth := 0
	for i := 0; i < len(text); {
		switch text[i] {
		case '(':
			depth++
		case ')':
			depth--
		case 'P', 'p':
			if depth == 0 && (i == 0 || text[i-1] == ' ' || text[i-1] == '\n') && strings.HasPrefix(strings.ToUpper(text[i:]), "PARTITION BY ") {
				return strings.TrimSpace(text[:i]), strings.TrimSpace(text[i:])
			}
		}
		next, err := skipQuoted(text, i)
		if err != nil {
			return text, ""
		}
		i = next
	}
	return text, ""
}

// find is the definition of kind named name (names of any case).
func (td Def) Find(kind ItemKind, name string) (Item, bool) {
	for _, l := range td.Items {
		if l.Kind == kind && strings.EqualFold(l.Name, name) {
			return l, true
		}
	}
	return Item{}, false
}
