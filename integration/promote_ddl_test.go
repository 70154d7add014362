package integration

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestPromoteMergeOracleDDL: random workloads change rows of t (id, a, b,
// c) in a sandbox while production changes other rows, the same rows,
// other columns of the same rows, inserts and deletes; midway the sandbox
// alters t (alterCases). Where the capture follows the ALTER (docs/
// SANDBOXES.md, "Diff, export, promote": ADD COLUMN of one constant, DROP
// COLUMN, indexes, MODIFY to a wider type), the table is diffed by row in
// the sandbox's columns:
// production's rows take an added column's constant (and never conflict
// in it), a dropped column is gone from every image — what production
// wrote to it goes with the column — and the oracle's three-way merge by
// cell (mergeOracle, capturedDiff) says what DIFF lists and what every
// strategy leaves in production. Where it cannot (RENAME COLUMN, DROP and
// ADD COLUMN at once), the table is compared
// whole: DIFF lists each row whose shared columns differ from
// production's (comparedDiff), PROMOTE is refused unless OVERWRITE names
// the table, and with it production takes the sandbox's rows whole,
// whatever the strategy. Each case then runs oracleRun's checks.
func TestPromoteMergeOracleDDL(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	for _, dc := range alterCases {
		for _, acct := range e.accts {
			for seed := range uint64(3) {
				for _, strategy := range []string{"FAIL", "THEIRS", "OURS"} {
					t.Run(fmt.Sprintf("%s/%s/%d/%s", dc.name, acct.name, seed, strategy), func(t *testing.T) {
						db := fmt.Sprintf("od_%s_%s_%d_%s", dc.name, acct.short(), seed, strings.ToLower(strategy))
						w := newDDLWorkload(rand.New(rand.NewPCG(seed, 26)), 24+16*int(seed), dc)
						e.database(t, db, w.schema())
						sc := conn(t, openDB(t, acct.dsn(db, db)))
						direct := openDB(t, prod.DSN(db))
						// The first write forks t: base is production then.
						mustExecC(t, sc, "UPDATE t SET a = a WHERE id = 0")
						base := readORows(t, root, db, "t")
						w.run(t, sc, direct)
						ours, theirs := readORows(t, sc, db, "t"), readORows(t, root, db, "t")
						if !slices.Equal(ours.cols, w.cols) {
							t.Fatalf("the sandbox's t has columns %v, want %v", ours.cols, w.cols)
						}
						r := &oracleRun{root: root, acct: acct, sc: sc, db: db, strategy: strategy, story: w.String()}
						r.tables = []oracleTable{w.expect(t, base, ours, theirs, strategy)}
						if dc.whole {
							r.overwrite = []string{db + ".t"}
						}
						r.check(t)
					})
				}
			}
		}
	}
}

// alterCase is the DDL a workload's sandbox runs midway, each ALTER at a
// step of its own, in order.
type alterCase struct {
	name   string
	alters []ddlAlter
	// whole: the capture cannot follow the ALTER (docs/SANDBOXES.md): the
	// table is compared whole.
	whole bool
}

// ddlAlter is one ALTER TABLE t and what it does to t's columns.
type ddlAlter struct {
	sql string
	// add are the columns it adds, in order, with the constant every row
	// gets.
	add [][2]string
	// drop are the columns it drops; rename a column's new name.
	drop   []string
	rename [2]string
	// widen: a and b take values their old types could not hold.
	widen bool
}

var alterCases = []alterCase{
	{name: "addnull", alters: []ddlAlter{{sql: "ALTER TABLE t ADD COLUMN e VARCHAR(8) NULL", add: [][2]string{{"e", "NULL"}}}}},
	{name: "adddrop", alters: []ddlAlter{
		{sql: "ALTER TABLE t ADD COLUMN d INT NOT NULL DEFAULT 5", add: [][2]string{{"d", "5"}}},
		{sql: "ALTER TABLE t DROP COLUMN c", drop: []string{"c"}},
	}},
	{name: "drop", alters: []ddlAlter{{sql: "ALTER TABLE t DROP COLUMN c", drop: []string{"c"}}}},
	{name: "index", alters: []ddlAlter{{sql: "ALTER TABLE t ADD INDEX ia (a), ADD UNIQUE KEY ub (b, id)"}}},
	{name: "uniqcol", alters: []ddlAlter{{sql: "ALTER TABLE t ADD COLUMN u INT NULL, ADD UNIQUE KEY uu (u)", add: [][2]string{{"u", "NULL"}}}}},
	{name: "widen", alters: []ddlAlter{{sql: "ALTER TABLE t MODIFY a BIGINT, MODIFY b VARCHAR(20)", widen: true}}},
	{name: "rename", whole: true, alters: []ddlAlter{{sql: "ALTER TABLE t RENAME COLUMN c TO cc", rename: [2]string{"c", "cc"}}}},
	{name: "dropadd", whole: true, alters: []ddlAlter{{sql: "ALTER TABLE t DROP COLUMN c, ADD COLUMN e VARCHAR(8) NULL",
		drop: []string{"c"}, add: [][2]string{{"e", "NULL"}}}}},
}

// ddlWorkload is a random interleaving of the sandbox's and production's
// writes to t, with the case's ALTERs in the sandbox.
type ddlWorkload struct {
	rows  int
	steps []mergeStep
	// cols are the sandbox's columns of t (but id) at the end; added the
	// constant of each column an ALTER added.
	cols  []string
	added map[string]string
	// whole: the capture does not follow the ALTERs.
	whole bool
}

func newDDLWorkload(rng *rand.Rand, steps int, dc alterCase) *ddlWorkload {
	w := &ddlWorkload{rows: 24, cols: []string{"a", "b", "c"}, added: map[string]string{}, whole: dc.whole}
	at := rng.Perm(steps)[:len(dc.alters)]
	slices.Sort(at)
	prodCols := slices.Clone(w.cols)
	widened := false
	val := func(col string, id int, sandbox bool) string {
		n := rng.IntN(5)
		switch {
		case col == "d":
			return fmt.Sprint(4 + n%3)
		case col == "u":
			return fmt.Sprint(10*id + n%3)
		case n == 4:
			return "NULL"
		case col == "a" && sandbox && widened && n < 2:
			return fmt.Sprint(5000000000 + n)
		case col == "b" && sandbox && widened && n < 2:
			return fmt.Sprintf("'wide-value-%d'", n)
		case col == "b":
			return "'" + string(rune('x'+n%3)) + "'"
		case col == "e":
			return fmt.Sprintf("'e%d'", n%3)
		}
		return fmt.Sprint(n)
	}
	for i := range steps {
		for len(at) > 0 && at[0] == i {
			a := dc.alters[len(dc.alters)-len(at)]
			at = at[1:]
			w.steps = append(w.steps, mergeStep{sandbox: true, sql: a.sql})
			w.alter(a)
			widened = widened || a.widen
		}
		s := mergeStep{sandbox: rng.IntN(2) == 0}
		cols := prodCols
		if s.sandbox {
			cols = w.cols
		}
		id := 1 + rng.IntN(w.rows+6)
		switch op := rng.IntN(10); {
		case op < 6:
			var set []string
			for _, c := range cols {
				if rng.IntN(2) == 0 {
					set = append(set, c+" = "+val(c, id, s.sandbox))
				}
			}
			if len(set) == 0 {
				set = []string{"a = " + val("a", id, s.sandbox)}
			}
			s.sql = fmt.Sprintf("UPDATE t SET %s WHERE id = %d", strings.Join(set, ", "), id)
		case op < 8:
			s.sql = fmt.Sprintf("DELETE FROM t WHERE id = %d", id)
		default:
			id = w.rows + 1 + rng.IntN(6)
			vals := []string{fmt.Sprint(id)}
			for _, c := range cols {
				vals = append(vals, val(c, id, s.sandbox))
			}
			s.sql = fmt.Sprintf("INSERT IGNORE INTO t (id, %s) VALUES (%s)", strings.Join(cols, ", "), strings.Join(vals, ", "))
		}
		w.steps = append(w.steps, s)
	}
	return w
}

// alter applies a to the sandbox's columns.
func (w *ddlWorkload) alter(a ddlAlter) {
	for _, c := range a.add {
		w.cols = append(w.cols, c[0])
		w.added[c[0]] = c[1]
	}
	for _, c := range a.drop {
		w.cols = slices.DeleteFunc(w.cols, func(x string) bool { return x == c })
	}
	if i := slices.Index(w.cols, a.rename[0]); a.rename[0] != "" && i >= 0 {
		w.cols[i] = a.rename[1]
	}
}

// schema is t with its first rows.
func (w *ddlWorkload) schema() string { return (&mergeWorkload{rows: w.rows}).schema() }

// run runs the steps: the sandbox's on sc, production's on direct.
func (w *ddlWorkload) run(t *testing.T, sc execer, direct execer) {
	t.Helper()
	runSteps(t, w.steps, sc, direct)
}

// runSteps runs steps, the sandbox's on sc, production's on direct (each
// step's statements one by one).
func runSteps(t *testing.T, steps []mergeStep, sc, direct execer) {
	t.Helper()
	for _, s := range steps {
		on := direct
		if s.sandbox {
			on = sc
		}
		for _, q := range strings.Split(s.sql, ";\n") {
			mustExecC(t, on, q)
		}
	}
}

func (w *ddlWorkload) String() string { return (&mergeWorkload{steps: w.steps}).String() }

// expect is the oracle's view of t: compared whole, production takes the
// sandbox's rows; otherwise a merge by cell in the sandbox's columns, the
// columns it added taking their constant in the fork-time rows and
// production's.
func (w *ddlWorkload) expect(t *testing.T, base, ours, theirs oRows, strategy string) oracleTable {
	t.Helper()
	ot := oracleTable{name: "t", change: "altered", before: theirs}
	if w.whole {
		ot.method, ot.want = "compare", ours
		ot.diff, ot.n = comparedDiff("id", ours, theirs)
		return ot
	}
	ot.method = "capture"
	own := make([]bool, len(w.cols))
	for i, c := range w.cols {
		own[i] = !slices.Contains(base.cols, c)
	}
	b, p := base.project(t, w.cols, w.added), theirs.project(t, w.cols, w.added)
	rows, n := mergeOracle(b, ours.rows, p, own, strategy)
	ot.n, ot.want = n, oRows{cols: w.cols, rows: rows}
	if strategy == "FAIL" && n.conflicts > 0 {
		ot.want = theirs
	}
	ot.diff = capturedDiff("id", w.cols, b, ours.rows, p, own)
	return ot
}
