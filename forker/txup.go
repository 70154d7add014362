package forker

import (
	"context"
	"strings"
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
// inside a transaction (TxUp): at most maxUpRows.
func (f *Filler) TxRows(ctx context.Context, where string) ([][]*string, error) {
	f.upTx.Add(1)
	rows, yielded, err := f.snapshotRows(ctx, where)
	if yielded {
		f.endYield(ctx)
	}
	return rows, err
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
