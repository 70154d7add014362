package integration

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestPromoteMergeOracleFK: a parent p and a child ch with a foreign key
// (no action: RESTRICT) between them. The sandbox inserts a new parent and
// children of it while production deletes a parent the sandbox did not
// touch (its children first); then random steps of both sides update,
// insert, move and delete children and parents. The oracle merges each
// table by cell (mergeOracle) and checks the merge against the foreign
// key: when every child's parent is there, PROMOTE — which orders its
// statements so that the key holds at each (parents inserted first,
// children deleted first) — leaves production as the merge says; when
// the merge leaves a child without its parent (the sandbox deleted a
// parent production gave a child, say), the promote fails as the key
// refuses it (1451/1452) and production keeps its rows (docs/SANDBOXES.md,
// EXPORT: "a row whose parent production no longer has fails (1452), as
// it would have in the sandbox"). Each case then runs oracleRun's checks.
func TestPromoteMergeOracleFK(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	for _, acct := range e.accts {
		for seed := range uint64(3) {
			for _, strategy := range []string{"FAIL", "THEIRS", "OURS"} {
				t.Run(fmt.Sprintf("%s/%d/%s", acct.name, seed, strategy), func(t *testing.T) {
					db := fmt.Sprintf("ofk_%s_%d_%s", acct.short(), seed, strings.ToLower(strategy))
					steps := newFKWorkload(rand.New(rand.NewPCG(seed, 27)), 16+8*int(seed))
					e.database(t, db, parentChildSchema())
					sc := conn(t, openDB(t, acct.dsn(db, db)))
					direct := openDB(t, prod.DSN(db))
					base := map[string]oRows{"p": readORows(t, root, db, "p"), "ch": readORows(t, root, db, "ch")}
					runSteps(t, steps, sc, direct)
					r := &oracleRun{root: root, acct: acct, sc: sc, db: db, strategy: strategy, story: (&mergeWorkload{steps: steps}).String()}
					merged := map[string]map[string][]string{}
					for _, name := range []string{"p", "ch"} {
						ours, theirs := readORows(t, sc, db, name), readORows(t, root, db, name)
						rows, n := mergeOracle(base[name].rows, ours.rows, theirs.rows, nil, strategy)
						ot := oracleTable{name: name, change: "forked", method: "capture", n: n, before: theirs,
							want: oRows{cols: theirs.cols, rows: rows}}
						ot.diff = capturedDiff("id", theirs.cols, base[name].rows, ours.rows, theirs.rows, make([]bool, len(theirs.cols)))
						r.tables = append(r.tables, ot)
						merged[name] = rows
					}
					for id, c := range merged["ch"] {
						if _, ok := merged["p"][c[0]]; !ok && (strategy != "FAIL" || r.conflicts() == 0) {
							t.Logf("the merge leaves child %s without its parent %s", id, c[0])
							r.fkBroken = true
						}
					}
					r.check(t)
				})
			}
		}
	}
}

// parentChildSchema is p (8 parents) and ch (16 children, two a parent).
func parentChildSchema() string {
	var ps, cs []string
	for i := 1; i <= 8; i++ {
		ps = append(ps, fmt.Sprintf("(%d, 'p%d')", i, i))
	}
	for i := 1; i <= 16; i++ {
		cs = append(cs, fmt.Sprintf("(%d, %d, %d)", i, 1+(i-1)%8, i%3))
	}
	return "CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(8)) ENGINE=InnoDB; " +
		"CREATE TABLE ch (id INT PRIMARY KEY, pid INT NOT NULL, v INT, KEY (pid), CONSTRAINT ch_p FOREIGN KEY (pid) REFERENCES p (id)) ENGINE=InnoDB; " +
		"INSERT INTO p VALUES " + strings.Join(ps, ", ") + "; INSERT INTO ch VALUES " + strings.Join(cs, ", ") + ";"
}

// newFKWorkload: the sandbox inserts parent 24 and children 40 and 41 of
// it, production deletes parent 8 and its children (8, 16), which no
// other step touches; then n random steps of either side on parents 1-7
// and 20-23 (new) and children 1-15 but 8, and 30-35 (new). A write the
// key refuses (a child of a parent that side has not) is IGNOREd.
func newFKWorkload(rng *rand.Rand, n int) []mergeStep {
	steps := []mergeStep{
		{sandbox: true, sql: "INSERT INTO p VALUES (24, 'new')"},
		{sandbox: true, sql: "INSERT INTO ch VALUES (40, 24, 1);\nINSERT INTO ch VALUES (41, 24, 2)"},
		{sandbox: false, sql: "DELETE FROM ch WHERE pid = 8;\nDELETE FROM p WHERE id = 8"},
	}
	parent := func() int {
		if rng.IntN(3) == 0 {
			return 20 + rng.IntN(4)
		}
		return 1 + rng.IntN(7)
	}
	child := func() int {
		if rng.IntN(3) == 0 {
			return 30 + rng.IntN(6)
		}
		return []int{1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15}[rng.IntN(14)]
	}
	for range n {
		s := mergeStep{sandbox: rng.IntN(2) == 0}
		switch op := rng.IntN(7); op {
		case 0:
			s.sql = fmt.Sprintf("UPDATE p SET name = 'n%d' WHERE id = %d", rng.IntN(3), parent())
		case 1:
			id := 20 + rng.IntN(4)
			s.sql = fmt.Sprintf("INSERT IGNORE INTO p VALUES (%d, 'q%d')", id, rng.IntN(2))
		case 2:
			s.sql = fmt.Sprintf("INSERT IGNORE INTO ch VALUES (%d, %d, %d)", 30+rng.IntN(6), parent(), rng.IntN(3))
		case 3:
			s.sql = fmt.Sprintf("UPDATE ch SET v = %d WHERE id = %d", rng.IntN(4), child())
		case 4:
			s.sql = fmt.Sprintf("UPDATE IGNORE ch SET pid = %d WHERE id = %d", parent(), child())
		case 5:
			s.sql = fmt.Sprintf("DELETE FROM ch WHERE id = %d", child())
		default:
			p := parent()
			s.sql = fmt.Sprintf("DELETE FROM ch WHERE pid = %d;\nDELETE FROM p WHERE id = %d", p, p)
		}
		steps = append(steps, s)
	}
	return steps
}
