package integration

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// TestPromoteMergeOracle: random workloads change rows of a sandbox while
// production changes other rows, the same rows, other columns of the same
// rows, and inserts and deletes keys of its own and the sandbox's; in half
// the workloads the sandbox adds a column midway and sets it in rows. For
// every strategy, DIFF SUMMARY counts what the test's own three-way merge
// by cell (mergeOracle) finds, and PROMOTE leaves production exactly as
// that merge says: FAIL is refused on a conflict and changes nothing, THEIRS
// keeps production's value in every conflicting cell (and production's
// row where the conflict is the whole row's), OURS the sandbox's. No
// strategy changes a cell the sandbox did not change, outside conflicts.
// A DRY RUN lists the conflicts the merge finds; a promote MATCHING a
// digest of another plan is refused, and one matching the dry run's
// applies exactly the rows' statements the dry run showed.
func TestPromoteMergeOracle(t *testing.T) {
	prod, _ := env(t)
	e := newDiffEnv(t, "transparent", false, func(c *proxy.Config) { c.PromoteUser, c.PromotePassword = prod.User, prod.Password })
	root := openDB(t, prod.DSN(""))
	for _, acct := range e.accts {
		for seed := range uint64(4) {
			for _, strategy := range []string{"FAIL", "THEIRS", "OURS"} {
				t.Run(fmt.Sprintf("%s/%d/%s", acct.name, seed, strategy), func(t *testing.T) {
					name := fmt.Sprintf("mo_%s_%d_%s", acct.short(), seed, strings.ToLower(strategy))
					w := newMergeWorkload(rand.New(rand.NewPCG(seed, 25)), 12<<seed)
					e.database(t, name, w.schema())
					sc := conn(t, openDB(t, acct.dsn(name, name)))
					direct := openDB(t, prod.DSN(name))
					// The first write forks t: base is production then.
					mustExecC(t, sc, "UPDATE t SET a = a WHERE id = 0")
					base := mergeRows(t, root, name)
					for _, s := range w.steps {
						if s.sandbox {
							mustExecC(t, sc, s.sql)
						} else {
							mustExecDB(t, direct, s.sql)
						}
					}
					ours, theirs := mergeRows(t, sc, name), mergeRows(t, root, name)
					if w.alterAt >= 0 {
						// Production's rows get the added column's default
						// from the ALTER promoted, as the fork's had.
						base, theirs = withColumn(base, "5"), withColumn(theirs, "5")
					}
					var own []bool
					if w.alterAt >= 0 {
						own = []bool{false, false, false, true}
					}
					want, n := mergeOracle(base, ours, theirs, own, strategy)
					if strategy == "FAIL" && n.conflicts > 0 {
						want = mergeRows(t, root, name) // production as it was
					}
					if got := diffSummary(t, sc, "SANDBOX DIFF SUMMARY")[name+".t"]; got.ins != n.ins || got.upd != n.upd ||
						got.del != n.del || got.conflicts != n.conflicts {
						t.Errorf("DIFF SUMMARY %+v, want %+v", got, n)
					}
					promoteRights(t, root, acct, sc, name)
					digest, rows := promoteDryRun(t, sc, "STRATEGY "+strategy, n.conflicts)
					stale := "sha256:" + strings.Repeat("0", 64)
					_, err := sc.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY "+strategy+" MATCHING '"+stale+"'")
					if e := mysqlErr(err); !strings.HasPrefix(e, "1105") || !strings.Contains(e, "not the "+stale+" that was reviewed") {
						t.Errorf("PROMOTE MATCHING a digest of another plan: %s, want 1105", e)
					}
					_, err = sc.ExecContext(context.Background(), "SANDBOX PROMOTE STRATEGY "+strategy+" MATCHING '"+digest+"'")
					switch {
					case strategy == "FAIL" && n.conflicts > 0:
						if e := mysqlErr(err); !strings.HasPrefix(e, "1105") || !strings.Contains(e, fmt.Sprintf("%d rows", n.conflicts)) {
							t.Errorf("PROMOTE with %d conflicting rows: %s, want 1105 naming them", n.conflicts, e)
						}
					case err != nil:
						t.Errorf("PROMOTE: %s", mysqlErr(err))
					}
					t.Logf("%d steps: %+v", len(w.steps), n)
					if strategy != "FAIL" || n.conflicts == 0 {
						// What it applied is what the dry run showed.
						sum := sha256.Sum256([]byte(strings.Join(rows, ";\n") + ";\n"))
						wantString(t, root, "SELECT export_sha256 FROM _sqlfork_meta.promotes WHERE name = '"+name+"' AND outcome = 'committed'",
							hex.EncodeToString(sum[:]), "the rows applied have the checksum %s, not the dry run's")
					}
					if strategy != "FAIL" || n.conflicts == 0 {
						// What it wrote is production's now: the diff shows
						// only the conflicts THEIRS left.
						left := int64(0)
						if strategy == "THEIRS" {
							left = n.conflicts
						}
						got := diffSummary(t, sc, "SANDBOX DIFF SUMMARY")[name+".t"]
						if got.ins+got.upd+got.del != left || got.conflicts != left {
							t.Errorf("DIFF SUMMARY after PROMOTE STRATEGY %s: %+v, want %d rows, all conflicts", strategy, got, left)
						}
					}
					if got := mergeRows(t, root, name); !maps.EqualFunc(got, want, slices.Equal) {
						t.Errorf("production after PROMOTE STRATEGY %s:\n %s\nwant\n %s\nbase %s\nsandbox %s\nproduction before %s\nsteps:\n%s",
							strategy, mergeText(got), mergeText(want), mergeText(base), mergeText(ours), mergeText(theirs), w)
					}
				})
			}
		}
	}
}

