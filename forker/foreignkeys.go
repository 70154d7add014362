package forker

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// ForeignKey is one foreign key of a table: Child's Columns reference
// Parent's RefColumns.
type ForeignKey struct {
	Name       string
	Child      sqlname.Table
	Parent     sqlname.Table
	Columns    []string
	RefColumns []string
	OnUpdate   string // RESTRICT, CASCADE, SET NULL, NO ACTION, SET DEFAULT
	OnDelete   string
}

// ForeignKeys lists the foreign keys the account can see on the server,
// leaving out the server's own databases and those skip says to (the
// proxy's), ordered by child, then name. The key tables are read one
// database at a time: information_schema then opens only that database's
// tables, never the sandboxes' (thousands, perhaps, and opening them all
// takes the server seconds). The caller takes the connected tables of a
// table from the list (Component).
func ForeignKeys(ctx context.Context, c Conn, skip func(db string) bool) ([]ForeignKey, error) {
	dbs, err := c.Query(ctx, "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	var parts []string
	for _, r := range dbs {
		db := str(r[0])
		if systemSchema(db) || skip != nil && skip(db) {
			continue
		}
		q := quote.String(db)
		parts = append(parts, "SELECT k.TABLE_SCHEMA, k.TABLE_NAME, k.CONSTRAINT_NAME, k.COLUMN_NAME, "+
			"k.REFERENCED_TABLE_SCHEMA, k.REFERENCED_TABLE_NAME, k.REFERENCED_COLUMN_NAME, r.UPDATE_RULE, r.DELETE_RULE, k.ORDINAL_POSITION "+
			"FROM information_schema.KEY_COLUMN_USAGE k JOIN information_schema.REFERENTIAL_CONSTRAINTS r "+
			"ON r.CONSTRAINT_SCHEMA = "+q+" AND r.TABLE_NAME = k.TABLE_NAME AND r.CONSTRAINT_NAME = k.CONSTRAINT_NAME "+
			"WHERE k.TABLE_SCHEMA = "+q+" AND k.REFERENCED_TABLE_NAME IS NOT NULL")
	}
	if len(parts) == 0 {
		return nil, nil
	}
	rows, err := c.Query(ctx, strings.Join(parts, " UNION ALL ")+" ORDER BY 1, 2, 3, 10")
	if err != nil {
		return nil, fmt.Errorf("read foreign keys: %w", err)
	}
	var out []ForeignKey
	for _, r := range rows {
		child := sqlname.Table{DB: str(r[0]), Name: str(r[1])}
		if skip != nil && (skip(child.DB) || skip(str(r[4]))) {
			continue
		}
		name := str(r[2])
		if n := len(out); n > 0 && out[n-1].Child == child && out[n-1].Name == name {
			out[n-1].Columns = append(out[n-1].Columns, str(r[3]))
			out[n-1].RefColumns = append(out[n-1].RefColumns, str(r[6]))
			continue
		}
		out = append(out, ForeignKey{
			Name: name, Child: child, Parent: sqlname.Table{DB: str(r[4]), Name: str(r[5])},
			Columns: []string{str(r[3])}, RefColumns: []string{str(r[6])},
			OnUpdate: str(r[7]), OnDelete: str(r[8]),
		})
	}
	return out, nil
}

// Component returns the tables connected to t by foreign keys, either way
// and transitively, t first and the rest in name order, and whether any key
// connects them (a table referencing itself included). same says whether
// two names are one table (the server's case rules).
func Component(fks []ForeignKey, t sqlname.Table, same func(a, b sqlname.Table) bool) (tables []sqlname.Table, linked bool) {
	tables = []sqlname.Table{t}
	in := func(x sqlname.Table) bool {
		for _, y := range tables {
			if same(x, y) {
				return true
			}
		}
		return false
	}
	for grew := true; grew; {
		grew = false
		for _, fk := range fks {
			c, p := in(fk.Child), in(fk.Parent)
			if c || p {
				linked = true
			}
			switch {
			case c && !p:
				tables, grew = append(tables, fk.Parent), true
			case p && !c:
				tables, grew = append(tables, fk.Child), true
			}
		}
	}
	rest := tables[1:]
	sort.Slice(rest, func(i, j int) bool { return rest[i].String() < rest[j].String() })
	return tables, linked
}

// RestoreIndexNames gives dst's indexes the names src's have. A key added
// to a fork by name makes the server replace the index LIKE copied for it
// (the one production's server had made for the key, named after its
// column) with one named after the constraint; renaming it back keeps SHOW
// CREATE TABLE and information_schema as production's. An index is renamed
// when it is on exactly the columns of a src index whose name dst lacks.
func RestoreIndexNames(ctx context.Context, c Conn, src, dst sqlname.Table) error {
	// One lookup by name each: for an OR of names MariaDB reads every
	// database's directory.
	indexes := func(t sqlname.Table) string {
		return "SELECT TABLE_SCHEMA, INDEX_NAME, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX SEPARATOR ',') " +
			"FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = " + quote.String(t.DB) +
			" AND TABLE_NAME = " + quote.String(t.Name) + " GROUP BY TABLE_SCHEMA, INDEX_NAME"
	}
	rows, err := c.Query(ctx, indexes(src)+" UNION ALL "+indexes(dst)+" ORDER BY 1, 2")
	if err != nil {
		return fmt.Errorf("indexes of %s: %w", src.Quoted(), err)
	}
	srcIdx, dstIdx := map[string]string{}, map[string]string{}
	for _, r := range rows {
		if str(r[0]) == dst.DB {
			dstIdx[str(r[1])] = strings.ToLower(str(r[2]))
		} else {
			srcIdx[str(r[1])] = strings.ToLower(str(r[2]))
		}
	}
	var renames []string
	for _, name := range slices.Sorted(maps.Keys(srcIdx)) {
		if _, ok := dstIdx[name]; ok {
			continue
		}
		for _, other := range slices.Sorted(maps.Keys(dstIdx)) {
			if _, inSrc := srcIdx[other]; !inSrc && dstIdx[other] == srcIdx[name] {
				renames = append(renames, "RENAME INDEX "+quote.Ident(other)+" TO "+quote.Ident(name))
				delete(dstIdx, other)
				break
			}
		}
	}
	if len(renames) == 0 {
		return nil
	}
	if _, err := c.Exec(ctx, "ALTER TABLE "+dst.Quoted()+" "+strings.Join(renames, ", ")); err != nil {
		return fmt.Errorf("name the indexes of %s as production's: %w", dst.Quoted(), err)
	}
	return nil
}

// AddForeignKey gives child (a fork) the key fk, referencing parent (the
// fork of fk.Parent): the constraint production's table has, pointing into
// the sandbox. The rows are not checked (foreign_key_checks off for the
// statement): they are production's, copied.
func AddForeignKey(ctx context.Context, c Conn, fk ForeignKey, child, parent sqlname.Table) error {
	stmt := "ALTER TABLE " + child.Quoted() + " ADD CONSTRAINT " + quote.Ident(fk.Name) + " FOREIGN KEY (" +
		identList(fk.Columns) + ") REFERENCES " + parent.Quoted() + " (" + identList(fk.RefColumns) + ")"
	if r := rule(fk.OnDelete); r != "" {
		stmt += " ON DELETE " + r
	}
	if r := rule(fk.OnUpdate); r != "" {
		stmt += " ON UPDATE " + r
	}
	if _, err := c.Exec(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
		return fmt.Errorf("add foreign key %s to %s: %w", fk.Name, child.Quoted(), err)
	}
	_, err := c.Exec(ctx, stmt)
	if _, rerr := c.Exec(context.WithoutCancel(ctx), "SET SESSION foreign_key_checks = 1"); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("add foreign key %s to %s: %w", fk.Name, child.Quoted(), err)
	}
	return nil
}

// rule is a referential action as written in DDL; "" for RESTRICT, which
// the server reports for a key that names none: it is the default, and
// naming it makes MariaDB store NO ACTION, which its messages and SHOW
// CREATE TABLE then spell out.
func rule(r string) string {
	switch r = strings.ToUpper(strings.TrimSpace(r)); r {
	case "CASCADE", "SET NULL", "NO ACTION", "SET DEFAULT":
		return r
	}
	return ""
}

// systemSchema reports the server's own databases, which hold no keys of
// the application's.
func systemSchema(db string) bool {
	switch strings.ToLower(db) {
	case "information_schema", "performance_schema", "mysql", "sys":
		return true
	}
	return false
}

func identList(cols []string) string {
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = quote.Ident(c)
	}
	return strings.Join(q, ", ")
}
