package forker

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Copy-ups inside a transaction. A transaction that holds a lazy fork
// while it fills (sandbox/registry holds.go) has the rows its statements
// need copied up on its own connection, inside it: its own inserts are
// seen by its read view whenever that was taken, they take no lock another
// session waits for, and a lock the transaction holds on a gap of the
// fork does not stop them. They are rolled back with it, which leaves the
// fork as it was: a key is the sandbox's only once in the fork or its side
// table. The rows come from the snapshot as for any copy-up.

// TxRows reads the snapshot's rows that where selects, for a copy-up
// inside a transaction (TxUp): at most maxUpRows. keys are as for CopyUp:
// when the staging table holds them, their rows are read there, without
// the snapshot connection.
func (f *Filler) TxRows(ctx context.Context, where string, keys []string) ([][]*string, error) {
	f.lastUp.Store(time.Now().UnixNano()) // chunks stay short while transactions copy up too
	f.upTx.Add(1)
	if rows, ok, err := f.stagedRows(ctx, keys); ok || err != nil {
		return rows, err
	}
	rows, yielded, err := f.snapshotRows(ctx, where)
	if yielded {
		f.endYield(ctx)
	}
	return rows, err
}

// stagedRows reads the rows of keys from the staging table when it holds
// them (ok), as READ UNCOMMITTED reads them on the copy-up connection, in
// one statement that also checks that the staging table reaches the
// greatest key (staged.go).
func (f *Filler) stagedRows(ctx context.Context, keys []string) (rows [][]*string, ok bool, err error) {
	hi := f.stagedUpTo(keys)
	if hi == "" {
		return nil, false, nil
	}
	f.upMu.Lock() // the copy-up connection is one
	defer f.upMu.Unlock()
	if f.whole {
		return nil, false, nil
	}
	st, k := f.l.Staging.Quoted(), f.l.key()
	var sel []string
	for _, c := range f.l.Capture.Stored() {
		sel = append(sel, selectExprOf("s.", c))
	}
	got, err := f.w.Query(ctx, "SELECT o.ok, "+strings.Join(sel, ", ")+" FROM (SELECT EXISTS (SELECT 1 FROM "+st+
		" WHERE "+k+" >= "+hi+") AS ok) AS o LEFT JOIN "+st+" AS s ON s."+k+" IN ("+strings.Join(keys, ", ")+")")
	if err != nil {
		return nil, false, fmt.Errorf("read %s as of its fork: %w", f.l.Src.Quoted(), err)
	}
	if len(got) == 0 || str(got[0][0]) != "1" {
		return nil, false, nil // the snapshot's transaction has ended: not staged
	}
	ki := f.l.keyIndex() + 1
	for _, r := range got {
		if r[ki] != nil {
			rows = append(rows, r[1:])
		}
	}
	f.upTxStaged.Add(1)
	return rows, true, nil
}

// TxUp is the anonymous block that copies rows (TxRows) up into the fork
// on a transaction's own connection, inside it: each row unless the
// sandbox holds its key, with the values as the fill writes them (its
// sql_mode and time zone, set for the block and set back after it, also
// when it fails). Its checks are locking reads: they read the rows as
// committed, and take no read view for the transaction (its own reads
// take it, as the session follows: txn). "" when there is no row.
func (f *Filler) TxUp(rows [][]*string) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("BEGIN NOT ATOMIC DECLARE sqlfork_mode TEXT DEFAULT @@session.sql_mode; " +
		"DECLARE sqlfork_tz TEXT DEFAULT @@session.time_zone; " +
		"DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN SET SESSION sql_mode = sqlfork_mode, time_zone = sqlfork_tz; RESIGNAL; END; " +
		"SET SESSION sql_mode = '" + fillModes + "', time_zone = '+00:00'; ")
	b.WriteString(f.l.rowsBody(rows, " LOCK IN SHARE MODE"))
	b.WriteString("SET SESSION sql_mode = sqlfork_mode, time_zone = sqlfork_tz; END")
	return b.String()
}