// promoteDryRun runs PROMOTE <clauses> DRY RUN (STRATEGY …, OVERWRITE …),
// expecting conflicts conflicts, and returns the plan's digest and its
// rows' statements.
func promoteDryRun(t *testing.T, sc *sql.Conn, clauses string, conflicts int64) (digest string, rows []string) {
	t.Helper()
	cols, plan := queryRows(t, sc, "SANDBOX PROMOTE "+clauses+" DRY RUN")
	if strings.Join(cols, ",") != "step,statement" || len(plan) == 0 {
		t.Fatalf("DRY RUN: columns %v, %d rows", cols, len(plan))
	}
	var found int64
	for _, r := range plan {
		switch r[0].String {
		case "conflict":
			found++
		case "rows":
			rows = append(rows, r[1].String)
		case "digest":
			digest = r[1].String
		}
	}
	if found != conflicts || !strings.HasPrefix(digest, "sha256:") {
		t.Errorf("DRY RUN: %d conflicts, digest %q; want %d", found, digest, conflicts)
	}
	return digest, rows
}

// mergeWorkload is a random interleaving of steps of the sandbox's and
// production's writes to t (id, a, b, c): updates of random columns to values of a
// small domain (so that both sides sometimes make the same change),
// deletes, and inserts of keys past the first rows (both sides insert some
// of the same keys).
type mergeWorkload struct {
	rows  int
	steps []mergeStep
	// alterAt is the step at which the sandbox adds column d (-1: never).
	alterAt int
}

// mergeStep is one write, by the sandbox or by production.
type mergeStep struct {
	sandbox bool
	sql     string
}

func newMergeWorkload(rng *rand.Rand, steps int) *mergeWorkload {
	w := &mergeWorkload{rows: 24, alterAt: -1}
	if rng.IntN(2) == 0 {
		w.alterAt = rng.IntN(steps)
	}
	cols := []string{"a", "b", "c"}
	val := func(col string) string {
		switch n := rng.IntN(5); {
		case n == 4:
			return "NULL"
		case col == "b":
			return "'" + string(rune('x'+n%3)) + "'"
		default:
			return fmt.Sprint(n)
		}
	}
	for i := range steps {
		if i == w.alterAt {
			w.steps = append(w.steps, mergeStep{sandbox: true, sql: "ALTER TABLE t ADD COLUMN d INT NOT NULL DEFAULT 5"})
			cols = append(cols, "d")
		}
		s := mergeStep{sandbox: rng.IntN(2) == 0}
		id := 1 + rng.IntN(w.rows+6)
		switch op := rng.IntN(10); {
		case op < 6:
			var set []string
			for _, c := range cols {
				if c == "d" {
					if s.sandbox && rng.IntN(2) == 0 { // production has no d; d is NOT NULL
						set = append(set, fmt.Sprintf("d = %d", 4+rng.IntN(3)))
					}
					continue
				}
				if rng.IntN(2) == 0 {
					set = append(set, c+" = "+val(c))
				}
			}
			if len(set) == 0 {
				set = []string{"a = " + val("a")}
			}
			s.sql = fmt.Sprintf("UPDATE t SET %s WHERE id = %d", strings.Join(set, ", "), id)
		case op < 8:
			s.sql = fmt.Sprintf("DELETE FROM t WHERE id = %d", id)
		default:
			s.sql = fmt.Sprintf("INSERT IGNORE INTO t (id, a, b, c) VALUES (%d, %s, %s, %s)", w.rows+1+rng.IntN(6), val("a"), val("b"), val("c"))
		}
		w.steps = append(w.steps, s)
	}
	return w
}

// schema is t with its first rows.
func (w *mergeWorkload) schema() string {
	vals := make([]string, w.rows)
	for i := range vals {
		vals[i] = fmt.Sprintf("(%d, %d, '%c', %d)", i+1, i%3, 'x'+rune(i%3), i%4)
	}
	return "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(4), c INT); INSERT INTO t VALUES " + strings.Join(vals, ", ") + ";"
}

