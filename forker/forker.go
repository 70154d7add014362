// Package forker creates the fork of a table: SeekDB's FORK TABLE, or a copy
// (CREATE TABLE … LIKE, then INSERT … SELECT) on MariaDB and MySQL. It runs
// its statements on a side connection the caller supplies, never on a
// client's connection, so no client transaction is implicitly committed.
package forker

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Conn is a side connection to the upstream.
type Conn interface {
	// Exec runs a statement and returns the rows it affected.
	Exec(ctx context.Context, sql string) (affected uint64, err error)
	// Query runs a statement and returns its rows as text; a NULL is nil.
	Query(ctx context.Context, sql string) ([][]*string, error)
}

// Stats describe a finished fork.
type Stats struct {
	Rows     int64
	Bytes    int64
	Duration time.Duration
}

// Mode says how much of the source a fork takes.
type Mode int

const (
	// Full copies structure and rows.
	Full Mode = iota
	// SchemaOnly copies the structure only: enough for TRUNCATE and DROP,
	// which never read the rows.
	SchemaOnly
	// FullOrLazy is Full where a big table may be forked lazily (filled
	// in the background, sandbox/forking lazy.go): asked for by a
	// statement the fork can serve while it fills. Only sandbox/forking's
	// Ensure reads it; everything past it sees Full.
	FullOrLazy
)

// Strategy forks tables.
type Strategy interface {
	// Name is "copy" or "seekdb".
	Name() string
	// Fork creates dst from src. dst must not exist; its database must.
	Fork(ctx context.Context, c Conn, src, dst sqlname.Table, mode Mode) (Stats, error)
}

// ErrNoSource is returned when the source table does not exist.
var ErrNoSource = errors.New("source table does not exist")

// Refused is a table the strategy will not fork, with the reason and what
// to do instead.
type Refused struct {
	Table  sqlname.Table
	Reason string
}

func (r *Refused) Error() string {
	return fmt.Sprintf("cannot fork %s: %s", r.Table.Quoted(), r.Reason)
}

// Detect picks a strategy from the upstream's VERSION(): SeekDB (or
// OceanBase) forks natively, anything else is copied.
func Detect(version string) string {
	v := strings.ToLower(version)
	if strings.Contains(v, "seekdb") || strings.Contains(v, "oceanbase") {
		return "seekdb"
	}
	return "copy"
}

// New returns the strategy called name ("copy" or "seekdb").
func New(name string) (Strategy, error) {
	switch name {
	case "copy":
		return Copy{}, nil
	case "seekdb":
		return SeekDB{RetryFor: 30 * time.Second}, nil
	}
	return nil, fmt.Errorf("unknown fork strategy %q (want auto, seekdb or copy)", name)
}

// sourceInfo is what information_schema says about a table.
type sourceInfo struct {
	typ           string // BASE TABLE, VIEW, SEQUENCE, SYSTEM VERSIONED
	autoIncrement string
}

func describe(ctx context.Context, c Conn, t sqlname.Table) (*sourceInfo, error) {
	rows, err := c.Query(ctx, "SELECT TABLE_TYPE, AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+
		quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name))
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", t.Quoted(), err)
	}
	if len(rows) == 0 {
		return nil, ErrNoSource
	}
	info := &sourceInfo{}
	if v := rows[0][0]; v != nil {
		info.typ = *v
	}
	if v := rows[0][1]; v != nil {
		info.autoIncrement = *v
	}
	return info, nil
}

// Size returns the rows (estimated) and bytes (data and indexes) of t.
func Size(ctx context.Context, c Conn, t sqlname.Table) (rows, bytes int64, err error) {
	res, err := c.Query(ctx, "SELECT TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+
		quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name))
	if err != nil {
		return 0, 0, fmt.Errorf("size of %s: %w", t.Quoted(), err)
	}
	if len(res) == 0 {
		return 0, 0, ErrNoSource
	}
	num := func(v *string) int64 {
		if v == nil {
			return 0
		}
		n, _ := strconv.ParseInt(*v, 10, 64)
		return n
	}
	return num(res[0][0]), num(res[0][1]), nil
}

// Copy forks by CREATE TABLE … LIKE and one INSERT … SELECT, which reads the
// source at one consistent snapshot (the side connection runs at READ
// COMMITTED, so the read takes no locks on the source). Carried over:
// columns, indexes, defaults, CHECK constraints, partitioning, table
// options and the AUTO_INCREMENT position. Foreign keys and triggers are
// the caller's to add (AddForeignKey, CreateTrigger), as for a SeekDB fork:
// they point at other tables, which the caller places.
type Copy struct{}

