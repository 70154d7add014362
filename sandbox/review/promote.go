package review

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// SANDBOX PROMOTE applies a sandbox's export to production with the
// promote account (the everyday account may stay read-only), checking
// first, then again under lock, the rows production changed since the
// fork:
//
//  1. the diff is read in one snapshot (as EXPORT);
//  2. what cannot be checked is refused unless OURS says to apply it
//     anyway: tables compared whole (no capture) and tables the sandbox
//     dropped; a captured table whose columns production changed since the
//     fork is refused whatever the strategy;
//  3. a first check of conflicts, without locks: with FAIL, any refuses
//     the promote before production is touched;
//  4. DDL before the rows (each statement commits: it cannot share the
//     rows' transaction);
//  5. in one transaction: the changed keys of captured tables are locked
//     (SELECT … FOR UPDATE, parents first; missing keys lock their gap)
//     and checked again; FAIL rolls back on a conflict, THEIRS leaves the
//     conflicting cells as production has them, OURS writes the sandbox's;
//     then the rows are written and the transaction committed;
//  6. DDL after the rows (keys and constraints, dropped tables).
//
// A conflict is what a three-way merge by cell finds (mergeRow): a column
// both changed to different values, a key both inserted with different
// rows, a row one side deleted and the other changed. An update writes the
// columns the sandbox changed only. Every
// promote is logged ("audit") and recorded in the registry's promotes
// table, with its outcome: committed, refused, failed (production
// unchanged) or partial (DDL of step 4 applied, the rows not).

// promoteLockWait bounds the wait for the promote lock and row locks.
const promoteLockWait = 10

// PromoteOptions are what a PROMOTE asks besides its sandbox.
type PromoteOptions struct {
	// Strategy is FAIL (""), OURS or THEIRS.
	Strategy string
	// Tables are the tables to promote (none: all the sandbox changed);
	// Overwrite those compared whole whose rows production may take from
	// the sandbox whole (what production changed since the fork is lost).
	Tables, Overwrite []rewrite.Table
	// DryRun asks for the plan — its statements, conflicts and digest —
	// applied nowhere; Matching applies only the plan of that digest.
	DryRun   bool
	Matching string
}

// Promote applies sb's changes to production for user as o asks; via says
// where it was asked (sql, api). Only sb's owner and sandbox admins may,
// and only what check (the user's own account) allows.
func (m *Reviewer) Promote(ctx context.Context, sb *registry.Sandbox, user, via string, o PromoteOptions, check PromoteCheck) (*reply.Reply, error) {
	return m.PromoteAs(ctx, sb, user, via, m.reg.IsAdmin(user), o, check)
}

// PromoteAs is Promote; admin lets user promote any sandbox (the admin API).
func (m *Reviewer) PromoteAs(ctx context.Context, sb *registry.Sandbox, user, via string, admin bool, o PromoteOptions, check PromoteCheck) (*reply.Reply, error) {
	strategy := strings.ToUpper(cmp.Or(o.Strategy, "FAIL"))
	if err := m.settle(ctx, sb); err != nil {
		return nil, err
	}
	if m.promoteDial == nil {
		return nil, rewrite.Refuse(wire.ErOptionPreventsStatement, "SANDBOX PROMOTE needs a promote account: start the proxy with "+
			"--promote-user and --promote-password (an upstream account that may write production); SANDBOX EXPORT gives the statements to review and run")
	}
	if sb.Owner != user && !admin {
		return nil, rewrite.Refuse(wire.ErSpecificAccessDenied, "only the owner of sandbox %q (%s) or a sandbox admin may promote it", sb.Name, sb.Owner)
	}
	if !slices.Contains([]string{"FAIL", "OURS", "THEIRS"}, strategy) {
		return nil, rewrite.Refuse(wire.ErParse, "unknown strategy %q: use FAIL, OURS or THEIRS", strategy)
	}
	o.Strategy, o.Matching = strategy, strings.ToLower(o.Matching)
	p := &promotion{m: m, sb: sb, user: user, strategy: strategy, via: via, started: time.Now().UTC(), check: check, opts: o}
	r, err := p.run(ctx)
	if o.DryRun {
		// Nothing applied: not audited, not counted.
		m.log.Info("sandbox promote dry run", zap.String("sandbox", sb.Name), zap.String("user", user), zap.String("via", via),
			zap.String("strategy", strategy), zap.Error(err))
		return r, err
	}
	p.finish(context.WithoutCancel(ctx), err)
	p.markPromoted(context.WithoutCancel(ctx))
	return r, err
}

