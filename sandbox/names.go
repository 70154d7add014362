package sandbox

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Names maps logical tables to their keys and to sandbox schemas, as the
// server compares names (lower_case_table_names).
type Names struct {
	// Prefix starts every database the proxy makes.
	Prefix string
	// CaseSensitive mirrors lower_case_table_names=0.
	CaseSensitive bool
}

// Norm is t as the server compares it: lower-cased unless names are case
// sensitive.
func (n Names) Norm(t sqlname.Table) sqlname.Table {
	if n.CaseSensitive {
		return t
	}
	return sqlname.Table{DB: strings.ToLower(t.DB), Name: strings.ToLower(t.Name)}
}

// Key normalizes a logical table for lookups.
func (n Names) Key(t sqlname.Table) string {
	t = n.Norm(t)
	return t.DB + "\x00" + t.Name
}

// Physical is where logical table t lives in sandbox id.
func (n Names) Physical(id string, t sqlname.Table) sqlname.Table {
	t = n.Norm(t)
	return sqlname.Table{DB: Schema(n.Prefix, id, t.DB), Name: t.Name}
}

// IsProxySchema reports whether database db is one the proxy makes (its
// registry or a sandbox's), as the server compares names of databases
// whatever lower_case_table_names says of tables: by the prefix,
// case-insensitively.
func (n Names) IsProxySchema(db string) bool {
	return strings.HasPrefix(strings.ToLower(db), strings.ToLower(n.Prefix))
}

// Meta is the registry's database.
func (n Names) Meta() string { return MetaSchema(n.Prefix) }

// Q is the registry's table name, qualified and quoted.
func (n Names) Q(name string) string { return quote.Ident(n.Meta()) + "." + name }
