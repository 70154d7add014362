package forker

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// Filler fills one lazy fork: the background copy of its snapshot into
// the staging table (Run), the copy-up of the rows a statement needs
// (CopyUp), and the swap that ends it (Finish). Its two connections are
// its own: snap holds the snapshot's transaction, w copies rows up.
type Filler struct {
	l     Lazy
	snap  OwnedConn
	w     OwnedConn
	stmt  string // the snapshot read of a copy-up, up to its WHERE
	total int64  // production's estimated rows

	// keys are the staging table's keys left out of its fill (deferkeys.go).
	keys deferredKeys
	// sealMu orders Seal; sealed says the staging table is committed, the
	// snapshot ended: copy-ups read the staging table (stagedStmt) from
	// then on; built that its keys are back.
	sealMu        sync.Mutex
	sealed, built bool
	stagedStmt    string
	building      atomic.Bool // Seal is building the keys

	// gate orders the snapshot connection's uses: copy-ups first.
	gate *snapGate
	// lastUp is when a copy-up last came (UnixNano): while they come,
	// chunks stay short.
	lastUp atomic.Int64
	// staged is the last key the staging table holds, for an integer key
	// (nil before the first chunk, or for another key): the snapshot's
	// rows up to it can be copied up from there (CopyUp).
	staged atomic.Pointer[big.Int]
	// upMu orders copy-ups: two of one key would both insert it.
	upMu    sync.Mutex
	claimed map[string]uint64 // bound predicates already copied up, with their stamps (upMu)
	// lastStamp is the greatest claim stamp.
	lastStamp atomic.Uint64
	whole     bool // Finish made the fork whole (upMu)

	filled atomic.Int64
	// upStaged and upSnapshot count the copy-ups read from the staging
	// table and from the snapshot.
	upStaged, upSnapshot atomic.Int64
	// upTx counts the reads of copy-ups inside transactions (TxRows),
	// upTxStaged those of them read from the staging table.
	upTx, upTxStaged atomic.Int64
	started          time.Time
	done             chan struct{} // closed when Run has ended
	err              error         // why Run ended short (set before done closes)
	// rate bounds the rows copied per second (nil or 0: no bound); it
	// may change while Run runs.
	rate *Rate

	closeOnce sync.Once
}

// Progress is how far a fill is: rows copied of production's estimated
// total, and copy-ups read from the staging table and from the snapshot.
type Progress struct {
	Filled, Total        int64
	UpStaged, UpSnapshot int64
	UpTx                 int64 // inside transactions (TxRows)
	UpTxStaged           int64 // of UpTx, read from the staging table
	Started              time.Time
	Done                 bool
	// BuildingKeys: the copy is complete, and the keys left out of it are
	// being built (Seal).
	BuildingKeys bool
	Err          error
}

// StartFill starts the snapshot on snap and readies w; it returns the
// filler and the AUTO_INCREMENT the fork must start at ("" for none). The
// fork, staging table, function and capture must exist (PrepareLazy,
// InstallCapture). On error both connections are closed.
func StartFill(ctx context.Context, snap, w OwnedConn, l Lazy, total int64) (*Filler, string, error) {
	keys, err := deferKeys(ctx, w, l.Staging)
	var autoInc string
	if err == nil {
		autoInc, err = openSnapshot(ctx, snap, l)
	}
	if err == nil {
		err = openWriter(ctx, w)
	}
	if err != nil {
		_ = snap.Close()
		_ = w.Close()
		return nil, "", err
	}
	var sel []string
	for _, c := range l.Capture.Stored() {
		sel = append(sel, selectExpr(c))
	}
	f := &Filler{l: l, snap: snap, w: w, total: total, claimed: map[string]uint64{}, started: time.Now(),
		done: make(chan struct{}), gate: newSnapGate(), keys: keys,
		stmt:       "SELECT " + strings.Join(sel, ", ") + " FROM " + l.Src.Quoted() + " WHERE ",
		stagedStmt: "SELECT " + strings.Join(sel, ", ") + " FROM " + l.Staging.Quoted() + " WHERE "}
	return f, autoInc, nil
}

