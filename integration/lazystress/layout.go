// Package lazystress is the stress test of lazy forks (issue 27) that the
// integration tests and the benchmark share: production writers change a
// big table on direct connections while many sandboxes fork it at once
// and write to it while their forks fill; every fork must end as a copy
// of one consistent state of production with the sandbox's own changes
// applied, no row lost, duplicated or brought back.
//
// The table's keys are split so that every fork's expected content is
// known exactly although the moment of its snapshot is not:
//
//   - stable rows, which nobody changes: every fork holds each exactly
//     once, with its values as made;
//   - production's rows, which only production writers change, in
//     transactions that keep their count and the sum of their v: every
//     consistent state of production, so every fork, has the same count
//     and sum;
//   - the sandboxes' rows, which production never changes: each sandbox
//     holds them as its own statements left them (a model of them is
//     kept beside each sandbox), and the rows it inserted.
package lazystress

import (
	"context"
	"database/sql"
	"fmt"
	"hash/crc32"
	"strconv"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// Config is one stress run's size.
type Config struct {
	// DB is the database of the table t, made anew by Setup.
	DB string
	// Rows is the table's rows (ids 1..Rows).
	Rows int64
	// Sandboxes and Writers are how many sandboxes fork the table and
	// how many production writers change it meanwhile.
	Sandboxes, Writers int
}

// Class is who may change a row of the table as made (ids 1..Rows).
type Class int

const (
	// Stable rows nobody changes.
	Stable Class = iota
	// Production rows only production writers change.
	Production
	// Sandbox rows only sandboxes change.
	Sandbox
)

// stride is the period of the classes over ids: one id in stride is
// production's, two are the sandboxes', the rest stable.
const stride = 20

// ClassOf is the class of id, one of the table's rows as made (1..Rows);
// ids <= 0 are rows production writers inserted (Production), ids above
// Rows rows sandboxes inserted (Sandbox).
func (c Config) ClassOf(id int64) Class {
	switch {
	case id <= 0 || id <= c.Rows && id%stride == 0:
		return Production
	case id > c.Rows || id%stride == 1 || id%stride == 2:
		return Sandbox
	}
	return Stable
}

// Row is one row of the table.
type Row struct {
	ID, V, W int64
	S, U     string
}

// Initial is the row id as made.
func Initial(id int64) Row {
	return Row{ID: id, V: id % 1000, S: "s" + strconv.FormatInt(id, 10), U: "u" + strconv.FormatInt(id, 10), W: id * 3}
}

// sum is the row's checksum as SQL computes it: CRC32(CONCAT_WS('|', id,
// v, s, u, w)).
func (r Row) sum() uint64 {
	return uint64(crc32.ChecksumIEEE([]byte(fmt.Sprintf("%d|%d|%s|%s|%d", r.ID, r.V, r.S, r.U, r.W))))
}

// rowSum is the SQL of Row.sum.
const rowSum = "CRC32(CONCAT_WS('|', id, v, s, u, w))"

// Table is the stress table's name, quoted.
func (c Config) Table() string { return quote.Ident(c.DB) + ".t" }

// Setup makes the database c.DB anew with the table t of c.Rows rows
// (MariaDB: it fills it from the sequence engine).
func Setup(ctx context.Context, db *sql.DB, c Config) error {
	d := quote.Ident(c.DB)
	for _, q := range []string{
		"DROP DATABASE IF EXISTS " + d,
		"CREATE DATABASE " + d,
		"CREATE TABLE " + c.Table() + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, v BIGINT NOT NULL, s VARCHAR(40) NOT NULL, " +
			"u VARCHAR(40) NOT NULL, w BIGINT NOT NULL, UNIQUE KEY (u), UNIQUE KEY (w), KEY (v)) ENGINE=InnoDB",
		fmt.Sprintf("INSERT INTO %s (id, v, s, u, w) SELECT seq, seq %% 1000, CONCAT('s', seq), CONCAT('u', seq), seq * 3 FROM %s.seq_1_to_%d",
			c.Table(), d, c.Rows),
		"ANALYZE TABLE " + c.Table(),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("set up the stress table: %s: %w", q, err)
		}
	}
	return nil
}

// expected is what every consistent state of production holds, as made
// and kept by the writers: the stable rows' count and checksum, and the
// production rows' count and sum of v.
type expected struct {
	stableRows, stableSum   uint64
	sandboxRows, sandboxSum uint64 // the sandbox rows as made
	prodRows, prodV         int64
}

// expect computes c's expected.
func (c Config) expect() expected {
	var e expected
	for id := int64(1); id <= c.Rows; id++ {
		switch c.ClassOf(id) {
		case Stable:
			e.stableRows++
			e.stableSum += Initial(id).sum()
		case Production:
			e.prodRows++
			e.prodV += Initial(id).V
		case Sandbox:
			e.sandboxRows++
			e.sandboxSum += Initial(id).sum()
		}
	}
	return e
}

// stableWhere, prodWhere and sandboxWhere select each class's rows in SQL.
func (c Config) stableWhere() string {
	return fmt.Sprintf("id BETWEEN 1 AND %d AND id %% %d NOT IN (0, 1, 2)", c.Rows, stride)
}

func (c Config) prodWhere() string {
	return fmt.Sprintf("(id <= 0 OR id <= %d AND id %% %d = 0)", c.Rows, stride)
}

func (c Config) sandboxWhere() string {
	return fmt.Sprintf("(id > %d OR id > 0 AND id %% %d IN (1, 2))", c.Rows, stride)
}