func (w *mergeWorkload) String() string {
	var b strings.Builder
	for _, s := range w.steps {
		who := "production"
		if s.sandbox {
			who = "sandbox"
		}
		fmt.Fprintf(&b, " %-10s %s\n", who, s.sql)
	}
	return b.String()
}

// mergeRows are db.t's rows by id: the cells a, b, c, and d when t has it
// ("NULL" for NULL).
func mergeRows(t *testing.T, c rowQuerier, db string) map[string][]string {
	t.Helper()
	_, rows := queryRows(t, c, "SELECT * FROM `"+db+"`.t")
	out := map[string][]string{}
	for _, r := range rows {
		out[r[0].String] = nullText(r[1:])
	}
	return out
}

// withColumn is rows with a column of value v added.
func withColumn(rows map[string][]string, v string) map[string][]string {
	out := make(map[string][]string, len(rows))
	for k, r := range rows {
		out[k] = append(slices.Clone(r), v)
	}
	return out
}

// mergeText is rows as text, by id.
func mergeText(rows map[string][]string) string {
	keys := slices.SortedFunc(maps.Keys(rows), func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + strings.Join(rows[k], ",")
	}
	return strings.Join(parts, " ")
}

// mergeCounts are what a diff of the sandbox finds: the rows it inserted,
// updated and deleted, and those of them production changed too,
// differently (conflicts).
type mergeCounts struct{ ins, upd, del, conflicts int64 }

// mergeOracle is production after a promote by strategy of what the
// sandbox changed (ours) since the fork (base), production having
// changed to theirs meanwhile: a three-way merge by cell (mergeKey, key
// by key). own marks the columns the sandbox added (nil: none), which
// production's rows have only from the ALTER promoted. FAIL on a conflict
// leaves production as it is.
func mergeOracle(base, ours, theirs map[string][]string, own []bool, strategy string) (map[string][]string, mergeCounts) {
	out := map[string][]string{}
	var n mergeCounts
	for _, k := range mergeKeys(base, ours, theirs) {
		m := mergeKey(base, ours, theirs, own, k, strategy)
		switch m.op {
		case "insert":
			n.ins++
		case "update":
			n.upd++
		case "delete":
			n.del++
		}
		if m.conflict {
			n.conflicts++
		}
		if m.row != nil {
			out[k] = m.row
		}
	}
	if strategy == "FAIL" && n.conflicts > 0 {
		return theirs, n
	}
	return out, n
}

// mergeKeys are the keys of every map of rows, sorted.
func mergeKeys(rows ...map[string][]string) []string {
	keys := map[string]bool{}
	for _, m := range rows {
		for k := range m {
			keys[k] = true
		}
	}
	return slices.SortedFunc(maps.Keys(keys), func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
}

// merged is the merge of one key: what the sandbox did to it (op: insert,
// update, delete, "" for nothing), whether production changed it too,
// differently (conflict), and production's row after a promote by the
// strategy (nil: none).
type merged struct {
	op       string
	conflict bool
	row      []string
}

// mergeKey merges key k by cell. A row the sandbox did not change is
// production's. A row it inserted conflicts with a different row
// production inserted of the key; one it deleted with any change
// production made to it; one it updated with production's delete of it,
// or cell by cell where both changed a column to different values.
// Columns the sandbox added (own) are compared nowhere: production has no
// value of its own there.
func mergeKey(base, ours, theirs map[string][]string, own []bool, k, strategy string) merged {
	b, bok := base[k]
	s, sok := ours[k]
	p, pok := theirs[k]
	same := func(x, y []string) bool {
		for i := range x {
			if x[i] != y[i] && (i >= len(own) || !own[i]) {
				return false
			}
		}
		return true
	}
	var m merged
	switch {
	case bok == sok && slices.Equal(b, s):
		m.row = p
	case !bok:
		m.op, m.conflict = "insert", pok && !same(p, s)
		m.row = pick(m.conflict && strategy == "THEIRS", p, s)
	case !sok:
		m.op, m.conflict = "delete", pok && !same(p, b)
		m.row = pick(m.conflict && strategy == "THEIRS", p, nil)
	case !pok:
		m.op, m.conflict = "update", true
		m.row = pick(strategy == "THEIRS", nil, s)
	default:
		m.op = "update"
		m.row = make([]string, len(s))
		for i := range s {
			theirsChanged := p[i] != b[i] && (i >= len(own) || !own[i])
			cell := s[i] != b[i] && theirsChanged && p[i] != s[i]
			m.conflict = m.conflict || cell
			m.row[i] = pick(s[i] == b[i] || cell && strategy == "THEIRS", p[i], s[i])
		}
	}
	return m
}

// pick is x when c holds, y otherwise.
func pick[T any](c bool, x, y T) T {
	if c {
		return x
	}
	return y
}
