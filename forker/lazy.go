package forker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Lazy forks. A big table's fork is usable at once: it starts empty and
// holds only the rows the sandbox has touched, copied up on demand from a
// consistent snapshot of production taken when the fork was made; the rest
// of the snapshot is copied meanwhile into a staging table, in the
// snapshot's own transaction, by a stored function the snapshot
// connection calls chunk by chunk. Called from a top-level SELECT, the
// function's INSERT … SELECT reads production as a plain consistent read:
// no row locks, the snapshot's rows. When the staging table is whole, the
// fork's rows (and the keys the sandbox deleted) replace the staging
// table's, and the staging table takes the fork's place: a plain table
// holding exactly what a copy made at the fork would hold after the
// sandbox's statements.
//
// Which rows the sandbox has touched is known without the proxy comparing
// keys: a key is the sandbox's once it is in the fork or in the fork's
// capture side table (every key a statement changed), so a fork is made
// lazily only when its changes are captured by a one-column key.

// fillModes is the sql_mode a fill reads and writes rows in: no strict
// mode or date checks that would change a value production holds, and an
// explicit 0 in an AUTO_INCREMENT column kept.
const fillModes = "NO_AUTO_VALUE_ON_ZERO,NO_ENGINE_SUBSTITUTION,ALLOW_INVALID_DATES"

// fillDDLModes are the settings a fill's objects are made in and its keys
// built in: its sql_mode, and UTF-8 text.
func fillDDLModes() Modes {
	return Modes{SQLMode: fillModes, Charset: "utf8mb4", Collation: "utf8mb4_general_ci"}
}

// ErrLazyUnavailable says a table cannot be forked lazily (the caller
// copies it whole instead); its message says why.
var ErrLazyUnavailable = errors.New("lazy fork unavailable")

// OwnedConn is a connection the caller hands over for good: the filler
// closes it when it is done.
type OwnedConn interface {
	Conn
	Close() error
}

// Lazy is what a lazy fork is made of.
type Lazy struct {
	// Src is the production table; Capture's Fork the fork, its Side the
	// side table (both must exist before the fill starts), its Shape
	// Src's and its Key the key the fill orders by (one column).
	Src     sqlname.Table
	Capture Capture
	// Staging is where the snapshot is copied; Fn the fill function; Up,
	// when not empty, the procedure that copies one integer key up from
	// the staging table (staged.go). All go in the sandbox's own
	// database.
	Staging, Fn, Up sqlname.Table
	// Like is the table the staging table is made like (Src when empty;
	// the fork when a fill starts again over a fork that has rows).
	Like sqlname.Table
	// Yield, when not empty, is the name of an upstream lock a copy-up
	// raises to have the fill function end its chunk early: one nobody
	// else can name.
	Yield string
}

// LazyOK says whether a table of this shape can be forked lazily: a
// transactional engine (the staging table is filled in one transaction)
// and a capture key of one column ("" when it can, else why not).
func LazyOK(s Shape) string {
	switch {
	case s.View || s.Sequence || s.Versioned:
		return "not a plain base table"
	case !strings.EqualFold(s.Engine, "InnoDB"):
		return "its engine is " + s.Engine + ", not InnoDB"
	case len(s.Key) != 1:
		return "it has no key of one column"
	}
	return ""
}

// like is the table the staging table is made like.
func (l Lazy) like() sqlname.Table {
	if l.Like.Name != "" {
		return l.Like
	}
	return l.Src
}

// key is the one key column, quoted.
func (l Lazy) key() string { return quote.Ident(l.Capture.Key[0]) }

// columns are the stored columns, quoted and joined.
func (l Lazy) columns() string {
	var b strings.Builder
	for i, c := range l.Capture.Stored() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote.Ident(c.Name))
	}
	return b.String()
}

// qualified are the stored columns, each qualified with alias, joined.
func (l Lazy) qualified(alias string) string {
	var b strings.Builder
	for i, c := range l.Capture.Stored() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(alias + "." + quote.Ident(c.Name))
	}
	return b.String()
}

// keyIndex is the key column's place among the stored columns.
func (l Lazy) keyIndex() int {
	for i, c := range l.Capture.Stored() {
		if strings.EqualFold(c.Name, l.Capture.Key[0]) {
			return i
		}
	}
	return 0
}

// keyType is the key column's full type, for the fill function's variable.
func (l Lazy) keyType() string {
	c, _ := l.Capture.Column(l.Capture.Key[0])
	return c.Type
}