// promotion is one run of PROMOTE.
type promotion struct {
	m              *Reviewer
	sb             *registry.Sandbox
	user, strategy string
	via            string
	started        time.Time
	order          []*exportTable
	outcome        string
	ddlDone        bool
	rowCounts
	conflicts    int
	exportSum    string
	auditID      string
	tables       int
	conflictList []string
	// echoes are production triggers on changed tables that write other
	// changed tables (findEchoes).
	echoes []string
	// rowsStarted: the rows' statements began; nonTx names the tables
	// written without transactions (nonTransactional).
	rowsStarted bool
	nonTx       []string
	// check refuses what the promoting user's own account could not do.
	check PromoteCheck
	// dbs are the databases the promote makes or drops.
	dbs  []dbDiff
	opts PromoteOptions
}

// nonTransactional reports whether the promote writes rows of a table
// whose engine has no transactions (MyISAM, Aria…): a rollback keeps them,
// and SELECT … FOR UPDATE does not lock them.
func (p *promotion) nonTransactional() bool {
	p.nonTx = p.nonTx[:0]
	for _, et := range p.order {
		if t := et.td.t; t.prodOK && !t.prod.Transactional && !t.prod.View && len(et.td.rows)+len(et.all)+len(et.gone) > 0 {
			p.nonTx = append(p.nonTx, t.logical.String())
		}
	}
	return len(p.nonTx) > 0
}

// changes reports whether et has rows or DDL to apply.
func (et *exportTable) changes() bool {
	return len(et.td.rows)+len(et.all)+len(et.gone) > 0 || et.td.t.change != "forked"
}

// findEchoes lists production's triggers on the tables the promote writes
// that write other tables it writes: in the sandbox their copies wrote
// those rows already, which the diff holds, and in production they would
// write them again.
func (p *promotion) findEchoes(ctx context.Context, d *differ) error {
	changed := map[string]bool{}
	for _, et := range p.order {
		if et.changes() {
			changed[p.m.names.Key(et.td.t.logical)] = true
		}
	}
	for _, et := range p.order {
		t := et.td.t.logical
		if !et.changes() || !et.td.t.prodOK || et.td.t.prod.View {
			continue
		}
		trs, err := p.m.triggers.Read(ctx, d.c, t)
		if err != nil {
			return err
		}
		for _, tc := range trs {
			for _, bs := range catalog.BodyStatements(tc.Body) {
				for _, w := range bs.Writes {
					w = p.m.names.Norm(w)
					if k := p.m.names.Key(w); changed[k] && k != p.m.names.Key(t) {
						p.echoes = append(p.echoes, fmt.Sprintf("trigger %s on %s writes %s", quote.Ident(tc.Trigger.Name), t, w))
					}
				}
			}
		}
	}
	return nil
}

// plan reads the diff in one snapshot, as EXPORT, and refuses what cannot
// be checked under the strategy or what the promoting user's own account
// could not do.
func (p *promotion) plan(ctx context.Context) error {
	t0 := time.Now()
	err := p.m.withSnapshot(ctx, p.sb, true, func(d *differ) error {
		tables, err := d.diffTables(ctx, nil)
		if err != nil {
			return err
		}
		if p.order, err = d.exportPlan(ctx, tables); err != nil {
			return err
		}
		if p.order, err = p.selected(p.order); err != nil {
			p.outcome = "refused" // a table named that it did not change
			return err
		}
		p.dbs = p.selectedDBs(d.dbs)
		return p.findEchoes(ctx, d)
	})
	if err != nil {
		return err
	}
	p.m.observer().Diffed("promote", time.Since(t0))
	for _, et := range p.order {
		if et.changes() {
			p.tables++
		}
	}
	p.tables += len(p.dbs)
	err = p.checkable()
	if err == nil {
		err = p.checkDatabases()
	}
	if err == nil && p.check != nil {
		err = p.check(ctx, p.needs())
	}
	if err != nil {
		p.outcome = "refused"
	}
	return err
}