// Lazy is what the filler fills.
func (f *Filler) Lazy() Lazy { return f.l }

// Progress says how far the fill is.
func (f *Filler) Progress() Progress {
	p := Progress{Filled: f.filled.Load(), Total: f.total, Started: f.started,
		UpStaged: f.upStaged.Load(), UpSnapshot: f.upSnapshot.Load(), UpTx: f.upTx.Load(),
		UpTxStaged: f.upTxStaged.Load(), BuildingKeys: f.building.Load()}
	select {
	case <-f.done:
		p.Done, p.Err = true, f.err
	default:
	}
	return p
}

// Done is closed when the background copy has ended (Progress says how).
func (f *Filler) Done() <-chan struct{} { return f.done }

// Run copies the snapshot into the staging table chunk by chunk until it
// is whole (or ctx ends, or a chunk fails), letting waiting copy-ups go
// first between chunks. It closes Done when it returns.
func (f *Filler) Run(ctx context.Context) {
	defer close(f.done)
	for {
		if ctx.Err() != nil {
			f.err = ctx.Err()
			return
		}
		c := f.nextChunk()
		start, before := time.Now(), f.filled.Load()
		f.gate.lockChunk()
		rows, err := f.snap.Query(ctx, "SELECT "+f.l.Fn.Quoted()+"("+c.args()+")")
		f.gate.unlock()
		if err != nil {
			f.err = fmt.Errorf("copy %s: %w", f.l.Src.Quoted(), err)
			return
		}
		if f.chunkDone(cell(rows)) {
			return
		}
		f.throttle(ctx, c, f.filled.Load()-before, start)
	}
}

// SetRate bounds the rows Run copies per second by r, which may change
// while it runs (nil: no bound); set it before Run.
func (f *Filler) SetRate(r *Rate) { f.rate = r }

// throttle waits, after chunk c that copied n rows from start, until the
// chunk has taken as long as n rows at the rate c was sized by (1/20 s of
// it: nextChunk), or until the rate changes or lets the fill go: the next
// chunk is sized by the new one.
func (f *Filler) throttle(ctx context.Context, c chunk, n int64, start time.Time) {
	rate, changed, free := f.rate.get(f.started)
	if c.rate <= 0 || rate != c.rate {
		return
	}
	ahead := time.Duration(n)*time.Second/time.Duration(c.rate) - time.Since(start)
	if !free.IsZero() {
		ahead = min(ahead, time.Until(free))
	}
	if ahead <= 0 {
		return
	}
	t := time.NewTimer(ahead)
	defer t.Stop()
	select {
	case <-t.C:
	case <-changed:
	case <-ctx.Done():
	}
}

// chunkDone records a chunk's result, the fill function's "DONE COUNT
// LAST", and says whether the copy is complete.
func (f *Filler) chunkDone(res string) bool {
	fields := strings.SplitN(res, " ", 3)
	if len(fields) != 3 {
		f.err = fmt.Errorf("copy %s: the fill function answered %q", f.l.Src.Quoted(), res)
		return true
	}
	n, _ := strconv.ParseInt(fields[1], 10, 64)
	f.filled.Add(n)
	if hi, ok := new(big.Int).SetString(fields[2], 10); ok {
		f.staged.Store(hi)
	}
	return fields[0] == "1"
}

// chunk is one call of the fill function: at most rows, step at a time,
// for about budget, sized by rate (0: none).
type chunk struct {
	rows, step int
	budget     time.Duration
	rate       int64
}

// nextChunk is the next chunk: about 50 ms of copy, in steps after each
// of which a copy-up that raised the fill's yield lock (Lazy.Yield) takes
// the snapshot connection: steps of 16 rows while statements copy rows
// up, of 1,000 otherwise; under a rate (while it holds the fill, Rate),
// 50 ms of it at most.
func (f *Filler) nextChunk() chunk {
	c := chunk{rows: 1 << 30, step: 1000, budget: 50 * time.Millisecond}
	if time.Since(time.Unix(0, f.lastUp.Load())) < time.Second {
		c.step = 16
	}
	if c.rate = f.rate.Rows(f.started); c.rate > 0 {
		c.rows = int(max(1, c.rate/20))
		c.step = min(c.step, c.rows)
	}
	return c
}

