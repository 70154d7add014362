package sessiontest

import (
	"strconv"
	"strings"
)

// The DDL the manager and the forker send.

// createDatabase runs CREATE DATABASE IF NOT EXISTS db: one row affected
// when it made db, none when db existed, as the server answers.
func (u *Upstream) createDatabase(p *parser) (result, error) {
	db, ok := p.name()
	if !ok || !p.end() {
		return result{}, errUnknown
	}
	var n uint64
	if !u.schemas[db] {
		n = 1
	}
	u.schemas[db] = true
	return result{affected: n, changed: []string{db}}, nil
}

// createStored runs CREATE TABLE IF NOT EXISTS db.t (definitions) …: a
// table the fake keeps rows of, with its PRIMARY KEY and UNIQUE columns
// and column defaults.
func (u *Upstream) createStored(p *parser) (result, error) {
	db, name, ok := p.qname()
	if !ok || !p.punct("(") {
		return result{}, errUnknown
	}
	if !u.schemas[db] {
		return result{}, errNoDB(db)
	}
	o := &object{Table: Table{DB: db, Name: name, Type: "BASE TABLE", Engine: "InnoDB"}, stored: true,
		defaults: map[string]*string{}}
	var primary []string
	var unique [][]string
	for _, def := range p.definitions() {
		switch {
		case len(def) == 0:
			return result{}, errUnknown
		case def[0].is("PRIMARY"):
			dp := &parser{toks: def[2:]}
			cols, ok := dp.nameList()
			if !ok {
				return result{}, errUnknown
			}
			primary = cols
			continue
		}
		col := strings.ToLower(def[0].text)
		o.cols = append(o.cols, col)
		o.Columns = append(o.Columns, Column{Name: col})
		for j, t := range def {
			switch {
			case t.is("PRIMARY"):
				primary = []string{col}
			case t.is("UNIQUE"):
				unique = append(unique, []string{col})
			case t.is("DEFAULT") && j+1 < len(def):
				v, _ := (&parser{toks: def[j+1:]}).literal()
				o.defaults[col] = v
			}
		}
	}
	if primary != nil {
		o.keys, o.primary = append([][]string{primary}, unique...), true
	} else {
		o.keys = unique
	}
	if u.objects[objectKey(db, name)] == nil {
		u.putObject(o)
	}
	return result{changed: []string{db}}, nil
}

// createLike runs CREATE TABLE dst LIKE src: src's definition, no rows, no
// triggers.
func (u *Upstream) createLike(p *parser) (result, error) {
	db, name, sdb, sname, ok := p.namePair("LIKE")
	if !ok {
		return result{}, errUnknown
	}
	return u.copyTable(sdb, sname, db, name, false)
}

// copyTable makes dst from src: a copy of its rows too when full.
func (u *Upstream) copyTable(sdb, sname, db, name string, full bool) (result, error) {
	src := u.objects[objectKey(sdb, sname)]
	switch {
	case src == nil:
		return result{}, errNoTable(sdb, sname)
	case src.Type == "VIEW":
		return result{}, Err(1347, "HY000", "'%s.%s' is not of type 'BASE TABLE'", sdb, sname)
	case !u.schemas[db]:
		return result{}, errNoDB(db)
	case u.objects[objectKey(db, name)] != nil:
		return result{}, Err(1050, "42S01", "Table '%s' already exists", name)
	}
	t := src.Table
	t.DB, t.Name, t.Triggers = db, name, 0
	t.Columns = append([]Column(nil), src.Columns...)
	if !full {
		t.Rows, t.Bytes = 0, 0
		if t.AutoIncrement > 0 {
			t.AutoIncrement = 1
		}
	}
	u.putObject(&object{Table: t})
	return result{changed: []string{db}}, nil
}

// forkTable runs SeekDB's FORK TABLE src TO dst (a syntax error for
// anything but SeekDB and OceanBase).
func (u *Upstream) forkTable(p *parser) (result, error) {
	sdb, sname, db, name, ok := p.namePair("TO")
	if !ok {
		return result{}, errUnknown
	}
	v := strings.ToLower(u.version)
	if !strings.Contains(v, "seekdb") && !strings.Contains(v, "oceanbase") {
		return result{}, Err(1064, "42000", "You have an error in your SQL syntax near 'FORK TABLE'")
	}
	return u.copyTable(sdb, sname, db, name, true)
}

// alter runs ALTER TABLE db.t AUTO_INCREMENT = n, or COMMENT = '…'.
func (u *Upstream) alter(p *parser) (result, error) {
	db, name, ok := p.qname()
	if !ok {
		return result{}, errUnknown
	}
	opt, ok := p.name()
	if !ok || !p.punct("=") {
		return result{}, errUnknown
	}
	v, ok := p.literal()
	if !ok || v == nil || !p.end() {
		return result{}, errUnknown
	}
	o := u.objects[objectKey(db, name)]
	if o == nil {
		return result{}, errNoTable(db, name)
	}
	switch strings.ToUpper(opt) {
	case "AUTO_INCREMENT":
		n, err := strconv.ParseInt(*v, 10, 64)
		if err != nil {
			return result{}, errUnknown
		}
		o.AutoIncrement = n
	case "COMMENT":
		o.Comment = *v
	default:
		return result{}, errUnknown
	}
	return result{changed: []string{db}}, nil
}

// dropTable runs DROP TABLE IF EXISTS db.t.
func (u *Upstream) dropTable(p *parser) (result, error) {
	db, name, ok := p.qname()
	if !ok || !p.end() {
		return result{}, errUnknown
	}
	delete(u.objects, objectKey(db, name))
	return result{changed: []string{db}}, nil
}

// dropDatabase runs DROP DATABASE IF EXISTS db, with its tables.
func (u *Upstream) dropDatabase(p *parser) (result, error) {
	db, ok := p.name()
	if !ok || !p.end() {
		return result{}, errUnknown
	}
	delete(u.schemas, db)
	for k, o := range u.objects {
		if o.DB == db {
			delete(u.objects, k)
		}
	}
	return result{changed: []string{db}}, nil
}

// hasColumn reports a stored column (any case).
func (o *object) hasColumn(c string) bool {
	for _, n := range o.cols {
		if strings.EqualFold(n, c) {
			return true
		}
	}
	return false
}

// column finds a column of the table (any case).
func (o *object) column(c string) (Column, bool) {
	for _, col := range o.Columns {
		if strings.EqualFold(col.Name, c) {
			return col, true
		}
	}
	return Column{}, false
}

// conflict names the unique key on which rows a and b collide ("" when
// none does); NULLs never collide. The primary key is named PRIMARY.
func (o *object) conflict(a, b map[string]*string) string {
	for i, key := range o.keys {
		same := true
		for _, c := range key {
			if !eq(a[c], b[c]) {
				same = false
				break
			}
		}
		if same {
			if i == 0 && o.primary {
				return "PRIMARY"
			}
			return key[0]
		}
	}
	return ""
}

// keyValue is row's value of the key named as conflict names it.
func (o *object) keyValue(row map[string]*string, key string) string {
	cols := []string{key}
	if key == "PRIMARY" {
		cols = o.keys[0]
	}
	vals := make([]string, len(cols))
	for i, c := range cols {
		vals[i] = deref(row[c])
	}
	return strings.Join(vals, "-")
}
