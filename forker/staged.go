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
// more, and a row copied up is a row of the snapshot.)
func (f *Filler) insertStaged(ctx context.Context, keys []string, hi string) error {
	cp, k, st := f.l.Capture, f.l.key(), f.l.Staging.Quoted()
	fork, side, marker := cp.Fork.Quoted(), cp.Side.Quoted(), quote.Ident(cp.Marker)
	// No variable of the block's may hide a column (user variables do
	// not): its statements name columns unqualified.
	var b strings.Builder
	b.WriteString("BEGIN NOT ATOMIC DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END; " +
		"SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED; START TRANSACTION; ")
	for _, kv := range keys {
		b.WriteString("IF NOT EXISTS (SELECT 1 FROM " + fork + " WHERE " + k + " = " + kv + ") AND NOT EXISTS (SELECT 1 FROM " +
			side + " WHERE " + k + " = " + kv + ") THEN INSERT INTO " + fork + " (" + f.l.columns() + ") SELECT " + f.l.columns() +
			" FROM " + st + " WHERE " + k + " = " + kv + "; IF ROW_COUNT() > 0 THEN DELETE FROM " + side +
			" WHERE " + k + " = " + kv + " AND " + marker + " = 0; END IF; END IF; ")
	}
	b.WriteString("SELECT EXISTS (SELECT 1 FROM " + st + " WHERE " + k + " >= " + hi + ") INTO @sqlfork_staged; " +
		"IF NOT @sqlfork_staged THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '" + errNotStaged.Error() + "'; END IF; COMMIT; END")
	if _, err := f.w.Exec(ctx, b.String()); err != nil {
		_, _ = f.w.Exec(context.WithoutCancel(ctx), "ROLLBACK")
		if strings.Contains(err.Error(), errNotStaged.Error()) {
			return errNotStaged
		}
		return fmt.Errorf("copy rows of %s up into its fork: %w", f.l.Src.Quoted(), err)
	}
	return nil
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
