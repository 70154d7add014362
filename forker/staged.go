package forker

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// Copy-ups from the staging table. The background copy fills the staging
// table in key order, in the snapshot's own transaction: for an integer
// key, every snapshot row up to the last key a chunk copied (Filler.staged)
// is there. A copy-up of such keys reads them there, as READ UNCOMMITTED
// reads them (no lock, no wait for the snapshot connection), in one
// anonymous block on the copy-up connection. The block checks again, after
// its copy, that the staging table reaches its greatest key: should the
// snapshot's transaction have rolled back meanwhile, it undoes its copy
// and the copy-up reads the snapshot instead (errNotStaged).

// errNotStaged says the staging table does not hold a copy-up's keys.
var errNotStaged = errors.New("sqlfork: not staged")

// intLiteral is an integer literal as rewrite writes one.
var intLiteral = regexp.MustCompile(`^-?[0-9]+$`)

// stagedUpTo is the greatest of keys when each is an integer literal the
// staging table holds the snapshot up to ("" otherwise).
func (f *Filler) stagedUpTo(keys []string) string {
	hi := f.staged.Load()
	if hi == nil || len(keys) == 0 {
		return ""
	}
	var most *big.Int
	top := ""
	for _, k := range keys {
		v, ok := new(big.Int).SetString(k, 10)
		if !intLiteral.MatchString(k) || !ok || v.Cmp(hi) > 0 {
			return ""
		}
		if most == nil || v.Cmp(most) > 0 {
			most, top = v, k
		}
	}
	return top
}

// insertStaged copies up from the staging table the rows of keys the
// sandbox does not hold, as insertUp does from the snapshot's rows, then
// checks that the staging table reaches hi. (The rows a copy-up's where
// selects have those keys: copying the row of each key is the same or
// more, and a row copied up is a row of the snapshot.) One key is copied
// by the copy-up procedure (Lazy.Up), whose CALL the server does not parse
// again each time; several by an anonymous block.
func (f *Filler) insertStaged(ctx context.Context, keys []string, hi string) error {
	q := "CALL " + f.l.Up.Quoted() + "(" + strings.Join(keys, ", ") + ", " + hi + ")"
	if len(keys) != 1 || !f.l.upByCall() {
		q = "BEGIN NOT ATOMIC " + f.l.stagedBody(keys, hi) + " END"
	}
	if _, err := f.w.Exec(ctx, q); err != nil {
		_, _ = f.w.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		if strings.Contains(err.Error(), errNotStaged.Error()) {
			return errNotStaged
		}
		return fmt.Errorf("copy rows of %s up into its fork: %w", f.l.Src.Quoted(), err)
	}
	return nil
}

// upByCall says whether l has a copy-up procedure: an integer key's.
func (l Lazy) upByCall() bool { return l.Up.Name != "" && l.intKey() }

// upProcedure makes l's copy-up procedure, of one key up to hi.
func (l Lazy) upProcedure() string {
	return "CREATE PROCEDURE " + l.Up.Quoted() + "(sqlfork_k " + l.keyType() + ", sqlfork_hi " + l.keyType() + ") " +
		"MODIFIES SQL DATA SQL SECURITY INVOKER BEGIN " + l.stagedBody([]string{"sqlfork_k"}, "sqlfork_hi") + " END"
}

// stagedBody is the statements that copy keys up from the staging table
// in one READ UNCOMMITTED transaction and check that it reaches hi (keys
// and hi are literals, or the procedure's parameters). Every column is
// qualified with its table's full name: a routine's parameters hide the
// columns of their names.
func (l Lazy) stagedBody(keys []string, hi string) string {
	cp, st := l.Capture, l.Staging.Quoted()
	fork, side := cp.Fork.Quoted(), cp.Side.Quoted()
	col := func(table, c string) string { return table + "." + quote.Ident(c) }
	k := l.Capture.Key[0]
	var b strings.Builder
	b.WriteString("DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END; " +
		"SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; START TRANSACTION; ")
	for _, kv := range keys {
		b.WriteString("IF NOT EXISTS (SELECT 1 FROM " + fork + " WHERE " + col(fork, k) + " = " + kv + ") AND NOT EXISTS (SELECT 1 FROM " +
			side + " WHERE " + col(side, k) + " = " + kv + ") THEN INSERT INTO " + fork + " (" + l.columns() + ") SELECT " +
			l.qualified(st) + " FROM " + st + " WHERE " + col(st, k) + " = " + kv + "; IF ROW_COUNT() > 0 THEN DELETE FROM " + side +
			" WHERE " + col(side, k) + " = " + kv + " AND " + col(side, cp.Marker) + " = 0; END IF; END IF; ")
	}
	b.WriteString("SELECT EXISTS (SELECT 1 FROM " + st + " WHERE " + col(st, k) + " >= " + hi + ") INTO @sqlfork_staged; " +
		"IF NOT @sqlfork_staged THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '" + errNotStaged.Error() + "'; END IF; COMMIT;")
	return b.String()
}

// askYield raises the fill's yield lock when chunk (a chunk holds the
// snapshot connection): the fill function ends the chunk after its
// current step. The copy-up connection asks while the caller waits for
// the snapshot connection; the function returned waits for its answer and
// says whether it holds the lock (the caller lets it go: endYield, or
// insertUp's block).
func (f *Filler) askYield(ctx context.Context, chunk bool) (asked func() bool) {
	if f.l.Yield == "" || !chunk {
		return func() bool { return false }
	}
	got := make(chan bool, 1)
	go func() {
		rows, err := f.w.Query(ctx, "SELECT GET_LOCK("+quote.String(f.l.Yield)+", 0)")
		got <- err == nil && cell(rows) == "1"
	}()
	return func() bool { return <-got }
}

// endYield lets the yield lock go.
func (f *Filler) endYield(ctx context.Context) {
	_, _ = f.w.Exec(context.WithoutCancel(ctx), "DO RELEASE_LOCK("+quote.String(f.l.Yield)+")")
}