func (p *promotion) run(ctx context.Context) (*reply.Reply, error) {
	p.outcome = "failed"
	if err := p.plan(ctx); err != nil {
		return nil, err
	}
	pc, release, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	// A first look, without locks: a dry run answers it; FAIL, or a plan
	// that is not the one reviewed, refuses before touching anything.
	found, err := p.findConflicts(ctx, pc, false)
	if err != nil {
		return nil, err
	}
	d := &differ{m: p.m, sb: p.sb, dbs: p.dbs}
	if p.opts.DryRun {
		return p.dryRun(p.statements(d, found), conflictTexts(found)), nil
	}
	if p.opts.Matching != "" {
		if digest := planDigest(p.strategy, conflictTexts(found), p.statements(d, found)); digest != p.opts.Matching {
			p.outcome = "refused"
			return nil, p.stalePlan(digest)
		}
	}
	if p.strategy == "FAIL" && len(found) > 0 {
		p.outcome = "refused"
		return nil, p.conflictRefusal(found)
	}
	p.startAudit(ctx)
	for _, s := range d.steps(p.order).pre {
		if _, err := pc.Exec(ctx, s); err != nil {
			return nil, p.failed(fmt.Errorf("promote: %s: %w", abbreviate(s), err))
		}
		p.ddlDone = true
	}
	st, err := p.writeRows(ctx, pc, d)
	if err != nil {
		return nil, err
	}
	p.outcome = "committed"
	for _, s := range st.post {
		if _, err := pc.Exec(ctx, s); err != nil {
			p.outcome = "partial"
			return nil, fmt.Errorf("promote: the rows are committed, but %s failed: %w", abbreviate(s), err)
		}
	}
	p.rebase(ctx)
	return p.reply(), nil
}

// connect opens the promote account's connection, set as an export's
// header sets a session, and takes the sandbox's promote lock; release
// gives both back.
func (p *promotion) connect(ctx context.Context) (pc sideconn.Conn, release func(), err error) {
	if pc, err = p.m.promoteDial(ctx); err != nil {
		return nil, nil, fmt.Errorf("connect with the promote account: %w", err)
	}
	for _, s := range append(slices.Clone(exportHeader), fmt.Sprintf("SET SESSION innodb_lock_wait_timeout = %d", promoteLockWait)) {
		if _, err := pc.Exec(ctx, s); err != nil {
			_ = pc.Close()
			return nil, nil, fmt.Errorf("prepare the promote connection (%s): %w", s, err)
		}
	}
	lock := p.m.reg.LockName(p.sb.ID, registry.PromoteLockKey)
	rows, err := pc.Query(ctx, fmt.Sprintf("SELECT GET_LOCK(%s, %d)", quote.String(lock), promoteLockWait))
	if err == nil && (len(rows) != 1 || sideconn.Str(rows[0][0]) != "1") {
		p.outcome = "refused"
		err = rewrite.Refuse(wire.ErLockWaitTimeout, "another PROMOTE of sandbox %q is running; retry when it is done", p.sb.Name)
	}
	if err != nil {
		_ = pc.Close()
		return nil, nil, err
	}
	return pc, func() {
		_, _ = pc.Query(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK("+quote.String(lock)+")")
		_ = pc.Close()
	}, nil
}

// writeRows writes the rows in one transaction: the changed keys locked
// and checked again (FAIL rolls back on a conflict, THEIRS leaves those
// rows out), the user's rights asked again for what the locked look
// changed, the rows written, COMMIT. It returns the steps written.
func (p *promotion) writeRows(ctx context.Context, pc sideconn.Conn, d *differ) (exportSteps, error) {
	if _, err := pc.Exec(ctx, "START TRANSACTION"); err != nil {
		return exportSteps{}, p.failed(err)
	}
	rollback := func() { _, _ = pc.Exec(context.WithoutCancel(ctx), "ROLLBACK") }
	refused := func(err error) (exportSteps, error) {
		rollback()
		p.outcome = "refused"
		if p.ddlDone {
			p.outcome = "partial"
		}
		return exportSteps{}, err
	}
	found, err := p.findConflicts(ctx, pc, true)
	if err != nil {
		rollback()
		return exportSteps{}, p.failed(err)
	}
	if p.strategy == "FAIL" && len(found) > 0 {
		return refused(p.conflictRefusal(found))
	}
	p.conflicts = len(found)
	conflicts := conflictTexts(found) // before THEIRS leaves rows out
	if p.strategy == "THEIRS" {
		p.dropConflicting(found)
	}
	if p.check != nil {
		// Under lock, an update of a row production deleted meanwhile is
		// written as an insert: the user's rights are asked again.
		if err := p.check(ctx, p.needs()); err != nil {
			return refused(err)
		}
	}
	st := d.steps(p.order)
	if digest := planDigest(p.strategy, conflicts, st); p.opts.Matching != "" && digest != p.opts.Matching {
		// Production changed between the first look and the locks.
		return refused(p.stalePlan(digest))
	}
	p.count()
	sum := sha256.New()
	for _, s := range st.rows {
		p.rowsStarted = true
		if _, err := pc.Exec(ctx, s); err != nil {
			rollback()
			return exportSteps{}, p.failed(fmt.Errorf("promote: %s: %w", abbreviate(s), err))
		}
		sum.Write([]byte(s + ";\n"))
	}
	if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
		rollback()
		return exportSteps{}, p.failed(err)
	}
	p.exportSum = hex.EncodeToString(sum.Sum(nil))
	return st, nil
}

