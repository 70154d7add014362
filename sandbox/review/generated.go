package review

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
)

// What a sandbox holds is data, never code: every DDL statement the review
// path builds from what the server says of the sandbox's tables and views
// (SHOW CREATE …, names, definitions) is read back by the rewrite engine,
// as the server will read it, before EXPORT shows it or PROMOTE runs it. It
// must be the one statement it was built as, of its kind, changing only its
// table, reaching nothing outside the database (files, other servers), and
// naming neither the proxy's databases nor the server's own schemas.

// reservedSchema says why db may not be named by generated SQL ("" when
// it may).
func (m *Reviewer) reservedSchema(db string) string {
	switch {
	case sandbox.IsSystemSchema(db):
		return "the server's own schema " + quote.Ident(db)
	case m.names.IsProxySchema(db):
		return "a database of the proxy's"
	}
	return ""
}

// generatedError is a generated statement that is not what it was built
// as; names says it names a reserved database (a view over
// information_schema, say), which an export leaves out with a note.
type generatedError struct {
	what  string
	names bool
}

// generated is what checkGenerated read of a statement: the tables it
// reads (a view's, which an export leaves out when they are).
type generated struct {
	reads []rewrite.Table
}

func (e *generatedError) Error() string { return e.what }

// checkGenerated reads stmt, a statement built for target, as the server
// will read it (the export's settings: no ANSI_QUOTES, backslash escapes,
// utf8mb4) and refuses it unless it is one statement of one of kinds that
// writes target alone and reaches nothing else that it may not. label
// names a table in a message as the sandbox's user knows it (never a
// physical database of the proxy's).
func (m *Reviewer) checkGenerated(stmt string, target rewrite.Table, label func(rewrite.Table) string, kinds ...rewrite.Kind) (generated, error) {
	a := m.engine.Analyze(stmt, rewrite.Options{CaseSensitiveNames: m.names.CaseSensitive, Server: m.server})
	if len(a.Statements) != 1 {
		return generated{}, &generatedError{what: fmt.Sprintf("the statement built for %s reads as %d statements: refused", target, len(a.Statements))}
	}
	st := a.Statements[0]
	switch {
	case !slices.Contains(kinds, st.Kind):
		return generated{}, &generatedError{what: fmt.Sprintf("the statement built for %s reads as %s, not %s: refused", target, orUnknown(string(st.Kind)),
			kindList(kinds))}
	case st.Outside != "":
		return generated{}, &generatedError{what: fmt.Sprintf("the statement built for %s reaches outside the database (%s): refused", target, st.Outside)}
	}
	// What it writes, and for a table's DDL what it reads, is the table
	// and its foreign keys' parents (a CREATE TABLE … SELECT would copy
	// another table's rows with the promote account's rights).
	own := func(t rewrite.Table) bool {
		k := m.names.Key(m.names.Norm(sandbox.WithDB(t, target.DB)))
		return k == m.names.Key(m.names.Norm(target)) || slices.ContainsFunc(st.References, func(r rewrite.Table) bool {
			return m.names.Key(m.names.Norm(sandbox.WithDB(r, target.DB))) == k
		})
	}
	for _, w := range st.Writes {
		if !own(w) {
			return generated{}, &generatedError{what: fmt.Sprintf("the statement built for %s writes %s: refused", target, label(w))}
		}
	}
	for _, r := range append(slices.Clone(st.Reads), st.Like...) {
		if !own(r) && st.Kind != rewrite.KindCreateView {
			return generated{}, &generatedError{what: fmt.Sprintf("the statement built for %s reads %s: refused", target, label(r))}
		}
	}
	for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.References, st.Like, st.Names} {
		for _, t := range list {
			if m.reservedSchema(sandbox.WithDB(t, target.DB).DB) != "" {
				return generated{}, &generatedError{what: fmt.Sprintf("%s reads %s, which is never exported or promoted", target, label(sandbox.WithDB(t, target.DB))),
					names: true}
			}
		}
	}
	return generated{reads: st.Reads}, nil
}

func orUnknown(kind string) string {
	if kind == "" {
		return "a statement the proxy does not know"
	}
	return kind
}

// kindList names kinds for a message: "A or B".
func kindList(kinds []rewrite.Kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = string(k)
	}
	return strings.Join(names, " or ")
}
