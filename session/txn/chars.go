package txn

import (
	"context"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// start is how the open transaction started.
type start struct {
	// chars are the isolation level, access mode and snapshot it runs
	// with ("" when not known).
	chars rewrite.TxChars
	// explicit: BEGIN / START TRANSACTION started it (else a statement
	// with autocommit off).
	explicit bool
}

// began records how the transaction in (nil: a statement the proxy did not
// plan) started: its BEGIN's words, else what a SET TRANSACTION before it
// gave it, else the session's settings (isolation, readOnly: its
// @@tx_isolation and @@tx_read_only); a chained one keeps those of the
// transaction before it.
func (t *Transaction) began(in *Input, isolation, readOnly string) {
	if in != nil && in.End && in.Start == nil && t.cur != (start{}) {
		// COMMIT / ROLLBACK AND CHAIN (or completion_type CHAIN): the new
		// transaction has the isolation level and access mode of the one
		// that ended.
		t.cur.chars.Snapshot = false
		return
	}
	c := rewrite.TxChars{Isolation: isolationLevel(isolation), Access: accessMode(readOnly)}
	if t.next.Isolation != "" {
		c.Isolation = t.next.Isolation
	}
	if t.next.Access != "" {
		c.Access = t.next.Access
	}
	explicit := in != nil && in.Start != nil
	if explicit {
		if in.Start.Access != "" {
			c.Access = in.Start.Access
		}
		c.Snapshot = in.Start.Snapshot
	}
	t.cur, t.next = start{chars: c, explicit: explicit}, rewrite.TxChars{}
}

// nextTransaction follows SET TRANSACTION, which gives the next
// transaction its characteristics (after in ran; now: a transaction is
// open after it, started: in started it).
func (t *Transaction) nextTransaction(in *Input, failed, now, started bool) {
	switch {
	case in != nil && in.Next != nil:
		if !failed {
			if in.Next.Isolation != "" {
				t.next.Isolation = in.Next.Isolation
			}
			if in.Next.Access != "" {
				t.next.Access = in.Next.Access
			}
		}
	case started:
		// began took it
	case !now && (in == nil || in.Locks || in.End || usesTables(in.Analysis)):
		// The end of a transaction used it up, and so did a statement
		// that used a table with autocommit on (its own transaction).
		t.next = rewrite.TxChars{}
	}
}

// usesTables reports whether an input reads or writes a table (a view of
// information_schema or performance_schema aside).
func usesTables(a *rewrite.Analysis) bool {
	if a == nil {
		return false
	}
	for _, st := range a.Statements {
		for _, list := range [][]rewrite.Table{st.Reads, st.Writes, st.Names} {
			for _, t := range list {
				if !strings.EqualFold(t.DB, "information_schema") && !strings.EqualFold(t.DB, "performance_schema") {
					return true
				}
			}
		}
	}
	return false
}

// startAgain readies the start of the restarted transaction (its last
// COMMIT or ROLLBACK sent): SET TRANSACTION with its isolation level and
// access mode, then, when begin is set, START TRANSACTION [WITH
// CONSISTENT SNAPSHOT] (else the caller resends the recorded BEGIN, or the
// next statement starts it, as with autocommit off the first one did).
func (t *Transaction) startAgain(ctx context.Context, c Conn, begin bool) error {
	ch := t.cur.chars
	var set []string
	if ch.Isolation != "" {
		set = append(set, "ISOLATION LEVEL "+ch.Isolation)
	}
	if ch.Access != "" {
		set = append(set, ch.Access)
	}
	if len(set) > 0 {
		if _, err := c.Query(ctx, "SET TRANSACTION "+strings.Join(set, ", ")); err != nil {
			return err // as it is: a server's error is quoted in the client's 1412
		}
	}
	if !begin {
		return nil
	}
	q := "START TRANSACTION"
	if ch.Snapshot {
		q += " WITH CONSISTENT SNAPSHOT"
	}
	_, err := c.Query(ctx, q)
	return err
}

// isolationLevel is an @@tx_isolation value as SET TRANSACTION takes it
// ("" for anything but the four levels).
func isolationLevel(v string) string {
	l := strings.ToUpper(strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSpace(v)))
	switch l {
	case "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE":
		return l
	}
	return ""
}

// accessMode is an @@tx_read_only value as SET TRANSACTION takes it.
func accessMode(v string) string {
	switch strings.ToUpper(strings.TrimSpace(v)) {
	case "1", "ON":
		return "READ ONLY"
	case "0", "OFF":
		return "READ WRITE"
	}
	return ""
}