// reply is a committed promote's answer.
func (p *promotion) reply() *reply.Reply {
	info := fmt.Sprintf("promoted sandbox %s: %d rows inserted, %d updated, %d deleted in %d tables", p.sb.Name, p.ins, p.upd, p.del, p.tables)
	switch {
	case p.conflicts > 0 && p.strategy == "OURS":
		info += fmt.Sprintf("; %d rows production had changed took the sandbox's values", p.conflicts)
	case p.conflicts > 0:
		info += fmt.Sprintf("; %d rows production had changed kept production's values", p.conflicts)
	}
	return &reply.Reply{Info: info, Affected: uint64(p.ins + p.upd + p.del)}
}

// failed records a failure: partial once DDL was applied, or rows were
// written to a table without transactions (a rollback leaves them).
func (p *promotion) failed(err error) error {
	p.outcome = "failed"
	if p.rowsStarted && p.nonTransactional() {
		p.outcome = "partial"
		return fmt.Errorf("%w (rows already written to tables without transactions stay: %s)", err, strings.Join(p.nonTx, ", "))
	}
	if p.ddlDone {
		p.outcome = "partial"
		return fmt.Errorf("%w (the DDL before the rows was applied; production's rows are unchanged)", err)
	}
	return err
}

// checkable refuses what PROMOTE cannot check under the strategy.
func (p *promotion) checkable() error {
	if len(p.echoes) > 0 && p.strategy != "OURS" {
		return rewrite.Refuse(wire.ErUnknown, "production's triggers would write again rows the sandbox's changes hold (%s): "+
			"promoting would write them twice; review SANDBOX EXPORT, or STRATEGY OURS to apply it anyway", strings.Join(p.echoes, "; "))
	}
	for _, et := range p.order {
		dt := et.td.t
		if !et.changes() {
			continue
		}
		if et.skip != "" {
			return rewrite.Refuse(wire.ErOptionPreventsStatement, "PROMOTE refused: %s; discard that change in the sandbox "+
				"(SANDBOX DIFF shows it) or apply it yourself", et.skip)
		}
		switch {
		case dt.method == methodView, dt.method == methodSequence:
		case dt.method == methodCapture && !sameColumns(dt.base, dt.prod):
			return rewrite.Refuse(wire.ErUnknown, "production's table %s changed its columns or key since the sandbox forked it; "+
				"SANDBOX EXPORT gives the statements to adapt and run", dt.logical)
		case dt.method == methodCompare && !p.overwrites(dt.logical):
			// No fork-time image: production's changes since the fork
			// cannot be told from the sandbox's, whatever the strategy.
			return rewrite.Refuse(wire.ErUnknown, "PROMOTE refused: the rows of %s cannot be told from production's changes since the fork "+
				"(%s), so promoting them would revert or delete what production changed; SANDBOX EXPORT gives the statements to review, "+
				"or name the table in OVERWRITE %s to replace production's rows with the sandbox's", dt.logical, dt.note, dt.logical)
		case p.strategy == "OURS", dt.method == methodCompare:
		case dt.method == methodDropped:
			return rewrite.Refuse(wire.ErUnknown, "the sandbox dropped %s, and production's changes to it since cannot be checked; "+
				"STRATEGY OURS drops it anyway", dt.logical)
		case dt.method == methodCreated && dt.prodOK:
			return rewrite.Refuse(wire.ErUnknown, "the sandbox created %s, and production has a table of that name (made since the fork, "+
				"or the one the sandbox dropped); STRATEGY OURS drops production's and makes the sandbox's", dt.logical)
		}
	}
	return nil
}