// Name implements Strategy.
func (Copy) Name() string { return "copy" }

// Fork implements Strategy.
func (Copy) Fork(ctx context.Context, c Conn, src, dst sqlname.Table, mode Mode) (Stats, error) {
	start := time.Now()
	info, err := describe(ctx, c, src)
	if err != nil {
		return Stats{}, err
	}
	if info.typ != "BASE TABLE" && info.typ != "SYSTEM VERSIONED" && info.typ != "SEQUENCE" {
		return Stats{}, &Refused{Table: src, Reason: "it is a " + strings.ToLower(info.typ) +
			", not a base table; write to its base tables instead"}
	}
	if info.typ == "SYSTEM VERSIONED" {
		return Stats{}, &Refused{Table: src, Reason: "system-versioned tables cannot be copied with their history; " +
			"work on a copy made with CREATE TABLE … AS SELECT"}
	}
	cols, err := insertableColumns(ctx, c, src)
	if err != nil {
		return Stats{}, err
	}
	// CREATE TABLE … LIKE makes a sequence of a sequence, with its
	// options; its state (next value, cycles) is its one row, copied below.
	if _, err := c.Exec(ctx, "CREATE TABLE "+dst.Quoted()+" LIKE "+src.Quoted()); err != nil {
		return Stats{}, fmt.Errorf("create %s like %s: %w", dst.Quoted(), src.Quoted(), err)
	}
	var st Stats
	if mode == Full {
		n, err := copyRows(ctx, c, src, dst, cols)
		if err != nil {
			_, _ = c.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+dst.Quoted())
			return Stats{}, fmt.Errorf("copy rows of %s: %w", src.Quoted(), err)
		}
		st.Rows = int64(n)
	}
	if info.autoIncrement != "" {
		if _, err := c.Exec(ctx, "ALTER TABLE "+dst.Quoted()+" AUTO_INCREMENT = "+info.autoIncrement); err != nil {
			return Stats{}, fmt.Errorf("set AUTO_INCREMENT of %s: %w", dst.Quoted(), err)
		}
	}
	if _, b, err := Size(ctx, c, dst); err == nil {
		st.Bytes = b
	}
	st.Duration = time.Since(start)
	return st, nil
}

// copyRows copies src's rows into dst under the fill's sql_mode, as a
// lazy fork's fill does: a key 0 in an AUTO_INCREMENT column stays 0, and
// no strict mode or date check refuses a value production holds. The
// connection's own sql_mode is set back after.
func copyRows(ctx context.Context, c Conn, src, dst sqlname.Table, cols string) (uint64, error) {
	if _, err := c.Exec(ctx, "SET @sqlfork_mode = @@SESSION.sql_mode, SESSION sql_mode = '"+fillModes+"'"); err != nil {
		return 0, err
	}
	n, err := c.Exec(ctx, "INSERT INTO "+dst.Quoted()+" ("+cols+") SELECT "+cols+" FROM "+src.Quoted())
	if _, rerr := c.Exec(context.WithoutCancel(ctx), "SET SESSION sql_mode = @sqlfork_mode"); rerr != nil && err == nil {
		err = rerr
	}
	return n, err
}

// insertableColumns lists src's columns that take values: all but
// generated ones. A column whose default advances a sequence is refused:
// the fork's default would still name the production sequence.
func insertableColumns(ctx context.Context, c Conn, src sqlname.Table) (string, error) {
	rows, err := c.Query(ctx, "SELECT COLUMN_NAME, COALESCE(GENERATION_EXPRESSION, ''), COALESCE(COLUMN_DEFAULT, '')"+
		" FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "+quote.String(src.DB)+" AND TABLE_NAME = "+
		quote.String(src.Name)+" ORDER BY ORDINAL_POSITION")
	if err != nil {
		return "", fmt.Errorf("columns of %s: %w", src.Quoted(), err)
	}
	var b strings.Builder
	for _, r := range rows {
		if r[2] != nil && callsSequence(*r[2]) {
			return "", &Refused{Table: src, Reason: "the default of its column " + quote.Ident(str(r[0])) + " is " + *r[2] +
				", which names a production sequence that the fork would advance; give the column an explicit value " +
				"or test without the sandbox"}
		}
		if r[0] == nil || r[1] != nil && *r[1] != "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote.Ident(*r[0]))
	}
	if b.Len() == 0 {
		return "", &Refused{Table: src, Reason: "it has no columns that can be copied"}
	}
	return b.String(), nil
}

