package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// targetDiff is issue 15's target: SANDBOX DIFF of 100 changed rows in a
// fork of a 1M-row table.
const targetDiff = 100 * time.Millisecond

// diffSection is the report's section of the diff benchmark.
func (r *report) diffSection() string {
	d := r.diff
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	diffIntro(p, d)
	diffMainTable(p, d)
	diffSweepTable(p, d)
	diffCostTable(p, d)
	diffChecksAndRuns(p, d)
	return b.String()
}

// diffIntro writes the section's title, the table and proxies measured,
// and the main scenario.
func diffIntro(p func(string, ...any), d *diffResult) {
	o := d.opts
	rows := o.diffRows
	p("\n### Diff, export (issue 15)\n\n")
	p("`%s.%s`: %d rows shaped like sysbench's (id INT AUTO_INCREMENT primary key, k INT with an index, c CHAR(120), "+
		"pad CHAR(60)), %.1f MB (data + index), loaded in %s by `INSERT … SELECT` from `seq_1_to_%d`. Two sandbox-mode "+
		"proxies (`--mode transparent`, the root upstream account), one with change capture (the default), one with `%s`. "+
		"Each sandbox is a client connection's anonymous sandbox (go-sql-driver, text protocol); times are the client's, "+
		"from sending the statement to reading the answer's last row. p95 is by nearest rank (of 20 runs, the 19th fastest).\n\n",
		diffDB, diffTable, rows, float64(d.bytes)/1e6, fmtMs(d.load), rows, d.proxyArgsOff)
	p("**Main scenario.** A first write (`UPDATE %s SET k = k WHERE id = 0`) forks the table in a sandbox on each proxy "+
		"(capture on %s, off %s: each proxy's first fork). Then in each sandbox %d changed rows, one statement each: 40 `UPDATE … "+
		"SET k = k + 1 WHERE id = …` (ids 1–40), 30 `INSERT` (new ids), 30 `DELETE … WHERE id = …` (ids %d–%d), and one "+
		"UPDATE that changes nothing (id 41, must not show); %s through the capture-on proxy. Then 5 rows changed directly in "+
		"production: ids 1, 2 (updated in the sandbox) and %d (deleted there) — %d conflicts — and id %d updated, id %d deleted "+
		"(rows the sandbox left). Capture side table: %d rows. Measured with capture on, rounds of the four statements in turn, "+
		"%d rounds; then DIFF SUMMARY with capture off (%d runs).\n\n",
		diffTable, fmtMs(d.firstForkOn), fmtMs(d.firstForkOff), diffMain, rows/2+1, rows/2+30, fmtMs(d.changes),
		rows/2+1, diffConflicts, rows-1, rows, d.sideRowsMain, o.diffRuns, o.diffFallbackRuns)
}

// diffMainTable writes the main scenario's timings, capture on and off.
func diffMainTable(p func(string, ...any), d *diffResult) {
	p("| statement | capture | runs | median | p95 | min | max | answer rows |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|\n")
	cmdRow := func(c cmdResult, capture string) {
		p("| `%s` | %s | %d | %s | %s | %s | %s | %d |\n", c.stmt, capture, len(c.runs), fmtMs(c.median()), fmtMs(c.p95()),
			fmtMs(slices.Min(c.runs)), fmtMs(slices.Max(c.runs)), c.rows)
	}
	for _, c := range d.main {
		cmdRow(c, "on")
	}
	cmdRow(d.fallback, "off (whole-table compare)")
	if len(d.main) > 0 {
		p("\nDIFF SUMMARY without capture / with capture (medians): %.0f×.\n", ratio(float64(d.fallback.median()), float64(d.main[0].median())))
	}
}