// args are the fill function's arguments for c.
func (c chunk) args() string {
	return strconv.Itoa(c.rows) + ", " + strconv.Itoa(c.step) + ", " + strconv.FormatInt(c.budget.Microseconds(), 10)
}

// cell is the first column of the first row ("" when none).
func cell(rows [][]*string) string {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return ""
	}
	return str(rows[0][0])
}

// CopyUp copies into the fork the snapshot's rows that where (a condition
// on the table's columns, unqualified) selects and the sandbox does not
// hold yet: not in the fork and not changed (in the side table). Rows
// already copied by an earlier call for the same where are not read
// again. keys, when not empty, are the literal values of the table's key
// that where pins every row to: when the staging table holds them, the
// rows are copied from there without the snapshot connection. It returns
// where's stamp: what stamp (nil: 0) gave when where was first copied up,
// called once its rows were committed in the fork (upMu held, so that
// stamps grow with the commits) (a read view taken
// after it sees them); 0 once the fork is whole.
func (f *Filler) CopyUp(ctx context.Context, where string, keys []string, stamp func() uint64) (uint64, error) {
	f.lastUp.Store(time.Now().UnixNano())
	f.upMu.Lock()
	defer f.upMu.Unlock()
	if at, ok := f.claimed[where]; ok || f.whole {
		return at, nil
	}
	if hi := f.stagedUpTo(keys); hi != "" {
		err := f.retry(ctx, func() error { return f.insertStaged(ctx, keys, hi) })
		if err == nil {
			f.upStaged.Add(1)
			return f.claim(where, stamp), nil
		}
		if !errors.Is(err, errNotStaged) {
			return 0, err
		}
	}
	rows, yielded, err := f.snapshotRows(ctx, where)
	if err == nil && len(rows) > 0 {
		err = f.retry(ctx, func() error { return f.insertUp(ctx, rows, yielded) })
		yielded = err != nil // the block let it go, unless it did not run
	}
	if yielded {
		f.endYield(ctx)
	}
	if err != nil {
		return 0, err
	}
	f.upSnapshot.Add(1)
	return f.claim(where, stamp), nil
}

// claim records where as copied up (upMu held), stamped by stamp, called
// once its rows are committed in the fork (0 for a nil stamp).
func (f *Filler) claim(where string, stamp func() uint64) uint64 {
	var at uint64
	if stamp != nil {
		at = stamp()
	}
	f.claimed[where] = at
	if at > f.lastStamp.Load() {
		f.lastStamp.Store(at)
	}
	return at
}

// LastStamp is the stamp of the last copy-up (CopyUp): the rows copy-ups
// wrote were committed before it.
func (f *Filler) LastStamp() uint64 { return f.lastStamp.Load() }

// retry runs a copy-up's transaction, again after a deadlock or lock wait
// timeout (it rolled back whole), three times at most.
func (f *Filler) retry(ctx context.Context, run func() error) error {
	for try := 0; ; try++ {
		err := run()
		if err == nil || try == 3 || !retryable(err) {
			return err
		}
	}
}

// maxUpRows bounds the rows one copy-up writes (one block, one packet):
// the conditions it is given pin a unique key to a few values each.
const maxUpRows = 4096

