package tabledef

import (
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

// Alter are the ALTER TABLE specifications that turn from into to:
// pre before the rows are written (drops, columns, options), post after
// (keys and constraints, which the rows must meet); part is the
// partitioning, an ALTER TABLE of its own after the rows ("" when it is
// production's).
func Alter(from, to Def) (pre, post []string, part string) {
	pre = dropSpecs(from, to)
	pre = append(pre, columnSpecs(from, to)...)
	for _, l := range from.Items {
		if _, ok := to.Find(Column, l.Name); l.Kind == Column && !ok {
			pre = append(pre, "DROP COLUMN IF EXISTS "+quote.Ident(l.Name))
		}
	}
	if from.Options != to.Options && to.Options != "" {
		pre = append(pre, to.Options)
	}
	for _, l := range to.Items {
		o, same := from.Find(l.Kind, l.Name)
		if l.Kind == Column || same && o.Text == l.Text {
			continue
		}
		switch {
		case l.Kind == Primary:
			pre = append(pre, "ADD "+l.Text) // with the DROP: the rows are written by it
		case l.Kind == Index && keysAutoIncrement(to, l):
			// An AUTO_INCREMENT column needs its key in the ALTER that
			// makes it (1075).
			pre = append(pre, "ADD "+ifNotExistsAfter(l.Text, "KEY "))
		case l.Kind == Index:
			post = append(post, "ADD "+ifNotExistsAfter(l.Text, "KEY "))
		case l.Kind == Foreign:
			post = append(post, "ADD "+ifNotExistsAfter(l.Text, "FOREIGN KEY "))
		default:
			post = append(post, "ADD "+l.Text)
		}
	}
	switch {
	case from.Partition == to.Partition:
	case to.Partition != "":
		part = to.Partition // repartitioned once the rows are the sandbox's
	default:
		part = "REMOVE PARTITIONING"
	}
	return pre, post, part
}

// keysAutoIncrement reports whether the key k of d names an AUTO_INCREMENT
// column of d.
func keysAutoIncrement(d Def, k Item) bool {
	for _, c := range d.Items {
		if c.Kind == Column && strings.Contains(strings.ToUpper(c.Text), " AUTO_INCREMENT") && strings.Contains(k.Text, quote.Ident(c.Name)) {
			return true
		}
	}
	return false
}

// dropSpecs drop the keys and constraints of from that to has not, or has
// otherwise.
func dropSpecs(from, to Def) []string {
	var pre []string
	for _, l := range from.Items {
		if n, same := to.Find(l.Kind, l.Name); same && n.Text == l.Text {
			continue
		}
		switch l.Kind {
		case Foreign:
			pre = append(pre, "DROP FOREIGN KEY IF EXISTS "+quote.Ident(l.Name))
		case Check:
			pre = append(pre, "DROP CONSTRAINT IF EXISTS "+quote.Ident(l.Name))
		case Primary:
			pre = append(pre, "DROP PRIMARY KEY")
		case Index:
			pre = append(pre, "DROP INDEX IF EXISTS "+quote.Ident(l.Name))
		}
	}
	return pre
}

// columnSpecs add the columns to has and from has not, and modify those
// that differ or stand elsewhere, each placed where to has it.
func columnSpecs(from, to Def) []string {
	var pre []string
	// The columns' order as the ALTER leaves it, to move only those not
	// where the sandbox has them.
	var order []string
	for _, l := range from.Items {
		if _, ok := to.Find(Column, l.Name); l.Kind == Column && ok {
			order = append(order, strings.ToLower(l.Name))
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
	for _, l := range to.Items {
		if l.Kind != Column {
			continue
		}
		where := " FIRST"
		if prev != "" {
			where = " AFTER " + quote.Ident(prev)
		}
		name, after := strings.ToLower(l.Name), strings.ToLower(prev)
		old, ok := from.Find(Column, l.Name)
		i := slices.Index(order, name)
		moved := i < 0 || i == 0 && after != "" || i > 0 && order[i-1] != after
		switch {
		case !ok:
			pre = append(pre, "ADD COLUMN IF NOT EXISTS "+l.Text+where)
		case old.Text != l.Text || moved:
			pre = append(pre, "MODIFY COLUMN IF EXISTS "+l.Text+where)
		}
		place(name, after)
		prev = l.Name
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
