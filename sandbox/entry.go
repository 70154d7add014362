package sandbox

import (
	"time"

	"github.com/sqlfork/sqlfork-proxy/sqlname"
)

// Entry is a logical table's state in a sandbox.
type Entry struct {
	Logical sqlname.Table
	Phys    sqlname.Table
	Kind    Kind
	// Def is, for a copy of a production view (KindView), the definition
	// it was made with in this process ("" when loaded from the registry).
	Def     string
	Rows    int64
	Bytes   int64
	Epoch   uint64
	Created time.Time
	// Filling: a lazy fork whose copy of production is still running
	// (forker.Filler); its rows are not all there yet.
	Filling bool
}

// Kind says what a sandbox holds for a logical table; the registry stores
// it as its text.
type Kind string

// Table kinds in a sandbox.
const (
	KindFork    Kind = "fork"    // a copy of the production table
	KindSchema  Kind = "schema"  // the structure only (before TRUNCATE or DROP)
	KindCreated Kind = "created" // made in the sandbox
	KindDropped Kind = "dropped" // dropped in the sandbox: hidden there
	KindAbsent  Kind = "absent"  // not in production; sandbox statements see it missing
	// KindForking is a registry row written before a fork starts, so that
	// reconciliation (in any process) never takes the half-made fork for
	// an orphan; a crash leaves it behind, and it is redone or reaped.
	KindForking Kind = "forking"
	// KindView is a copy of a production view reading the sandbox's
	// tables.
	KindView Kind = "view"
)

// DBKind says what a sandbox holds of a logical database of its own; the
// registry stores it as its text.
type DBKind string

// Database kinds in a sandbox.
const (
	// DBCreated is a database the sandbox made, of a name production does
	// not have.
	DBCreated DBKind = "created"
	// DBDropped is production's database, dropped in the sandbox.
	DBDropped DBKind = "dropped"
	// DBRecreated is production's database dropped in the sandbox and
	// made again there: none of production's tables are in it.
	DBRecreated DBKind = "recreated"
)