// snapshotRows reads the snapshot's rows that where selects, first
// asking a running chunk to yield: yielded says the yield lock is to be
// let go. More than maxUpRows rows are refused.
func (f *Filler) snapshotRows(ctx context.Context, where string) (rows [][]*string, yielded bool, err error) {
	asked := f.askYield(ctx, f.gate.queueUp())
	f.gate.takeUp()
	stmt := f.stmt
	if f.isSealed() {
		stmt = f.stagedStmt // the snapshot's rows, committed
	}
	rows, err = f.snap.Query(ctx, stmt+"("+where+") LIMIT "+strconv.Itoa(maxUpRows+1))
	f.gate.unlock()
	if yielded = asked(); err != nil {
		return nil, yielded, fmt.Errorf("read %s as of its fork: %w", f.l.Src.Quoted(), err)
	}
	if len(rows) > maxUpRows {
		return nil, yielded, fmt.Errorf("the statement would copy more than %d rows of %s up into its fork", maxUpRows, f.l.Src.Quoted())
	}
	return rows, yielded, nil
}

// insertUp writes rows into the fork, but for the keys the sandbox holds
// already, in one transaction that also removes the side table's "not in
// the fork" marks the inserts' capture trigger made. A key is held once
// in the fork or the side table, for good; copy-ups go one at a time
// (upMu), so what the check reads stays true until the insert. It is one
// anonymous block (MariaDB): one round trip, rolled back whole on error.
func (f *Filler) insertUp(ctx context.Context, rows [][]*string, yielded bool) error {
	var b strings.Builder
	b.WriteString("BEGIN NOT ATOMIC DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END; ")
	if yielded {
		b.WriteString("DO RELEASE_LOCK(" + quote.String(f.l.Yield) + "); ")
	}
	b.WriteString("SET TRANSACTION ISOLATION LEVEL READ COMMITTED; START TRANSACTION; " + f.l.rowsBody(rows, "") + "COMMIT; END")
	if _, err := f.w.Exec(ctx, b.String()); err != nil {
		_, _ = f.w.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("copy rows of %s up into its fork: %w", f.l.Src.Quoted(), err)
	}
	return nil
}

// rowsBody is the statements that insert rows (of the snapshot, as read
// by snapshotRows) into the fork, but for the keys the sandbox holds (in
// the fork or the side table), and remove the side table's "not in the
// fork" marks the inserts' capture trigger made. lock ends the checks'
// SELECTs ("" for plain reads). Every column is qualified with its
// table's full name: a block's variables hide the columns of their names.
func (l Lazy) rowsBody(rows [][]*string, lock string) string {
	cp, cols := l.Capture, l.Capture.Stored()
	fork, side := cp.Fork.Quoted(), cp.Side.Quoted()
	col := func(table, c string) string { return table + "." + quote.Ident(c) }
	ki := l.keyIndex()
	var b strings.Builder
	for _, r := range rows {
		lits := make([]string, len(cols))
		for i, c := range cols {
			lits[i] = Literal(c, r[i])
		}
		kv := lits[ki]
		b.WriteString("IF NOT EXISTS (SELECT 1 FROM " + fork + " WHERE " + col(fork, cp.Key[0]) + " = " + kv + lock + ") AND NOT EXISTS (SELECT 1 FROM " +
			side + " WHERE " + col(side, cp.Key[0]) + " = " + kv + lock + ") THEN INSERT INTO " + fork + " (" + l.columns() + ") VALUES (" +
			strings.Join(lits, ", ") + "); DELETE FROM " + side + " WHERE " + col(side, cp.Key[0]) + " = " + kv + " AND " +
			col(side, cp.Marker) + " = 0; END IF; ")
	}
	return b.String()
}

// Finish ends a fill whose copy is complete (Done, no error): sealed
// first (Seal, when the caller has not), the fork's rows replace the staging table's
// for every key the sandbox holds (in the fork, or changed: in the side
// table), then the staging table, its AUTO_INCREMENT at least the fork's,
// takes the fork's place and the fork's capture triggers; the old fork,
// and the function go; the caller then records the fork whole and closes
// the filler (Close), whose snapshot connection held its lock. No statement of the
// sandbox may run on the fork meanwhile (the caller drains them). c is a
// side connection for the DDL.
func (f *Filler) Finish(ctx context.Context, c Conn) error {
	if err := f.Seal(ctx, c); err != nil { // refuses a copy still running
		return err
	}
	f.upMu.Lock() // no copy-up half done
	defer f.upMu.Unlock()
	f.gate.lockUp()
	defer f.gate.unlock()
	if err := f.merge(ctx); err != nil {
		return err
	}
	if err := f.swap(ctx, c); err != nil {
		return err
	}
	f.whole = true
	return nil
}

