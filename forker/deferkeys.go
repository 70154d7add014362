package forker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
	"github.com/sqlfork/sqlfork-proxy/tabledef"
)

// Deferred keys. A plain secondary key (KEY: not the primary key, not
// UNIQUE, FULLTEXT or SPATIAL) costs a copy most of its time: each row's
// entry goes into the key's B-tree at a random place. The staging table
// is filled without such keys, and they are built once the copy is whole,
// sorted, by one ALTER TABLE (Filler.Seal), while the sandbox's statements
// still run on the fork. The rows are the same, and so is the definition:
// the keys are added back as the server wrote them, in their order, after
// the unique ones as the server orders them anyway; the result is checked
// against the staging table's first definition, and a staging table that
// differs is rebuilt as a plain copy.

// deferredKeys are the plain keys of a staging table, dropped for its fill.
type deferredKeys struct {
	// def is the staging table's definition before the drop (SHOW CREATE
	// TABLE read by tabledef); keys the definitions dropped, in order.
	def  tabledef.Def
	keys []string
}

// deferKeys drops the plain secondary keys of staging (on c, before the
// snapshot begins: a read view refuses a table altered after it was
// taken) and says what it dropped: the plain keys after the last one that
// must stay (one on the AUTO_INCREMENT column, which needs a key), so that
// those added back come in their place; nothing for a table whose keys a
// rebuild could reorder (FULLTEXT, SPATIAL or VECTOR ones beside them),
// that is partitioned, or whose definition tabledef does not read.
func deferKeys(ctx context.Context, c Conn, staging sqlname.Table) (deferredKeys, error) {
	def, err := createDef(ctx, c, staging)
	if errors.Is(err, errUnreadDef) || err == nil && def.Partition != "" {
		return deferredKeys{}, nil
	}
	if err != nil {
		return deferredKeys{}, err
	}
	d := deferredKeys{def: def}
	auto := autoIncrementColumn(def)
	var drops []string
	for _, it := range def.Items {
		if it.Kind != tabledef.Index {
			continue
		}
		upper := strings.ToUpper(it.Text)
		switch {
		case strings.HasPrefix(upper, "KEY ") && (auto == "" || !strings.Contains(it.Text, auto)):
			d.keys = append(d.keys, it.Text)
			drops = append(drops, "DROP KEY "+quote.Ident(it.Name))
		case strings.HasPrefix(upper, "KEY "):
			d.keys, drops = nil, nil // it stays: so do the keys before it
		case !strings.HasPrefix(upper, "UNIQUE KEY "):
			return deferredKeys{}, nil
		}
	}
	if len(drops) == 0 {
		return deferredKeys{}, nil
	}
	if _, err := c.Exec(ctx, "ALTER TABLE "+staging.Quoted()+" "+strings.Join(drops, ", ")); err != nil {
		return deferredKeys{}, fmt.Errorf("defer the keys of %s: %w", staging.Quoted(), err)
	}
	return d, nil
}

// build adds the deferred keys back to staging (on c) and checks its
// definition is the first one; when it is not, it rebuilds staging as
// like (the fork, whose definition DDL does not change while it fills)
// holding its rows, and puts it in staging's place with no copy-up
// reading it: quiet stops them until the function it returns is called.
func (d deferredKeys) build(ctx context.Context, c Conn, staging, like sqlname.Table, columns string, quiet func() func()) error {
	if len(d.keys) == 0 {
		return nil
	}
	// The fill's modes: a key on a generated column computes it again,
	// as the copy did (a value with a warning is kept, not refused).
	if err := ExecWith(ctx, c, fillDDLModes(), "ALTER TABLE "+staging.Quoted()+" ADD "+strings.Join(d.keys, ", ADD ")); err != nil {
		return fmt.Errorf("build the keys of %s: %w", staging.Quoted(), err)
	}
	got, err := createDef(ctx, c, staging)
	if err != nil {
		return err
	}
	if sameDef(got, d.def) {
		return nil
	}
	again := staging
	again.Name += "_keys"
	_, err = ExecAllWith(ctx, c, fillDDLModes(), // the rows do not change any more: copy-ups only read them
		"DROP TABLE IF EXISTS "+again.Quoted(), "CREATE TABLE "+again.Quoted()+" LIKE "+like.Quoted(),
		"INSERT INTO "+again.Quoted()+" ("+columns+") SELECT "+columns+" FROM "+staging.Quoted())
	if err == nil {
		done := quiet()
		_, err = ExecAllWith(ctx, c, fillDDLModes(), "DROP TABLE "+staging.Quoted(), "RENAME TABLE "+again.Quoted()+" TO "+staging.Quoted())
		done()
	}
	if err != nil {
		return fmt.Errorf("copy %s whole after its keys came out different: %w", staging.Quoted(), err)
	}
	return nil
}

// autoIncrementColumn is def's AUTO_INCREMENT column as its keys name it,
// back-quoted ("" when none). A column whose comment says AUTO_INCREMENT
// counts too: its keys then stay, which costs time only.
func autoIncrementColumn(def tabledef.Def) string {
	for _, it := range def.Items {
		if it.Kind == tabledef.Column && strings.Contains(strings.ToUpper(it.Text), " AUTO_INCREMENT") {
			return quote.Ident(it.Name)
		}
	}
	return ""
}

// errUnreadDef says tabledef does not read a table's definition.
var errUnreadDef = errors.New("a definition tabledef does not read")

// createDef is SHOW CREATE TABLE t read by tabledef.
func createDef(ctx context.Context, c Conn, t sqlname.Table) (tabledef.Def, error) {
	rows, err := c.Query(ctx, "SHOW CREATE TABLE "+t.Quoted())
	if err != nil {
		return tabledef.Def{}, fmt.Errorf("read the definition of %s: %w", t.Quoted(), err)
	}
	if len(rows) != 1 || len(rows[0]) < 2 {
		return tabledef.Def{}, fmt.Errorf("read the definition of %s: no row", t.Quoted())
	}
	def, err := tabledef.Parse(str(rows[0][1]))
	if err != nil {
		return tabledef.Def{}, fmt.Errorf("%w: %s: %v", errUnreadDef, t.Quoted(), err)
	}
	return def, nil
}

// sameDef says whether a and b define the same columns, keys and
// constraints in the same order, with the same options.
func sameDef(a, b tabledef.Def) bool {
	return a.Options == b.Options && a.Partition == b.Partition && slices.Equal(a.Items, b.Items)
}