// SequenceDefault returns the first column of t whose default uses a
// sequence, with that default ("" when none does): a copy of t, or a table
// made LIKE it, would advance the production sequence.
func SequenceDefault(ctx context.Context, c Conn, t sqlname.Table) (column, def string, err error) {
	rows, err := c.Query(ctx, "SELECT COLUMN_NAME, COLUMN_DEFAULT FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = "+
		quote.String(t.DB)+" AND TABLE_NAME = "+quote.String(t.Name)+" ORDER BY ORDINAL_POSITION")
	if err != nil {
		return "", "", fmt.Errorf("columns of %s: %w", t.Quoted(), err)
	}
	for _, r := range rows {
		if r[1] != nil && callsSequence(*r[1]) {
			return str(r[0]), *r[1], nil
		}
	}
	return "", "", nil
}

// callsSequence reports a column default that uses a sequence (MariaDB
// shows them as nextval(`db`.`seq`)).
func callsSequence(def string) bool {
	d := strings.ToLower(def)
	return strings.Contains(d, "nextval(") || strings.Contains(d, "lastval(") || strings.Contains(d, "setval(")
}

func str(v *string) string {
	if v == nil {
		return ""
	}
	return *v
}

// SeekDB forks with FORK TABLE src TO dst. FORK TABLE commits implicitly
// and may return while a background task still runs; DDL on either table
// fails meanwhile, so the fork is not reported done until a no-op DDL
// probe on dst (setting the comment it has) succeeds, retried for up to
// RetryFor.
type SeekDB struct {
	RetryFor time.Duration
}

// Name implements Strategy.
func (SeekDB) Name() string { return "seekdb" }

// Fork implements Strategy.
func (s SeekDB) Fork(ctx context.Context, c Conn, src, dst sqlname.Table, mode Mode) (Stats, error) {
	start := time.Now()
	if _, err := describe(ctx, c, src); err != nil {
		return Stats{}, err
	}
	stmt := "FORK TABLE " + src.Quoted() + " TO " + dst.Quoted()
	if mode == SchemaOnly {
		stmt = "CREATE TABLE " + dst.Quoted() + " LIKE " + src.Quoted()
	}
	if _, err := c.Exec(ctx, stmt); err != nil {
		return Stats{}, fmt.Errorf("fork %s to %s: %w", src.Quoted(), dst.Quoted(), err)
	}
	if mode == Full {
		if err := s.waitReady(ctx, c, dst); err != nil {
			return Stats{}, err
		}
	}
	var st Stats
	st.Rows, st.Bytes, _ = Size(ctx, c, dst)
	st.Duration = time.Since(start)
	return st, nil
}

// waitReady retries a no-op DDL on dst until the fork's background task
// lets DDL through.
func (s SeekDB) waitReady(ctx context.Context, c Conn, dst sqlname.Table) error {
	rows, err := c.Query(ctx, "SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = "+
		quote.String(dst.DB)+" AND TABLE_NAME = "+quote.String(dst.Name))
	if err != nil {
		return fmt.Errorf("probe fork %s: %w", dst.Quoted(), err)
	}
	comment := ""
	if len(rows) == 1 && rows[0][0] != nil {
		comment = *rows[0][0]
	}
	// Setting the comment it already has changes nothing but is DDL.
	probe := "ALTER TABLE " + dst.Quoted() + " COMMENT = " + quote.String(comment)
	deadline := time.Now().Add(s.RetryFor)
	delay := 10 * time.Millisecond
	for {
		_, err := c.Exec(ctx, probe)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("fork %s still busy after %s: %w", dst.Quoted(), s.RetryFor, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// RaiseAutoIncrement makes t's AUTO_INCREMENT at least to (a decimal, ""
// for none), never lowering it: a fork filled again from production keeps
// the ids its sandbox used and skips those production used since.
func RaiseAutoIncrement(ctx context.Context, c Conn, t sqlname.Table, to string) error {
	if to == "" {
		return nil
	}
	want, ok := new(big.Int).SetString(to, 10)
	if !ok {
		return fmt.Errorf("AUTO_INCREMENT %q of %s is not a number", to, t.Quoted())
	}
	info, err := describe(ctx, c, t)
	if err != nil {
		return err
	}
	if have, ok := new(big.Int).SetString(info.autoIncrement, 10); ok && have.Cmp(want) >= 0 {
		return nil
	}
	if _, err := c.Exec(ctx, "ALTER TABLE "+t.Quoted()+" AUTO_INCREMENT = "+want.String()); err != nil {
		return fmt.Errorf("set AUTO_INCREMENT of %s: %w", t.Quoted(), err)
	}
	return nil
}
