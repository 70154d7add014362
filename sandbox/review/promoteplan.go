package review

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Plan, then apply what was reviewed. PROMOTE … DRY RUN answers the plan —
// the conflicts with production now, the statements the strategy would
// apply, and the plan's digest — and applies nothing; PROMOTE … MATCHING
// '<digest>' applies only if the plan is still that one, checked before
// production is touched and again under the rows' locks. PROMOTE … FOR
// promotes only the tables it names.

// DryRunColumns are the columns of a DRY RUN's answer: each conflict, each
// statement (DDL before the rows, the rows, DDL after) and the digest.
var DryRunColumns = []string{"step", "statement"}

// planDigest is the digest of a plan: its strategy, the conflicts it
// resolves (conflictTexts: a plan whose statements are the same but whose
// conflicts are not is another plan) and its statements.
func planDigest(strategy string, conflicts []string, st exportSteps) string {
	sum := sha256.New()
	sum.Write([]byte(strategy + "\n"))
	for _, c := range conflicts {
		sum.Write([]byte("-- conflict " + c + "\n"))
	}
	for _, s := range slices.Concat(st.pre, st.rows, st.post) {
		sum.Write([]byte(s + ";\n"))
	}
	return "sha256:" + hex.EncodeToString(sum.Sum(nil))
}

// conflictTexts are the conflicts found, as a dry run lists them.
func conflictTexts(found []conflict) []string {
	out := make([]string, len(found))
	for i, c := range found {
		out[i] = conflictText(c)
	}
	return out
}

// selected keeps of order the tables the promote names (all when it names
// none); a table named that the sandbox did not change is refused.
func (p *promotion) selected(order []*exportTable) ([]*exportTable, error) {
	if len(p.opts.Tables) == 0 {
		return order, nil
	}
	want := map[string]bool{}
	for _, t := range p.opts.Tables {
		k := p.m.names.Key(p.m.names.Norm(t))
		if !slices.ContainsFunc(order, func(et *exportTable) bool { return p.m.names.Key(et.td.t.logical) == k && et.changes() }) {
			return nil, rewrite.Refuse(wire.ErUnknown, "sandbox %q changed nothing of %s; SANDBOX DIFF SUMMARY lists the tables it changed",
				p.sb.Name, t)
		}
		want[k] = true
	}
	return slices.DeleteFunc(order, func(et *exportTable) bool { return !want[p.m.names.Key(et.td.t.logical)] }), nil
}

// overwrites reports whether the promote names t in OVERWRITE.
func (p *promotion) overwrites(t rewrite.Table) bool {
	k := p.m.names.Key(t)
	return slices.ContainsFunc(p.opts.Overwrite, func(o rewrite.Table) bool { return p.m.names.Key(p.m.names.Norm(o)) == k })
}

// statements are what the promote applies with found the conflicts: THEIRS
// leaves production's values where they conflict. The rows are left as
// they were.
func (p *promotion) statements(d *differ, found []conflict) exportSteps {
	saved := make([][]diffRow, len(p.order))
	for i, et := range p.order {
		saved[i] = slices.Clone(et.td.rows)
	}
	if p.strategy == "THEIRS" {
		p.dropConflicting(found)
	}
	st := d.steps(p.order)
	for i, et := range p.order {
		et.td.rows = saved[i]
	}
	return st
}

// dryRun is DRY RUN's answer: the conflicts found, the statements the
// strategy would apply, and their digest.
func (p *promotion) dryRun(st exportSteps, conflicts []string) *reply.Reply {
	r := &reply.Reply{Columns: DryRunColumns}
	add := func(step, text string) { r.Rows = append(r.Rows, []*string{reply.Str(step), reply.Str(text)}) }
	for _, c := range conflicts {
		add("conflict", c)
	}
	for _, list := range []struct {
		step  string
		stmts []string
	}{{"ddl", st.pre}, {"rows", st.rows}, {"ddl", st.post}} {
		for _, s := range list.stmts {
			add(list.step, s)
		}
	}
	digest := planDigest(p.strategy, conflicts, st)
	add("digest", digest)
	n := len(st.pre) + len(st.rows) + len(st.post)
	switch {
	case p.strategy == "FAIL" && len(conflicts) > 0:
		r.Info = fmt.Sprintf("dry run: PROMOTE STRATEGY FAIL of sandbox %s would be refused: %d rows conflict with production's changes since "+
			"the fork; STRATEGY OURS or THEIRS resolves them", p.sb.Name, len(conflicts))
	default:
		r.Info = fmt.Sprintf("dry run: PROMOTE STRATEGY %s of sandbox %s would apply %d statements (%d conflicts resolved); nothing was applied. "+
			"Apply exactly this plan with SANDBOX PROMOTE %s%s STRATEGY %s MATCHING '%s'", p.strategy, p.sb.Name, n, len(conflicts),
			p.sb.Name, p.clauses(), p.strategy, digest)
	}
	return r
}

// conflictText names a conflict: its table, key, and the columns both
// changed (none: the whole row).
func conflictText(c conflict) string {
	dt := c.et.td.t
	text := tableName(dt.logical) + " " + sideconn.Str(c.et.td.rows[c.i].key)
	if len(c.cells) == 0 {
		return text + ": the row"
	}
	cols := dt.fork.Stored()
	names := make([]string, len(c.cells))
	for i, j := range c.cells {
		names[i] = cols[j].Name
	}
	return text + ": " + strings.Join(names, ", ")
}

// stalePlan refuses a promote whose plan is not the one MATCHING names.
func (p *promotion) stalePlan(digest string) error {
	return rewrite.Refuse(wire.ErUnknown, "PROMOTE refused: its plan is now %s, not the %s that was reviewed (production or the sandbox "+
		"changed since the DRY RUN); review it again with SANDBOX PROMOTE %s%s STRATEGY %s DRY RUN", digest, p.opts.Matching, p.sb.Name,
		p.clauses(), p.strategy)
}

// clauses are the promote's FOR and OVERWRITE clauses as SQL writes them,
// each after a space ("" for none): what the PROMOTE a message suggests
// must repeat for its plan to be the same.
func (p *promotion) clauses() string {
	var b strings.Builder
	for _, c := range []struct {
		kw     string
		tables []rewrite.Table
	}{{"FOR", p.opts.Tables}, {"OVERWRITE", p.opts.Overwrite}} {
		names := make([]string, len(c.tables))
		for i, t := range c.tables {
			names[i] = quote.Qualified(t.DB, t.Name)
		}
		if len(names) > 0 {
			b.WriteString(" " + c.kw + " " + strings.Join(names, ", "))
		}
	}
	return b.String()
}
