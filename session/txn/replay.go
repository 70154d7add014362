package txn

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Conn is the client's own upstream connection, on which the transaction
// is ended, started again and replayed (between the client's commands).
type Conn interface {
	// Query runs sql and returns the rows of its first result set, as
	// text. A server error comes back as an error with a ServerError()
	// bool method that reports true; any other error means the
	// connection is broken.
	Query(ctx context.Context, sql string) ([][]*string, error)
	// Resend sends a recorded command again: payload is a COM_QUERY, or a
	// COM_STMT_EXECUTE of the text prepared (prepared afresh for it, then
	// closed). It returns what the answer's OK packets said.
	Resend(ctx context.Context, payload []byte, prepared string) ([]wire.OK, error)
	// Status is the server status the last answer on the connection
	// carried.
	Status() uint16
}

// Sandbox is what a restart or replay asks of the session beyond its
// connection.
type Sandbox interface {
	// Epoch is the registry's fork epoch now: a read view taken now sees
	// every fork recorded by then.
	Epoch() uint64
	// Physical is where the table t, which the transaction wrote, is.
	Physical(t rewrite.Table) rewrite.Table
	// Logical tells a message naming physical tables back in the
	// client's names.
	Logical(msg string) string
	// Analyze reads sql as the server does.
	Analyze(sql string) *rewrite.Analysis
	// Again readies the transaction started again before its statements
	// are replayed: the rows copied up inside the one rolled back are
	// copied up again (session/txfill.go).
	Again(ctx context.Context) error
}

// Restart ends the transaction, which has only read, with COMMIT on c and
// starts a new one with its characteristics, so its snapshot includes
// tables just forked; its record is forgotten. An error is c's, as it is.
func (t *Transaction) Restart(ctx context.Context, c Conn, sb Sandbox) error {
	autocommit := c.Status()&wire.StatusAutocommit != 0
	if _, err := c.Query(ctx, "COMMIT"); err != nil {
		return err
	}
	if err := t.startAgain(ctx, c, autocommit || t.cur.explicit); err != nil {
		return err
	}
	t.Restarted(false, sb.Epoch())
	t.rec.reset()
	return nil
}

// Replay rolls the transaction back on c, starts a new one and replays its
// recorded statements, checking each has the same effect. It returns why it
// could not ("" on success; the transaction is then rolled back) or an
// error that broke the connection.
func (t *Transaction) Replay(ctx context.Context, c Conn, sb Sandbox) (string, error) {
	r := &t.rec
	switch {
	case r.broken && r.why != "":
		return r.why, nil
	case r.broken || len(r.entries) == 0:
		return "its statements were not all recorded for replay", nil
	}
	if why, err := r.volatileDefaults(ctx, c, sb); err != nil || why != "" {
		return why, err
	}
	autocommit := c.Status()&wire.StatusAutocommit != 0
	if _, err := c.Query(ctx, "ROLLBACK"); err != nil {
		return replayFailed(ctx, c, "rollback failed", err, false)
	}
	// The recorded BEGIN, when there is one, is sent again as the client
	// wrote it, after the settings it started with.
	if err := t.startAgain(ctx, c, !r.entries[0].begin && (autocommit || t.cur.explicit)); err != nil {
		return replayFailed(ctx, c, "restart failed", err, false)
	}
	ready := false
	for _, e := range r.entries {
		if !ready && !e.begin {
			ready = true
			if err := sb.Again(ctx); err != nil {
				return replayFailed(ctx, c, "copying its rows up again failed", err, true)
			}
		}
		if len(e.oks) == 1 && e.oks[0].InsertID != 0 {
			// AUTO_INCREMENT values are not given back by a rollback: ask
			// for the ones the client already saw.
			if _, err := c.Query(ctx, fmt.Sprintf("SET insert_id = %d", e.oks[0].InsertID)); err != nil {
				return replayFailed(ctx, c, "replaying it failed", err, true)
			}
		}
		oks, err := c.Resend(ctx, e.payload, e.prepared)
		if err != nil {
			return replayFailed(ctx, c, "replaying it failed", err, true)
		}
		if !sameEffect(oks, e.oks) {
			return replayFailed(ctx, c, "replaying it failed", differentEffect{now: oks, then: e.oks}, true)
		}
	}
	t.Restarted(true, sb.Epoch())
	return "", nil
}

// Rollback rolls the transaction back on c and forgets its record, for one
// the session could not restart or replay. A server's error is left to
// the transaction tracking that follows (Executed); any other is returned.
func (t *Transaction) Rollback(ctx context.Context, c Conn) error {
	if _, err := c.Query(ctx, "ROLLBACK"); err != nil && !serverError(err) {
		return err
	}
	t.rec.reset()
	return nil
}

