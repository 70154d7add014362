package session

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// The ALTER TABLE that turns production's table into the sandbox's, from
// the two SHOW CREATE TABLE texts read whole (tabledef.go): each column,
// key or constraint that differs is dropped, added or modified with the
// server's own text of it. A column renamed shows as one dropped and one
// added: the export then writes every row of an altered table, so no value
// is lost.

// alterSpecs are the ALTER TABLE specifications that turn from into to:
// pre before the rows are written (drops, columns, options), post after
// (keys and constraints, which the rows must meet); part is the
// partitioning, an ALTER TABLE of its own after the rows ("" when it is
// production's).
func alterSpecs(from, to tableDef) (pre, post []string, part string) {
	pre = dropSpecs(from, to)
	pre = append(pre, columnSpecs(from, to)...)
	for _, l := range from.items {
		if _, ok := to.find(defColumn, l.name); l.kind == defColumn && !ok {
			pre = append(pre, "DROP COLUMN IF EXISTS "+quote.Ident(l.name))
		}
	}
	if from.options != to.options && to.options != "" {
		pre = append(pre, to.options)
	}
	for _, l := range to.items {
		o, same := from.find(l.kind, l.name)
		if l.kind == defColumn || same && o.text == l.text {
			continue
		}
		switch l.kind {
		case defPrimary:
			pre = append(pre, "ADD "+l.text) // with the DROP: the rows are written by it
		case defIndex:
			post = append(post, "ADD "+ifNotExistsAfter(l.text, "KEY "))
		case defForeign:
			post = append(post, "ADD "+ifNotExistsAfter(l.text, "FOREIGN KEY "))
		default:
			post = append(post, "ADD "+l.text)
		}
	}
	switch {
	case from.partition == to.partition:
	case to.partition != "":
		part = to.partition // repartitioned once the rows are the sandbox's
	default:
		part = "REMOVE PARTITIONING"
	}
	return pre, post, part
}

// dropSpecs drop the keys and constraints of from that to has not, or has
// otherwise.
func dropSpecs(from, to tableDef) []string {
	var pre []string
	for _, l := range from.items {
		if n, same := to.find(l.kind, l.name); same && n.text == l.text {
			continue
		}
		switch l.kind {
		case defForeign:
			pre = append(pre, "DROP FOREIGN KEY IF EXISTS "+quote.Ident(l.name))
		case defCheck:
			pre = append(pre, "DROP CONSTRAINT IF EXISTS "+quote.Ident(l.name))
		case defPrimary:
			pre = append(pre, "DROP PRIMARY KEY")
		case defIndex:
			pre = append(pre, "DROP INDEX IF EXISTS "+quote.Ident(l.name))
		}
	}
	return pre
}

// columnSpecs add the columns to has and from has not, and modify those
// that differ or stand elsewhere, each placed where to has it.
func columnSpecs(from, to tableDef) []string {
	var pre []string
	// The columns' order as the ALTER leaves it, to move only those not
	// where the sandbox has them.
	var order []string
	for _, l := range from.items {
		if _, ok := to.find(defColumn, l.name); l.kind == defColumn && ok {
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
	for _, l := range to.items {
		if l.kind != defColumn {
			continue
		}
		where := " FIRST"
		if prev != "" {
			where = " AFTER " + quote.Ident(prev)
		}
		name, after := strings.ToLower(l.name), strings.ToLower(prev)
		old, ok := from.find(defColumn, l.name)
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
	return pre
}

// ifNotExistsAfter puts IF NOT EXISTS after the first word in text (a key
// or constraint the server wrote, which starts with its kind and name).
func ifNotExistsAfter(text, word string) string {
	i := strings.Index(text, word)
	if i < 0 {
		return text
	}
	return text[:i+len(word)] + "IF NOT EXISTS " + text[i+len(word):]
}

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
	from, err := parseCreateTable(ptext)
	if err != nil {
		return nil, nil, fmt.Errorf("read the definition of %s: %w", dt.logical, err)
	}
	to, err := parseCreateTable(d.logicalNames(ftext))
	if err != nil {
		return nil, nil, fmt.Errorf("read the sandbox's definition of %s: %w", dt.logical, err)
	}
	preSpecs, postSpecs, part := alterSpecs(from, to)
	head := "ALTER TABLE " + dt.logical.Quoted() + " "
	if len(preSpecs) > 0 {
		pre = []string{head + strings.Join(preSpecs, ", ")}
	}
	if len(postSpecs) > 0 {
		post = []string{head + strings.Join(postSpecs, ", ")}
	}
	if part != "" {
		post = append(post, head+part)
	}
	return pre, post, nil
}
