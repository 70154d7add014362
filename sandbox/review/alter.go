package review

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/tabledef"
)

// alter is the DDL of an altered table as DIFF shows it: its ALTER TABLE
// statements, before and after the rows, joined.
func (d *differ) alter(dt *diffTable) string {
	return strings.Join(append(slices.Clone(dt.alterPre), dt.alterPost...), ";\n")
}

// alterStatements are the ALTER TABLE statements of an altered table: pre
// before its rows are written, post after ("" when there is none).
func (d *differ) alterStatements(ctx context.Context, dt *diffTable) (pre, post []string, err error) {
	ftext, err := d.createTable(ctx, dt.e.Phys)
	if err != nil {
		return nil, nil, err
	}
	ptext, err := d.createTable(ctx, dt.logical)
	if err != nil {
		return nil, nil, err
	}
	from, err := tabledef.Parse(ptext)
	if err != nil {
		return nil, nil, fmt.Errorf("read the definition of %s: %w", dt.logical, err)
	}
	to, err := tabledef.Parse(d.logicalNames(ftext))
	if err != nil {
		return nil, nil, fmt.Errorf("read the sandbox's definition of %s: %w", dt.logical, err)
	}
	preSpecs, postSpecs, part := tabledef.Alter(from, to)
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