// count sums the rows the promote writes.
func (p *promotion) count() {
	p.rowCounts = rowCounts{}
	for _, et := range p.order {
		rows := et.td.rows
		if et.td.t.whole() {
			p.upd += int64(len(et.all))
			p.del += int64(len(et.gone))
			continue
		}
		for _, dr := range rows {
			p.add(dr.op, int64(max(dr.count, 1)))
		}
	}
}

// startAudit records the promote in the registry before production is
// touched.
func (p *promotion) startAudit(ctx context.Context) {
	if err := p.m.reg.WithConn(ctx, func(c sideconn.Conn) error { return p.insertAudit(ctx, c) }); err != nil {
		p.m.log.Warn("record a promote in the registry", zap.Error(err))
	}
}

// insertAudit writes the promote's row, "running", and keeps its id.
func (p *promotion) insertAudit(ctx context.Context, c sideconn.Conn) error {
	if _, err := c.Exec(ctx, "INSERT INTO "+p.m.names.Q("promotes")+" (sandbox_id, name, owner, user, via, strategy, started_at, outcome) VALUES ("+
		strings.Join([]string{quote.String(p.sb.ID), quote.String(p.sb.Name), quote.String(p.sb.Owner),
			quote.String(p.user), quote.String(p.via), quote.String(p.strategy), sideconn.SQLTime(p.started), "'running'"}, ", ")+")"); err != nil {
		return err
	}
	rows, err := c.Query(ctx, "SELECT LAST_INSERT_ID()")
	if err == nil && len(rows) == 1 {
		p.auditID = sideconn.Str(rows[0][0])
	}
	return err
}

// finish logs the promote, records its outcome and counts it.
func (p *promotion) finish(ctx context.Context, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
		var r *rewrite.Refusal
		if errors.As(err, &r) {
			msg = r.Message
		}
	}
	p.m.observer().Promoted(p.strategy, p.outcome, p.conflicts)
	p.m.log.Info("sandbox promote", zap.String("audit", "promote"), zap.String("sandbox", p.sb.Name), zap.String("owner", p.sb.Owner),
		zap.String("user", p.user), zap.String("via", p.via), zap.String("strategy", p.strategy), zap.String("outcome", p.outcome),
		zap.Int("tables", p.tables), zap.Int64("inserted", p.ins), zap.Int64("updated", p.upd), zap.Int64("deleted", p.del),
		zap.Int("conflicts", p.conflicts), zap.String("export_sha256", p.exportSum), zap.Duration("took", time.Since(p.started)),
		zap.String("error", msg))
	set := "finished_at = " + sideconn.SQLTime(time.Now().UTC()) + ", outcome = " + quote.String(p.outcome) +
		fmt.Sprintf(", tables = %d, inserted = %d, updated = %d, deleted = %d, conflicts = %d", p.tables, p.ins, p.upd, p.del, p.conflicts) +
		", export_sha256 = " + quote.String(p.exportSum) + ", error = " + quote.String(msg)
	werr := p.m.reg.WithConn(ctx, func(c sideconn.Conn) error {
		if p.auditID == "" { // refused before production was touched: recorded now
			if err := p.insertAudit(ctx, c); err != nil {
				return err
			}
		}
		_, err := c.Exec(ctx, "UPDATE "+p.m.names.Q("promotes")+" SET "+set+" WHERE id = "+p.auditID)
		return err
	})
	if werr != nil {
		p.m.log.Warn("record a promote's outcome in the registry", zap.Error(werr))
	}
}

// abbreviate shortens a statement for a message.
func abbreviate(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// keyLiteral is lit, a literal of column c, in c's character set and
// collation (a character column), so that it compares as c's values do.
func keyLiteral(c forker.Column, lit string) string {
	if c.Charset == "" || c.Collation == "" || lit == "NULL" || c.Binary() {
		return lit
	}
	return "CONVERT(" + lit + " USING " + quote.Ident(c.Charset) + ") COLLATE " + quote.Ident(c.Collation)
}