// diffSweepTable writes DIFF SUMMARY's and DIFF's timings along the sweep.
func diffSweepTable(p func(string, ...any), d *diffResult) {
	p("\n**Sweep.** The same sandbox grown, in the same proportions (40 %% UPDATE, 30 %% INSERT, 30 %% DELETE), by ranges " +
		"of keys (`UPDATE … WHERE id BETWEEN`, `INSERT … SELECT`, `DELETE … WHERE id BETWEEN`); the 3 conflicts stay. The " +
		"table's size does not change; the changed rows do.\n\n")
	p("| changed rows | side table rows | grown in | DIFF SUMMARY median | p95 | DIFF median | p95 | DIFF per changed row |\n")
	p("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, s := range d.sweep {
		grown := "–"
		if s.growth > 0 {
			grown = fmtMs(s.growth)
		}
		p("| %d | %d | %s | %s | %s | %s | %s | %.1f µs |\n", s.changed, s.sideRows, grown, fmtMs(s.summary.median()),
			fmtMs(s.summary.p95()), fmtMs(s.detail.median()), fmtMs(s.detail.p95()),
			float64(s.detail.median())/float64(time.Microsecond)/float64(s.changed))
	}
}

// diffCostTable writes what capture costs a sandbox's writes: forks and
// the bulk UPDATE, capture on against off.
func diffCostTable(p func(string, ...any), d *diffResult) {
	o := d.opts
	rows := o.diffRows
	p("\n**What capture costs a sandbox's writes.** %d runs per setting, alternating which goes first: a new sandbox "+
		"forks the table (first write), runs `UPDATE %s SET k = k + 1 WHERE id BETWEEN %d AND %d` (%d rows; with capture each "+
		"fires the AFTER UPDATE trigger, which writes the row's fork-time image to the side table) and the same UPDATE again "+
		"(the images are there: the trigger's INSERT … ON DUPLICATE KEY UPDATE keeps them), then `SANDBOX DISCARD`. Medians.\n\n",
		o.diffReps, diffTable, rows/5+1, rows/5+o.diffBulkRows, o.diffBulkRows)
	p("| | capture on | capture off | on / off | on, all runs | off, all runs |\n")
	p("|---|---:|---:|---:|---|---|\n")
	costRow := func(name string, on, off []time.Duration) {
		p("| %s | %s | %s | %.2f | %s | %s |\n", name, fmtMs(medianDur(on)), fmtMs(medianDur(off)),
			ratio(float64(medianDur(on)), float64(medianDur(off))), fmtRuns(on), fmtRuns(off))
	}
	costRow(fmt.Sprintf("fork of the %d-row table", rows), d.forkOn, d.forkOff)
	costRow(fmt.Sprintf("bulk UPDATE of %d rows, first", o.diffBulkRows), d.bulkOn, d.bulkOff)
	costRow(fmt.Sprintf("bulk UPDATE of %d rows, again", o.diffBulkRows), d.againOn, d.againOff)
}

// diffChecksAndRuns writes the checks the answers passed, every run of the
// main scenario and, on a table of a million rows or more, the target.
func diffChecksAndRuns(p func(string, ...any), d *diffResult) {
	rows := d.opts.diffRows
	p("\n**Checks** (the benchmark stops on any other answer):\n\n")
	for _, c := range d.checks {
		p("- %s\n", c)
	}

	p("\n**All runs of the main scenario** (ms, in order):\n\n")
	for _, c := range d.main {
		p("- `%s`: %s\n", c.stmt, fmtRuns(c.runs))
	}
	p("- `%s` (capture off): %s\n", d.fallback.stmt, fmtRuns(d.fallback.runs))

	if rows >= 1000000 && len(d.main) >= 2 {
		det, sum := d.main[1], d.main[0]
		p("\n**Target**: SANDBOX DIFF of %d changed rows in a fork of a %d-row table < %s: DIFF median %s (p95 %s), DIFF SUMMARY median %s (p95 %s) — %s\n",
			diffMain, rows, fmtMs(targetDiff), fmtMs(det.median()), fmtMs(det.p95()), fmtMs(sum.median()), fmtMs(sum.p95()),
			verdict(det.p95() < targetDiff && sum.p95() < targetDiff))
	}
}

// fmtRuns are durations in milliseconds, comma-separated.
func fmtRuns(ds []time.Duration) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
	}
	return strings.Join(s, ", ")
}
