package integration

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// The review loop's oracle, shared by the suites of promote_ddl_test.go,
// promote_fk_test.go and promote_migration_test.go: each computes, from
// what it read of production at the fork (base), of the sandbox (ours)
// and of production before the promote (theirs), what DIFF SUMMARY and
// DIFF must say of each table and what production holds after PROMOTE
// (oracleTable); oracleRun then checks the product against it: the
// summary's counts, every row DIFF lists, the refusal of a table compared
// whole without OVERWRITE, a DRY RUN's conflicts, a stale digest refused,
// the promote MATCHING the dry run's digest applying exactly its rows'
// statements, and production's rows, columns and definitions afterwards.

// oRows are a table's rows by key (its first column), their other cells
// in cols' order ("NULL" for NULL).
type oRows struct {
	cols []string
	rows map[string][]string
}

// readORows reads every row of db.table on c.
func readORows(t *testing.T, c rowQuerier, db, table string) oRows {
	t.Helper()
	cols, rows := queryRows(t, c, "SELECT * FROM `"+db+"`.`"+table+"`")
	out := oRows{cols: cols[1:], rows: map[string][]string{}}
	for _, r := range rows {
		out.rows[r[0].String] = nullText(r[1:])
	}
	return out
}

// project is r's rows in the columns cols; a column r has not takes the
// value added gives it (the constant an ALTER gave every row).
func (r oRows) project(t *testing.T, cols []string, added map[string]string) map[string][]string {
	t.Helper()
	out := make(map[string][]string, len(r.rows))
	for k, row := range r.rows {
		p := make([]string, len(cols))
		for i, c := range cols {
			j := slices.Index(r.cols, c)
			v, ok := added[c]
			switch {
			case j >= 0:
				p[i] = row[j]
			case ok:
				p[i] = v
			default:
				t.Fatalf("project: no column %s in %v", c, r.cols)
			}
		}
		out[k] = p
	}
	return out
}

// String is r as text, by key.
func (r oRows) String() string { return strings.Join(r.cols, ",") + ": " + mergeText(r.rows) }

// equal reports whether r and o have the same columns and rows.
func (r oRows) equal(o oRows) bool {
	return slices.Equal(r.cols, o.cols) && maps.EqualFunc(r.rows, o.rows, slices.Equal[[]string])
}