// PrepareLazy makes the staging table and fill function of l. The fork
// (CREATE TABLE … LIKE Src) and its capture are the caller's to make.
func PrepareLazy(ctx context.Context, c Conn, l Lazy) error {
	stmts := []string{
		"DROP TABLE IF EXISTS " + l.Staging.Quoted(),
		"CREATE TABLE " + l.Staging.Quoted() + " LIKE " + l.like().Quoted(),
		"DROP FUNCTION IF EXISTS " + l.Fn.Quoted(),
		l.fillFunction(),
	}
	if l.upByCall() {
		stmts = append(stmts, "DROP PROCEDURE IF EXISTS "+l.Up.Quoted(), l.upProcedure())
	}
	// The function keeps the sql_mode it is made with: a copy takes every
	// value as production holds it (zero and invalid dates, a key 0).
	if _, err := ExecAllWith(ctx, c, fillDDLModes(), stmts...); err != nil {
		DropLazy(context.WithoutCancel(ctx), c, l)
		if binlogRefusesFunction(err) {
			return fmt.Errorf("%w: the server writes a binary log and refuses the fill function (%v)", ErrLazyUnavailable, err)
		}
		return fmt.Errorf("prepare the lazy fork of %s: %w", l.Src.Quoted(), err)
	}
	return nil
}

// binlogRefusesFunction says whether err is a server that writes a binary
// log refusing the fill function: 1419 for an account without the
// privilege to create one while log_bin_trust_function_creators is off
// (1418 would be a function not declared DETERMINISTIC).
func binlogRefusesFunction(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "1418 (hy000)") || strings.Contains(msg, "1419 (hy000)")
}

// fillFunction copies the next rows of Src (by key, after the last one in
// the staging table) into the staging table, step rows at a time, until
// it has copied n, or spent budget microseconds, or copied the last one,
// or a copy-up asks it to yield (Yield).
// It returns "DONE COUNT LAST": DONE 1 when no row is left, COUNT the
// rows copied, LAST the last key copied for an integer key ("" else).
// SYSDATE, not NOW, reads the clock as it runs (unless the server runs
// with --sysdate-is-now: then n alone ends a call).
func (l Lazy) fillFunction() string {
	// Every column is qualified: a routine's variables and parameters
	// hide the columns of their names, not qualified ones. Its own names
	// start with sqlfork_ besides.
	k := "s." + l.key()
	insert := "INSERT INTO " + l.Staging.Quoted() + " (" + l.columns() + ") SELECT " + l.qualified("s") + " FROM " + l.Src.Quoted() + " AS s"
	last := "SELECT MAX(g." + l.key() + ") INTO sqlfork_lo FROM " + l.Staging.Quoted() + " AS g; "
	yield := ""
	if l.Yield != "" {
		yield = " OR IS_FREE_LOCK(" + quote.String(l.Yield) + ") = 0"
	}
	lastKey := "''"
	if l.intKey() {
		lastKey = "IFNULL(sqlfork_lo, '')"
	}
	// DETERMINISTIC, which it is not, lets a server that writes a binary
	// log take it from an account with SUPER (1418 otherwise): only the
	// proxy calls it, once per statement, and its writes are logged as
	// rows (openSnapshot), never replayed as a call.
	return "CREATE FUNCTION " + l.Fn.Quoted() + "(sqlfork_n INT, sqlfork_step INT, sqlfork_budget BIGINT) RETURNS VARCHAR(80) " +
		"MODIFIES SQL DATA DETERMINISTIC SQL SECURITY INVOKER BEGIN " +
		"DECLARE sqlfork_lo " + l.keyType() + " DEFAULT NULL; DECLARE sqlfork_got, sqlfork_c BIGINT DEFAULT 0; " +
		"DECLARE sqlfork_done INT DEFAULT 0; DECLARE sqlfork_t0 DATETIME(6) DEFAULT SYSDATE(6); " + last +
		"REPEAT IF sqlfork_lo IS NULL THEN " + insert + " ORDER BY " + k + " LIMIT sqlfork_step; " +
		"ELSE " + insert + " WHERE " + k + " > sqlfork_lo ORDER BY " + k + " LIMIT sqlfork_step; END IF; " +
		"SET sqlfork_c = ROW_COUNT(); SET sqlfork_got = sqlfork_got + sqlfork_c; " +
		"IF sqlfork_c < sqlfork_step THEN SET sqlfork_done = 1; END IF; " + last +
		"UNTIL sqlfork_done = 1 OR sqlfork_got >= sqlfork_n OR TIMESTAMPDIFF(MICROSECOND, sqlfork_t0, SYSDATE(6)) >= sqlfork_budget" +
		yield + " END REPEAT; RETURN CONCAT(sqlfork_done, ' ', sqlfork_got, ' ', " + lastKey + "); END"
}