// replayFailed says why a replay stopped, rolling back what it did when
// rollback is set; an error that is not the server's breaks the
// connection and is returned as such.
func replayFailed(ctx context.Context, c Conn, what string, err error, rollback bool) (string, error) {
	if !serverError(err) {
		return "", err
	}
	if rollback {
		if _, rerr := c.Query(ctx, "ROLLBACK"); rerr != nil && !serverError(rerr) {
			return "", rerr
		}
	}
	return what + ": " + err.Error(), nil
}

// differentEffect is a replayed statement that did not do what it did the
// first time.
type differentEffect struct{ now, then []wire.OK }

func (d differentEffect) Error() string {
	return fmt.Sprintf("a statement had a different effect the second time (affected rows and insert ids %v, first time %v)",
		effects(d.now), effects(d.then))
}

// ServerError: the connection is as usable as after the server's own
// error.
func (differentEffect) ServerError() bool { return true }

// serverError reports whether err is an answer of the server, after which
// the connection is still usable.
func serverError(err error) bool {
	var se interface{ ServerError() bool }
	return errors.As(err, &se) && se.ServerError()
}

// sameEffect compares what two runs' OK packets say they did.
func sameEffect(a, b []wire.OK) bool {
	return slices.EqualFunc(a, b, func(x, y wire.OK) bool { return x.Affected == y.Affected && x.InsertID == y.InsertID })
}

// effects lists affected rows and insert ids for messages.
func effects(oks []wire.OK) [][2]uint64 {
	out := make([][2]uint64, len(oks))
	for i, o := range oks {
		out[i] = [2]uint64{o.Affected, o.InsertID}
	}
	return out
}

// volatileDefaults says why replaying the record would write other values
// than the first run did through the column defaults of the tables it
// wrote ("" when it would not): a default or ON UPDATE that reads the
// clock, a sequence or chance (rewrite.Statement.Volatile of the
// expression), or one the proxy cannot read.
func (r *record) volatileDefaults(ctx context.Context, c Conn, sb Sandbox) (string, error) {
	var conds []string
	seen := map[rewrite.Table]bool{}
	for _, e := range r.entries {
		for _, t := range e.writes {
			phys := sb.Physical(t)
			if !seen[phys] {
				seen[phys] = true
				conds = append(conds, "(TABLE_SCHEMA = "+quote.String(phys.DB)+" AND TABLE_NAME = "+quote.String(phys.Name)+")")
			}
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	rows, err := c.Query(ctx, "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_DEFAULT, EXTRA FROM information_schema.COLUMNS WHERE ("+
		strings.Join(conds, " OR ")+") AND (COLUMN_DEFAULT IS NOT NULL OR EXTRA LIKE '%on update%')")
	if err != nil {
		return replayFailed(ctx, c, "its tables' column defaults could not be read", err, false)
	}
	for _, row := range rows {
		if len(row) != 4 || row[0] == nil || row[1] == nil {
			continue
		}
		if why := volatileDefault(sb, row[2], row[3]); why != "" {
			// The default names the sandbox's copies: told back in logical names.
			return sb.Logical(fmt.Sprintf("it wrote %s, whose column %s %s", quote.Ident(*row[0]), quote.Ident(*row[1]), why)), nil
		}
	}
	return "", nil
}

// volatileDefault says why a column's default (def) or its EXTRA (ON
// UPDATE) gives a second write another value ("" when it would not).
func volatileDefault(sb Sandbox, def, extra *string) string {
	if extra != nil && strings.Contains(strings.ToLower(*extra), "on update") {
		return "takes the clock on update (" + *extra + "), which a replay would read later"
	}
	if def == nil || *def == "NULL" {
		return ""
	}
	a := sb.Analyze("SELECT " + *def)
	if len(a.Statements) != 1 || a.Statements[0].Class == rewrite.ClassUnparseable {
		return "has a default the proxy cannot read (" + *def + ")"
	}
	if why := a.Statements[0].Volatile(); why != "" {
		return "defaults to " + *def + ": " + why
	}
	return ""
}

// RestartRefused is the error for a transaction the session cannot end and
// start again before a statement that needs a table forked into sandbox
// after the transaction took its snapshot (why).
func RestartRefused(sandbox, why string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: a table this statement "+
		"uses was forked into sandbox %q after the transaction started, and the proxy cannot start the transaction again "+
		"before it unseen (%s); ROLLBACK and run the transaction again (the fork now exists, so the retry works)", sandbox, why)
}

// ReplayRefused is the error for a transaction that has written and now
// needs a table forked into sandbox after it began, when the session
// cannot replay it (why).
func ReplayRefused(sandbox, why string) error {
	return rewrite.Refuse(wire.ErTableDefChanged, "Table definition has changed, please retry transaction: a table this statement "+
		"uses was forked into sandbox %q after the transaction started, and the transaction has already written (%s); "+
		"ROLLBACK and run the transaction again (the fork now exists, so the retry works)", sandbox, why)
}