// image is a row as DIFF's JSON object of it must read: the key column's
// value and those of cols (keep: which of them), sorted by name.
func image(keyCol, k string, cols, vals []string, keep func(i int) bool) string {
	parts := []string{keyCol + "=" + k}
	for i, c := range cols {
		if keep == nil || keep(i) {
			parts = append(parts, c+"="+vals[i])
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// diffLine is a row of SANDBOX DIFF as the oracle writes it ("-" for a
// NULL image).
func diffLine(op, key, before, after, production string) string {
	return fmt.Sprintf("%s {%s} {%s} -> {%s} production {%s}", op, key, before, after, production)
}

// capturedDiff is what SANDBOX DIFF lists of a captured table (key column
// keyCol, the sandbox's columns cols; own marks those the sandbox added):
// a row per key the sandbox changed (mergeKey), its op "conflict" when
// production changed it too, differently; the fork-time row and the
// sandbox's in the sandbox's columns; for a conflict production's row in
// the columns both have, when production has it.
func capturedDiff(keyCol string, cols []string, base, ours, theirs map[string][]string, own []bool) []string {
	shared := func(i int) bool { return !own[i] }
	var out []string
	for _, k := range mergeKeys(base, ours, theirs) {
		m := mergeKey(base, ours, theirs, own, k, "OURS")
		if m.op == "" {
			continue
		}
		op, before, after, prod := m.op, "-", "-", "-"
		if b, ok := base[k]; ok {
			before = image(keyCol, k, cols, b, nil)
		}
		if s, ok := ours[k]; ok {
			after = image(keyCol, k, cols, s, nil)
		}
		if m.conflict {
			op = "conflict"
			if p, ok := theirs[k]; ok {
				prod = image(keyCol, k, cols, p, shared)
			}
		}
		out = append(out, diffLine(op, keyCol+"="+k, before, after, prod))
	}
	slices.Sort(out)
	return out
}

// comparedDiff is what SANDBOX DIFF lists of a table compared whole with
// production (no fork-time image): by key, a row only the sandbox has is
// inserted, one only production has deleted, one whose columns both
// tables have differ updated; before is production's row in those
// columns, after the sandbox's whole.
func comparedDiff(keyCol string, ours, theirs oRows) ([]string, mergeCounts) {
	var sharedCols []string
	for _, c := range ours.cols {
		if slices.Contains(theirs.cols, c) {
			sharedCols = append(sharedCols, c)
		}
	}
	inTheirs := func(i int) bool { return slices.Contains(sharedCols, theirs.cols[i]) }
	var out []string
	var n mergeCounts
	for _, k := range mergeKeys(ours.rows, theirs.rows) {
		s, sok := ours.rows[k]
		p, pok := theirs.rows[k]
		switch {
		case !pok:
			n.ins++
			out = append(out, diffLine("insert", keyCol+"="+k, "-", image(keyCol, k, ours.cols, s, nil), "-"))
		case !sok:
			n.del++
			out = append(out, diffLine("delete", keyCol+"="+k, image(keyCol, k, theirs.cols, p, inTheirs), "-", "-"))
		default:
			for _, c := range sharedCols {
				if s[slices.Index(ours.cols, c)] != p[slices.Index(theirs.cols, c)] {
					n.upd++
					out = append(out, diffLine("update", keyCol+"="+k, image(keyCol, k, theirs.cols, p, inTheirs),
						image(keyCol, k, ours.cols, s, nil), "-"))
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out, n
}

// jsonImage is a DIFF row's JSON image as image writes it ("-" for NULL).
func jsonImage(t *testing.T, v sql.NullString) string {
	t.Helper()
	if !v.Valid {
		return "-"
	}
	m, err := jsonObject(v.String)
	if err != nil {
		t.Fatalf("DIFF image %q: %v", v.String, err)
	}
	var parts []string
	for c, x := range m {
		s, ok := jsonText(x)
		if !ok {
			s = "NULL"
		}
		parts = append(parts, c+"="+s)
	}
	slices.Sort(parts)
	return strings.Join(parts, " ")
}

// oracleTable is what a case expects of one of its tables.
type oracleTable struct {
	name string
	// change and method are DIFF SUMMARY's; n its counts.
	change, method string
	n              mergeCounts
	// diff are DIFF's rows of the table (diffLine), sorted.
	diff []string
	// before is production before the promote; want production after it
	// (when it applies).
	before, want oRows
}

// oracleRun is one case's review and promote, checked against tables.
type oracleRun struct {
	root     *sql.DB
	acct     diffAccount
	sc       *sql.Conn
	db       string
	strategy string
	tables   []oracleTable
	// overwrite are the tables a promote must name in OVERWRITE (compared
	// whole): refused without.
	overwrite []string
	// fkBroken: the merge leaves a child row without its parent, so the
	// promote fails (production keeps its rows).
	fkBroken bool
	// story is the workload, for failures.
	story string
}

// conflicts are the conflicting rows of every table.
func (r *oracleRun) conflicts() int64 {
	var n int64
	for _, ot := range r.tables {
		n += ot.n.conflicts
	}
	return n
}

// check runs the review and the promote and checks them.
func (r *oracleRun) check(t *testing.T) {
	t.Helper()
	for _, ot := range r.tables {
		t.Logf("%s: %s by %s, %+v, %d DIFF rows", ot.name, ot.change, ot.method, ot.n, len(ot.diff))
	}
	r.checkSummary(t)
	r.checkDiff(t)
	over := ""
	if len(r.overwrite) > 0 {
		over = " OVERWRITE " + strings.Join(r.overwrite, ", ")
	}
	promoteRightsFor(t, r.root, r.acct, r.sc, "SANDBOX PROMOTE STRATEGY OURS"+over, r.db)
	if over != "" {
		r.refusedWhole(t)
	}
	clauses := "STRATEGY " + r.strategy + over
	digest, rows := promoteDryRun(t, r.sc, clauses, r.conflicts())
	stale := "sha256:" + strings.Repeat("0", 64)
	_, err := r.sc.ExecContext(context.Background(), "SANDBOX PROMOTE "+clauses+" MATCHING '"+stale+"'")
	if e := mysqlErr(err); !strings.HasPrefix(e, "1105") || !strings.Contains(e, "not the "+stale+" that was reviewed") {
		t.Errorf("PROMOTE MATCHING a digest of another plan: %s, want 1105", e)
	}
	_, err = r.sc.ExecContext(context.Background(), "SANDBOX PROMOTE "+clauses+" MATCHING '"+digest+"'")
	applied := false
	switch e := mysqlErr(err); {
	case r.strategy == "FAIL" && r.conflicts() > 0:
		if !strings.HasPrefix(e, "1105") || !strings.Contains(e, fmt.Sprintf("%d rows", r.conflicts())) {
			t.Errorf("PROMOTE with %d conflicting rows: %s, want 1105 naming them", r.conflicts(), e)
		}
	case r.fkBroken:
		if !strings.Contains(e, "foreign key constraint fails") {
			t.Errorf("PROMOTE of a merge that leaves a child without its parent: %s, want a foreign key's refusal", e)
		}
		wantString(t, r.root, "SELECT COUNT(*) FROM _sqlfork_meta.promotes WHERE name = '"+r.db+"' AND outcome = 'failed'", "1",
			"promotes recorded failed: %s, want 1")
	case err != nil:
		t.Errorf("PROMOTE %s: %s", clauses, e)
	default:
		applied = true
	}
	if applied {
		// What it applied is what the dry run showed.
		sum := sha256.Sum256([]byte(strings.Join(rows, ";\n") + ";\n"))
		wantString(t, r.root, "SELECT export_sha256 FROM _sqlfork_meta.promotes WHERE name = '"+r.db+"' AND outcome = 'committed'",
			hex.EncodeToString(sum[:]), "the rows applied have the checksum %s, not the dry run's")
	}
	r.checkProduction(t, applied)
	if applied {
		r.checkAfter(t)
	}
}

// checkSummary: DIFF SUMMARY lists each table the case expects changed,
// with its counts, and no other.
func (r *oracleRun) checkSummary(t *testing.T) {
	t.Helper()
	sum := diffSummary(t, r.sc, "SANDBOX DIFF SUMMARY")
	seen := map[string]bool{}
	for _, ot := range r.tables {
		name := r.db + "." + ot.name
		got, ok := sum[name]
		seen[name] = true
		if ot.change == "forked" && ot.n == (mergeCounts{}) {
			if ok {
				t.Errorf("DIFF SUMMARY lists %s, which the sandbox did not change: %+v", name, got)
			}
			continue
		}
		want := sumRow{change: ot.change, ins: ot.n.ins, upd: ot.n.upd, del: ot.n.del, conflicts: ot.n.conflicts, keyKind: "primary",
			method: ot.method, note: got.note}
		if got != want {
			t.Errorf("DIFF SUMMARY %s: %+v, want %+v", name, got, want)
		}
	}
	for name, got := range sum {
		if !seen[name] {
			t.Errorf("DIFF SUMMARY lists %s: %+v", name, got)
		}
	}
}

// checkDiff: SANDBOX DIFF lists exactly the rows the oracle finds, and
// one ddl row for an altered table.
func (r *oracleRun) checkDiff(t *testing.T) {
	t.Helper()
	detail := diffDetail(t, r.sc, "SANDBOX DIFF")
	for _, ot := range r.tables {
		name := r.db + "." + ot.name
		var got []string
		ddl := 0
		for _, d := range detail {
			switch {
			case d.table != name:
			case d.op == "ddl":
				ddl++
			default:
				got = append(got, diffLine(d.op, jsonImage(t, d.key), jsonImage(t, d.before), jsonImage(t, d.after), jsonImage(t, d.production)))
			}
		}
		slices.Sort(got)
		if want := map[bool]int{true: 1}[ot.change == "altered"]; ddl != want {
			t.Errorf("DIFF of %s: %d ddl rows, want %d", name, ddl, want)
		}
		if !slices.Equal(got, ot.diff) {
			t.Errorf("DIFF of %s:\n  %s\nwant\n  %s\nmissing\n  %s\nextra\n  %s\nsteps:\n%s", name, strings.Join(got, "\n  "),
				strings.Join(ot.diff, "\n  "), strings.Join(without(ot.diff, got), "\n  "), strings.Join(without(got, ot.diff), "\n  "), r.story)
		}
	}
}

// without is the lines of a not in b.
func without(a, b []string) []string {
	var out []string
	for _, l := range a {
		if !slices.Contains(b, l) {
			out = append(out, l)
		}
	}
	return out
}

// refusedWhole: a promote that does not name the tables compared whole
// in OVERWRITE is refused (1105), a dry run too, and production keeps its
// rows.
func (r *oracleRun) refusedWhole(t *testing.T) {
	t.Helper()
	for _, q := range []string{"SANDBOX PROMOTE STRATEGY " + r.strategy, "SANDBOX PROMOTE STRATEGY " + r.strategy + " DRY RUN"} {
		_, err := r.sc.ExecContext(context.Background(), q)
		if e := mysqlErr(err); !strings.HasPrefix(e, "1105") || !strings.Contains(e, "cannot be told from production's changes") ||
			!strings.Contains(e, "OVERWRITE") {
			t.Errorf("%s of a table compared whole: %s, want 1105 naming OVERWRITE", q, e)
		}
	}
	for _, ot := range r.tables {
		if got := readORows(t, r.root, r.db, ot.name); !got.equal(ot.before) {
			t.Errorf("a promote refused changed production's %s:\n %s\nwas\n %s", ot.name, got, ot.before)
		}
	}
}

// checkProduction: production's rows and columns are the oracle's
// (applied), or as they were.
func (r *oracleRun) checkProduction(t *testing.T, applied bool) {
	t.Helper()
	for _, ot := range r.tables {
		want := ot.before
		if applied {
			want = ot.want
		}
		if got := readORows(t, r.root, r.db, ot.name); !got.equal(want) {
			t.Errorf("production's %s after PROMOTE %s (applied %v):\n %s\nwant\n %s\nbefore\n %s\nsteps:\n%s", ot.name, r.strategy, applied,
				got, want, ot.before, r.story)
		}
	}
}

// checkAfter: a table promoted has the sandbox's definition in
// production, and the diff shows only the conflicts THEIRS left.
func (r *oracleRun) checkAfter(t *testing.T) {
	t.Helper()
	sum := diffSummary(t, r.sc, "SANDBOX DIFF SUMMARY")
	for _, ot := range r.tables {
		name := r.db + "." + ot.name
		_, p := queryRows(t, r.root, "SHOW CREATE TABLE `"+r.db+"`.`"+ot.name+"`")
		_, s := queryRows(t, r.sc, "SHOW CREATE TABLE `"+ot.name+"`")
		if p[0][1].String != s[0][1].String {
			t.Errorf("production's %s after PROMOTE:\n%s\nthe sandbox's:\n%s", ot.name, p[0][1].String, s[0][1].String)
		}
		left := int64(0)
		if r.strategy == "THEIRS" {
			left = ot.n.conflicts
		}
		got, ok := sum[name]
		if ok && got.change != "forked" || got.ins+got.upd+got.del != left || got.conflicts != left {
			t.Errorf("DIFF SUMMARY of %s after PROMOTE STRATEGY %s: %+v, want %d rows, all conflicts", name, r.strategy, got, left)
		}
	}
}