// merge puts the sandbox's rows into the staging table (sealed: Seal),
// in one transaction.
func (f *Filler) merge(ctx context.Context) error {
	cp, k, st := f.l.Capture, f.l.key(), f.l.Staging.Quoted()
	for _, s := range []string{
		"START TRANSACTION",
		// Full names, not aliases: a multi-table DELETE reads an alias
		// in the current database, which a side connection has not.
		"DELETE " + st + " FROM " + cp.Fork.Quoted() + " JOIN " + st + " ON " + st + "." + k + " = " + cp.Fork.Quoted() + "." + k,
		"DELETE " + st + " FROM " + cp.Side.Quoted() + " JOIN " + st + " ON " + st + "." + k + " = " + cp.Side.Quoted() + "." + k,
		"INSERT INTO " + st + " (" + f.l.columns() + ") SELECT " + f.l.columns() + " FROM " + cp.Fork.Quoted(),
		"COMMIT",
	} {
		if _, err := f.snap.Exec(ctx, s); err != nil {
			return fmt.Errorf("complete the fork of %s: %w", f.l.Src.Quoted(), err)
		}
	}
	return nil
}

// swap puts the staging table in the fork's place with the fork's capture
// triggers and AUTO_INCREMENT.
func (f *Filler) swap(ctx context.Context, c Conn) error {
	cp := f.l.Capture
	old := f.l.Staging
	old.Name += "_old"
	info, err := describe(ctx, c, cp.Fork)
	if err != nil {
		return err
	}
	var stmts []string
	if info.autoIncrement != "" {
		stmts = append(stmts, "ALTER TABLE "+f.l.Staging.Quoted()+" AUTO_INCREMENT = "+info.autoIncrement)
	}
	stmts = append(stmts, cp.DropTriggersDDL()...)
	stmts = append(stmts, "DROP TABLE IF EXISTS "+old.Quoted(),
		"RENAME TABLE "+cp.Fork.Quoted()+" TO "+old.Quoted()+", "+f.l.Staging.Quoted()+" TO "+cp.Fork.Quoted())
	stmts = append(stmts, cp.TriggerDDL()...)
	// The staging table's statistics were taken while it filled: the
	// optimizer and information_schema get the whole table's.
	stmts = append(stmts, "DROP TABLE "+old.Quoted(), "DROP FUNCTION IF EXISTS "+f.l.Fn.Quoted())
	if f.l.Up.Name != "" {
		stmts = append(stmts, "DROP PROCEDURE IF EXISTS "+f.l.Up.Quoted())
	}
	stmts = append(stmts, "ANALYZE TABLE "+cp.Fork.Quoted())
	if _, err := ExecAllWith(ctx, c, captureModes(), stmts...); err != nil {
		return fmt.Errorf("put the copy of %s in its fork's place: %w", f.l.Src.Quoted(), err)
	}
	return nil
}

// Close closes the filler's connections (once), after the copy-up and
// the chunk using them, if any (a fill that failed is closed while
// statements may still copy rows up, a fill stopped while its chunk
// runs); closing the snapshot's rolls back whatever it had not committed.
func (f *Filler) Close() {
	f.closeOnce.Do(func() {
		f.upMu.Lock()
		defer f.upMu.Unlock()
		f.gate.lockUp()
		defer f.gate.unlock()
		_ = f.snap.Close()
		_ = f.w.Close()
	})
}

// retryable says whether err is a deadlock or lock wait timeout, after
// which the copy-up's own transaction, rolled back, can run again.
func retryable(err error) bool {
	var me interface {
		MySQLError() (uint16, string, string)
	}
	if errors.As(err, &me) {
		code, _, _ := me.MySQLError()
		return code == 1213 || code == 1205
	}
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "1213 (40001)") || strings.Contains(msg, "1205 (hy000)")
}
