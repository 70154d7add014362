package console

import (
	"context"
	"net/http"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/internal/human"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// sandboxPage is what a sandbox's page shows.
type sandboxPage struct {
	Sandbox sandboxView
	Tables  []tableView
	// Summary is its DIFF SUMMARY and Diff its changes per table, when the
	// visitor may read rows; DiffError says why they are missing.
	Summary   []summaryRow
	Diff      []tableDiff
	DiffError string
	// Kept: the page follows a keep.
	Kept bool
	// Strategies are the promote form's choices.
	Strategies []strategyView
}

// tableView is one table of a sandbox.
type tableView struct {
	Table, State, Size string
	Rows               int64
	Fill               *fillView
}

// summaryRow is one table of a DIFF SUMMARY.
type summaryRow struct {
	Anchor, Table, Change, KeyKind, Method, Note string
	Inserted, Updated, Deleted, Conflicts        int64
	// Value is the table as the promote form names it (db.table).
	Value string
}

// strategyView is one strategy of a promote.
type strategyView struct {
	Value, Label, Help string
	Checked            bool
}

// strategies are the promote form's strategies, chosen the one checked.
func strategies(chosen string) []strategyView {
	out := []strategyView{
		{Value: adminapi.StrategyFail, Label: "fail", Help: "refuse if production changed a row the sandbox changed"},
		{Value: adminapi.StrategyOurs, Label: "ours", Help: "write the sandbox's rows anyway"},
		{Value: adminapi.StrategyTheirs, Label: "theirs", Help: "leave such rows as production has them"},
	}
	for i := range out {
		out[i].Checked = out[i].Value == chosen
	}
	return out
}

// sandbox is GET /ui/sandboxes/{name}.
func (c *Console) sandbox(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	s, err := c.o.API.Sandboxes.Show(r.Context(), name)
	if err != nil {
		c.failErr(w, r, err)
		return
	}
	p := sandboxPage{Sandbox: viewSandbox(s, c.o.Now()), Kept: r.URL.Query().Get("done") == "kept",
		Strategies: strategies(adminapi.StrategyFail)}
	for _, t := range s.Tables {
		tv := tableView{Table: quote.Display(t.Table), State: quote.Display(t.State), Rows: t.Rows, Size: human.Bytes(t.Bytes)}
		if t.Fill != nil {
			f := viewFill(t)
			tv.Fill = &f
		}
		p.Tables = append(p.Tables, tv)
	}
	if ok, why := c.o.API.Permits(adminapi.NeedRows); !ok {
		p.DiffError = why
	} else {
		p.Summary, p.Diff, err = c.diff(r.Context(), name)
		if err != nil {
			p.DiffError = quote.Display(err.Error())
		}
	}
	c.render(w, r, visitorOf(r), http.StatusOK, "sandbox", "Sandbox "+p.Sandbox.Name, p)
}

// diff is the DIFF SUMMARY of the sandbox called name and its changes per
// table, the summary's rows linked to their tables' changes.
func (c *Console) diff(ctx context.Context, name string) ([]summaryRow, []tableDiff, error) {
	sum, err := c.o.API.Sandboxes.Diff(ctx, name, adminapi.DiffOptions{Summary: true})
	if err != nil {
		return nil, nil, err
	}
	// The server sends maxRowsShown rows of each table at most; the
	// summary counts the rest.
	det, err := c.o.API.Sandboxes.Diff(ctx, name, adminapi.DiffOptions{RowsPerTable: maxRowsShown})
	if err != nil {
		return nil, nil, err
	}
	tables := tableDiffs(det.Changes)
	countHidden(tables, sum.Summary)
	anchors := map[string]string{}
	for _, t := range tables {
		anchors[t.Table] = t.Anchor
	}
	var rows []summaryRow
	for _, t := range sum.Summary {
		table := quote.Display(t.Table)
		rows = append(rows, summaryRow{Anchor: anchors[table], Table: table, Value: t.Table, Change: quote.Display(t.Change),
			KeyKind: quote.Display(t.KeyKind), Method: quote.Display(t.Method), Note: quote.Display(t.Note),
			Inserted: t.Inserted, Updated: t.Updated, Deleted: t.Deleted, Conflicts: t.Conflicts})
	}
	return rows, tables, nil
}

// countHidden raises each table's count of rows not shown to what the
// summary counts past the rows it shows (the diff's rows were capped).
func countHidden(tables []tableDiff, summary []adminapi.DiffTable) {
	total := map[string]int64{}
	for _, t := range summary {
		total[quote.Display(t.Table)] = t.Inserted + t.Updated + t.Deleted
	}
	for i := range tables {
		t := &tables[i]
		if n := int(total[t.Table]) - len(t.Rows); n > t.Hidden {
			t.Hidden = n
		}
	}
}
