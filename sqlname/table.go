// Package sqlname holds the names the proxy passes between its layers: a
// table as its database and name.
package sqlname

import "github.com/sqlfork/sqlfork-proxy/quote"

// Table is a table (or view) as its database and name.
type Table struct {
	DB   string
	Name string
}

// String is db.name, for messages and map keys (not SQL: Quoted is).
func (t Table) String() string { return t.DB + "." + t.Name }

// Quoted is the table's name as SQL writes it: `db`.`name`.
func (t Table) Quoted() string { return quote.Ident(t.DB) + "." + quote.Ident(t.Name) }
