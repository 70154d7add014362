package session

import (
	"context"
	"regexp"
	"slices"
	"strings"
)

// The ALTER TABLE that turns production's table into the sandbox's, from
// the two SHOW CREATE TABLE texts, line by line (a line is a column, a key
// or a constraint; the server writes each the same way for the same
// definition). A column renamed shows as one dropped and one added: the
// export then writes every row of an altered table, so no value is lost.

// defLine is one line of a CREATE TABLE body.
type defLine struct {
	kind string // column, primary, index, foreign, check
	name string
	text string
}

// tableDef is a CREATE TABLE text read into lines and table options.
type tableDef struct {
	lines   []defLine
	options string
}

var autoIncOption = regexp.MustCompile(` AUTO_INCREMENT=\d+`)

// readDef reads a SHOW CREATE TABLE text.
func readDef(text string) tableDef {
	var td tableDef
	open := strings.Index(text, "(\n")
	end := strings.LastIndex(text, "\n)")
	if open < 0 || end < open {
		return td
	}
	td.options = strings.TrimSpace(autoIncOption.ReplaceAllString(text[end+2:], ""))
	for _, l := range strings.Split(text[open+2:end], "\n") {
		l = strings.TrimSuffix(strings.TrimSpace(l), ",")
		dl := defLine{text: l}
		switch {
		case strings.HasPrefix(l, "`"):
			dl.kind, dl.name = "column", firstIdent(l)
		case strings.HasPrefix(l, "PRIMARY KEY"):
			dl.kind, dl.name = "primary", "PRIMARY"
		case strings.HasPrefix(l, "CONSTRAINT "):
			dl.name = firstIdent(strings.TrimPrefix(l, "CONSTRAINT "))
			dl.kind = "check"
			if strings.Contains(l, " FOREIGN KEY ") {
				dl.kind = "foreign"
			}
		default:
			dl.kind = "index"
			if i := strings.Index(l, "`"); i >= 0 {
				dl.name = firstIdent(l[i:])
			}
		}
		td.lines = append(td.lines, dl)
	}
	return td
}

// firstIdent is the back-quoted identifier s starts with.
func firstIdent(s string) string {
	if !strings.HasPrefix(s, "`") {
		return ""
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] == '`' {
			if i+1 < len(s) && s[i+1] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			return b.String()
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func (td tableDef) find(kind, name string) (defLine, bool) {
	for _, l := range td.lines {
		if l.kind == kind && strings.EqualFold(l.name, name) {
			return l, true
		}
	}
	return defLine{}, false
}

// alterSpecs are the ALTER TABLE specifications that turn from into to:
// pre before the rows are written (drops, columns, options), post after
// (keys and constraints, which the rows must meet).
func alterSpecs(from, to tableDef) (pre, post []string) {
	isKey := func(k string) bool { return k == "primary" || k == "index" }
	for _, l := range from.lines {
		n, same := to.find(l.kind, l.name)
		if same && n.text == l.text {
			continue
		}
		switch {
		case l.kind == "foreign":
			pre = append(pre, "DROP FOREIGN KEY IF EXISTS "+quote(l.name))
		case l.kind == "check":
			pre = append(pre, "DROP CONSTRAINT IF EXISTS "+quote(l.name))
		case l.kind == "primary":
			pre = append(pre, "DROP PRIMARY KEY")
		case l.kind == "index":
			pre = append(pre, "DROP INDEX IF EXISTS "+quote(l.name))
		}
	}
	// The columns' order as the ALTER leaves it, to move only those not
	// where the sandbox has them.
	var order []string
	for _, l := range from.lines {
		if _, ok := to.find("column", l.name); l.kind == "column" && ok {
			order = append(order, strings.ToLower(l.name))
		}
	}
	place := func(name, after string) {
		if i := slices.Index(order, name); i >= 0 {
			order = slices.Delete(order, i, i+1)
		}
		i := 0
		if after != "" {
			i = slices.Index(order, after) + 1
		}
		order = slices.Insert(order, i, name)
	}
	prev := ""
	for _, l := range to.lines {
		if l.kind != "column" {
			continue
		}
		where := " FIRST"
		if prev != "" {
			where = " AFTER " + quote(prev)
		}
		name, after := strings.ToLower(l.name), strings.ToLower(prev)
		old, ok := from.find("column", l.name)
		i := slices.Index(order, name)
		moved := i < 0 || i == 0 && after != "" || i > 0 && order[i-1] != after
		switch {
		case !ok:
			pre = append(pre, "ADD COLUMN IF NOT EXISTS "+l.text+where)
		case old.text != l.text || moved:
			pre = append(pre, "MODIFY COLUMN IF EXISTS "+l.text+where)
		}
		place(name, after)
		prev = l.name
	}
	for _, l := range from.lines {
		if _, ok := to.find("column", l.name); l.kind == "column" && !ok {
			pre = append(pre, "DROP COLUMN IF EXISTS "+quote(l.name))
		}
	}
	if from.options != to.options && to.options != "" {
		if strings.Contains(to.options, "PARTITION BY") {
			post = append(post, to.options) // repartitioned once the rows are the sandbox's
		} else {
			pre = append(pre, to.options)
		}
	}
	for _, l := range to.lines {
		o, same := from.find(l.kind, l.name)
		if l.kind == "column" || same && o.text == l.text {
			continue
		}
		switch {
		case l.kind == "primary":
			pre = append(pre, "ADD "+l.text) // with the DROP: the rows are written by it
		case isKey(l.kind):
			post = append(post, "ADD "+ifNotExistsAfter(l.text, "KEY "))
		case l.kind == "foreign":
			post = append(post, "ADD "+ifNotExistsAfter(l.text, "FOREIGN KEY "))
		default:
			post = append(post, "ADD "+l.text)
		}
	}
	return pre, post
}

// ifNotExistsAfter puts IF NOT EXISTS after the first word in text.
func ifNotExistsAfter(text, word string) string {
	i := strings.Index(text, word)
	if i < 0 {
		return text
	}
	return text[:i+len(word)] + "IF NOT EXISTS " + text[i+len(word):]
}

func quote(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// alter is the DDL of an altered table as DIFF shows it: its ALTER TABLE
// statements, before and after the rows, joined.
func (d *differ) alter(dt *diffTable) string {
	return strings.Join(append(slices.Clone(dt.alterPre), dt.alterPost...), ";\n")
}

// alterStatements are the ALTER TABLE statements of an altered table: pre
// before its rows are written, post after ("" when there is none).
func (d *differ) alterStatements(ctx context.Context, dt *diffTable) (pre, post []string, err error) {
	ftext, err := d.createTable(ctx, dt.e.phys)
	if err != nil {
		return nil, nil, err
	}
	ptext, err := d.createTable(ctx, dt.logical)
	if err != nil {
		return nil, nil, err
	}
	preSpecs, postSpecs := alterSpecs(readDef(ptext), readDef(d.logicalNames(ftext)))
	head := "ALTER TABLE " + dt.logical.Quoted() + " "
	if len(preSpecs) > 0 {
		pre = []string{head + strings.Join(preSpecs, ", ")}
	}
	if len(postSpecs) > 0 {
		post = []string{head + strings.Join(postSpecs, ", ")}
	}
	return pre, post, nil
}
