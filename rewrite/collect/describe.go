package collect

import (
	"slices"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// UsedTables are the tables c's references name, sorted, each once:
// written if any reference writes it.
func UsedTables(c *Collector, db string) (reads, writes []sqlname.Table) {
	type use struct {
		t     sqlname.Table
		write bool
	}
	uses := make([]use, 0, len(c.Refs))
	for _, r := range c.Refs {
		if r.Kind == RefQualifier || r.CTE ||
			(r.Kind == RefTarget && r.Schema == "" && c.Aliases[strings.ToLower(r.Name)]) {
			continue
		}
		t := sqlname.Table{DB: r.Schema, Name: r.Name}
		if t.DB == "" {
			t.DB = r.DefaultDB
		}
		if t.DB == "" {
			t.DB = db
		}
		uses = append(uses, use{t, r.Write})
	}
	slices.SortFunc(uses, func(x, y use) int {
		if c := strings.Compare(x.t.DB, y.t.DB); c != 0 {
			return c
		}
		return strings.Compare(x.t.Name, y.t.Name)
	})
	for i := 0; i < len(uses); {
		j, write := i, false
		for ; j < len(uses) && uses[j].t == uses[i].t; j++ {
			write = write || uses[j].write
		}
		if write {
			writes = append(writes, uses[i].t)
		} else {
			reads = append(reads, uses[i].t)
		}
		i = j
	}
	return reads, writes
}

// showListings are the listings SHOWs answer with from the sandbox's
// view, by SHOW.
var showListings = map[ast.ShowStmtType]string{
	ast.ShowTables:          "TABLES",
	ast.ShowTriggers:        "TRIGGERS",
	ast.ShowProcedureStatus: "PROCEDURE STATUS",
	ast.ShowFunctionStatus:  "FUNCTION STATUS",
	ast.ShowTableStatus:     "TABLE STATUS",
	ast.ShowDatabases:       "DATABASES",
	ast.ShowProcessList:     "PROCESSLIST",
}

// ShowListing is the listing a SHOW answers with from the sandbox's view
// (TABLES, TABLE STATUS, DATABASES, …), nil for other SHOWs.
func ShowListing(x *ast.ShowStmt) *Show {
	what, ok := showListings[x.Tp]
	if !ok {
		return nil
	}
	sh := &Show{What: what, Full: x.Full, DB: x.DBName}
	if x.Pattern != nil {
		if v, ok := x.Pattern.Pattern.(interface{ GetString() string }); ok {
			like := v.GetString()
			sh.Like = &like
		}
	}
	if x.Where != nil {
		sh.Where = whereText(x.Text())
	}
	return sh
}

// LabelSpans are the spans of labels in text, those the parser's offsets
// place exactly (others are left out), and for each whether it is a
// column reference.
func LabelSpans(labels []Label, text string) (spans [][2]int, columns []bool) {
	for _, l := range labels {
		if end := l.Offset + len(l.Text); l.Text != "" && l.Offset >= 0 && end <= len(text) && text[l.Offset:end] == l.Text {
			spans = append(spans, [2]int{l.Offset, end})
			columns = append(columns, l.Column)
		}
	}
	return spans, columns
}

// Locking reports statements that read their tables under locks
// (InnoDB takes shared locks on the rows any statement but a plain SELECT
// reads, at REPEATABLE READ; DELETE and multi-table UPDATE at every level).
func Locking(s ast.StmtNode) bool {
	switch x := s.(type) {
	case *ast.SelectStmt, *ast.SetOprStmt, *ast.ShowStmt, *ast.PrepareStmt, *ast.DeallocateStmt, *ast.UseStmt,
		*ast.BeginStmt, *ast.CommitStmt, *ast.RollbackStmt, *ast.SavepointStmt, *ast.ReleaseSavepointStmt,
		*ast.CreateViewStmt, *ast.LockTablesStmt, *ast.UnlockTablesStmt:
		// A view reads nothing when it is made; LOCK TABLES … READ sets
		// the collector's locking flag itself.
		return false
	case *ast.ExplainStmt:
		return x.Analyze && Locking(x.Stmt)
	case *ast.CreateTableStmt:
		return x.Select != nil
	}
	return true
}

// SortTables sorts ts by database, then name.
func SortTables(ts []sqlname.Table) {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && (ts[j].DB < ts[j-1].DB || ts[j].DB == ts[j-1].DB && ts[j].Name < ts[j-1].Name); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
}

// whereText is what follows the first WHERE keyword of a statement's
// text, without a trailing semicolon ("" if there is none).
func whereText(text string) string {
	for _, t := range lexer.Lex(text, lexer.Options{}) {
		if t.Kind == lexer.Ident && strings.EqualFold(text[t.Start:t.End], "WHERE") {
			return strings.TrimSuffix(strings.TrimSpace(text[t.End:]), ";")
		}
	}
	return ""
}

// DeclaredNames are the names a statement's tree declares or uses as no
// table (c.columns: columns, indexes, constraints, partitions, aliases of
// fields, databases, …) with its CTE names and table aliases: where no
// site is, such a name is no table.
func DeclaredNames(c *Collector) map[string]bool {
	if c.Columns == nil {
		return nil
	}
	if len(c.CTEs) == 0 && len(c.Aliases) == 0 {
		return c.Columns
	}
	m := make(map[string]bool, len(c.Columns)+len(c.CTEs)+len(c.Aliases))
	for _, set := range []map[string]bool{c.Columns, c.CTEs, c.Aliases} {
		for k := range set {
			m[k] = true
		}
	}
	return m
}

// Show is a SHOW statement the proxy answers itself or asks as a query:
// one that lists tables or databases, or the process list.
type Show struct {
	// What is "TABLES", "TABLE STATUS", "DATABASES", "PROCESSLIST",
	// "PROCEDURE STATUS", "FUNCTION STATUS" or "TRIGGERS".
	What string
	Full bool
	// DB is the database of FROM/IN db, "" for the current one.
	DB string
	// Like is the LIKE pattern, if any.
	Like *string
	// Where is the text of the WHERE condition, "" without one.
	Where string
}