// intKey says whether the key is an integer column, whose order the
// proxy knows: the filler then tracks how far the staging table holds
// the snapshot (Filler.staged).
func (l Lazy) intKey() bool {
	c, _ := l.Capture.Column(l.Capture.Key[0])
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		return true
	}
	return false
}

// DropLazy drops the staging table, the fill function and the copy-up
// procedure (best effort).
func DropLazy(ctx context.Context, c Conn, l Lazy) {
	_, _ = c.Exec(ctx, "DROP FUNCTION IF EXISTS "+l.Fn.Quoted())
	if l.Up.Name != "" {
		_, _ = c.Exec(ctx, "DROP PROCEDURE IF EXISTS "+l.Up.Quoted())
	}
	_, _ = c.Exec(ctx, "DROP TABLE IF EXISTS "+l.Staging.Quoted())
}

// openSnapshot readies snap for the fill and starts its snapshot: plain
// text modes, UTC, raw bytes back, REPEATABLE READ, and a binary log (if
// any) in row format, without which the fill function's reads would lock
// production's rows. It returns Src's AUTO_INCREMENT as read after the
// snapshot began ("" when none), which the fork must start at.
func openSnapshot(ctx context.Context, snap Conn, l Lazy) (autoInc string, err error) {
	if err := rowLogging(ctx, snap); err != nil {
		return "", err
	}
	_, _ = snap.Exec(ctx, "SET SESSION sql_log_bin = 0") // where allowed: the staging table is the sandbox's
	for _, s := range []string{
		"SET SESSION sql_mode = '" + fillModes + "', time_zone = '+00:00', " +
			"character_set_client = utf8mb4, collation_connection = utf8mb4_general_ci, character_set_results = binary",
		"SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ",
		"START TRANSACTION WITH CONSISTENT SNAPSHOT",
	} {
		if _, err := snap.Exec(ctx, s); err != nil {
			return "", fmt.Errorf("start the snapshot of %s: %w", l.Src.Quoted(), err)
		}
	}
	info, err := describe(ctx, snap, l.Src)
	if err != nil {
		return "", err
	}
	return info.autoIncrement, nil
}

// rowLogging checks that c's server is MariaDB and puts c's binary log
// (if any) in row format: the fill function's non-locking read and the
// copy-up's anonymous blocks and reads of uncommitted rows are MariaDB's,
// and need it.
func rowLogging(ctx context.Context, c Conn) error {
	rows, err := c.Query(ctx, "SELECT @@log_bin, @@binlog_format, VERSION()")
	if err != nil {
		return fmt.Errorf("read the binary log's settings: %w", err)
	}
	if len(rows) == 1 && !strings.Contains(strings.ToLower(str(rows[0][2])), "mariadb") {
		return fmt.Errorf("%w: the server is not MariaDB", ErrLazyUnavailable)
	}
	if len(rows) == 1 && str(rows[0][0]) == "1" && !strings.EqualFold(str(rows[0][1]), "ROW") {
		if _, err := c.Exec(ctx, "SET SESSION binlog_format = 'ROW'"); err != nil {
			return fmt.Errorf("%w: the binary log is in %s format and the proxy's account may not set ROW for its session (%v)",
				ErrLazyUnavailable, str(rows[0][1]), err)
		}
	}
	return nil
}

// openWriter readies w, the connection that copies rows up into the fork.
// Its plain reads are READ UNCOMMITTED (the staging table's rows, which
// the snapshot's transaction has not committed: stagedRows); its copy-ups
// set their own level.
func openWriter(ctx context.Context, w Conn) error {
	if err := rowLogging(ctx, w); err != nil {
		return err
	}
	for _, s := range []string{
		"SET SESSION sql_mode = '" + fillModes + "', time_zone = '+00:00', " +
			"character_set_client = utf8mb4, collation_connection = utf8mb4_general_ci, character_set_results = binary",
		"SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
	} {
		if _, err := w.Exec(ctx, s); err != nil {
			return fmt.Errorf("ready the copy-up connection: %w", err)
		}
	}
	return nil
}
