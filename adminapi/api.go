// Package adminapi is the admin HTTP API of sqlfork-proxy: the types of its
// JSON answers, the handler the proxy serves on its metrics listener, and
// the Client that `sqlfork-proxy sandbox create|connect|list|show|keep|discard|diff|export|promote`
// calls it with.
//
//	GET    /api/v1/sandboxes                 list: []Sandbox
//	GET    /api/v1/sandboxes/{name}          one, with its tables: Sandbox
//	POST   /api/v1/sandboxes                 create, kept, for an owner (a CreateRequest):
//	                                         201 and Sandbox
//	GET    /api/v1/proxy                     where clients connect: Proxy
//	POST   /api/v1/sandboxes/{name}/keep     keep (?ttl=2h, 7d…): Sandbox
//	DELETE /api/v1/sandboxes/{name}          discard: Discarded
//	GET    /api/v1/sandboxes/{name}/diff     SANDBOX DIFF (?summary=1: []DiffTable;
//	                                         else []DiffChange; ?table=db.t: that table;
//	                                         ?rows=N: N changed rows of each table at most)
//	GET    /api/v1/sandboxes/{name}/export   SANDBOX EXPORT: SQL text (text/plain, ExportText)
//	POST   /api/v1/sandboxes/{name}/promote  SANDBOX PROMOTE: Promoted (see PromoteOptions:
//	                                         ?strategy=fail|ours|theirs, ?table=db.t and
//	                                         ?overwrite=db.t repeated, ?dry_run=1 or
//	                                         ?matching=sha256:…)
//	POST   /api/v1/sandboxes/{name}/reset    SANDBOX RESET: ResetResult (?table=db.t
//	                                         repeated: those tables; none: every table)
//
// Errors are an ErrorBody with 400, 401, 403, 404, 409 or 500. Promote
// writes production: it needs the bearer token even with TokenlessChanges
// (a dry run too, which reads production with the promote account).
// The package knows nothing of the proxy: the proxy implements Sandboxes.
// Who may do what (Options.Permits, Options.Authenticated) is shared with
// the web console (package console), which calls the same Sandboxes.
package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// Sandbox is a sandbox as the admin API shows it. Its JSON is the API's
// wire format: keep names and omitempty as they are.
type Sandbox struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	State string `json:"state"` // active, kept, or grace (no connection; ends with its grace)
	Owner string `json:"owner"` // the proxy user who created it
	// Created is when it was created; Expires, when it ends unless kept
	// longer or, in its grace, used again (absent: no end set).
	Created time.Time  `json:"created"`
	Expires *time.Time `json:"expires,omitempty"`
	// Connections counts the connections attached to it through the
	// answering process.
	Connections int `json:"connections"`
	// Tables are its tables, in Show and Keep answers only (absent in a
	// list, and when it has none).
	Tables []Table `json:"tables,omitempty"`
	// TableCount counts its tables other than dropped ones; Bytes is their
	// size.
	TableCount int   `json:"table_count"`
	Bytes      int64 `json:"bytes"`
	// Changes says what it holds that production does not: none,
	// unpromoted (it wrote since it was made or last promoted whole) or
	// promoted (everything it changed is production's).
	Changes string `json:"changes"`
	// Promoted is when a promote of it last committed (absent: never).
	Promoted *time.Time `json:"promoted,omitempty"`
}

// Table is one table of a sandbox.
type Table struct {
	Table string `json:"table"` // logical db.table
	State string `json:"state"` // fork, filling, schema, created or dropped
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
	// Fill is how far a lazy fork's copy is, while it fills.
	Fill *Fill `json:"fill,omitempty"`
}

// Fill is how far a lazy fork's copy of production is: rows copied of
// production's estimate, since when, and why it failed.
type Fill struct {
	Copied  int64     `json:"copied"`
	Total   int64     `json:"total"`
	Started time.Time `json:"started"`
	Error   string    `json:"error,omitempty"`
	// CopiedUp counts the statements' copy-ups of rows the copy has not
	// made yet, by where they read them: "staging" (rows the copy has
	// read already, not yet committed), "snapshot" (the others), and
	// "transaction" (from the snapshot, inside a transaction that holds
	// the fork).
	CopiedUp map[string]int64 `json:"copied_up,omitempty"`
	// Waiting: the copy is complete, and its end waits for a transaction
	// that used the fork to end (COMMIT or ROLLBACK).
	Waiting bool `json:"waiting,omitempty"`
	// BuildingKeys: the copy is complete, and the plain secondary keys it
	// left out are being built (one ALTER TABLE, sorted).
	BuildingKeys bool `json:"building_keys,omitempty"`
}

// Discarded is the answer to a discard: the name of the sandbox dropped.
type Discarded struct {
	Discarded string `json:"discarded"`
}

// DiffOptions say what a diff shows.
type DiffOptions struct {
	// Summary asks for one DiffTable per changed table instead of one
	// DiffChange per changed row.
	Summary bool
	// Table, as db.table, restricts the diff to that table ("": every
	// table). The database is the part before the first dot.
	Table string
	// RowsPerTable, when above 0, answers at most that many changed rows
	// of each table, the first by key (the summary counts them all).
	RowsPerTable int
}

// TableName splits Table into its database and table, at the first dot; ok
// is false (and both "") when Table is not of the form db.table.
func (o DiffOptions) TableName() (db, table string, ok bool) { return SplitTable(o.Table) }

// SplitTable splits name, a db.table, into its database and table at the
// first dot; ok is false (and both "") when either part is missing.
func SplitTable(name string) (db, table string, ok bool) {
	db, table, ok = strings.Cut(name, ".")
	if !ok || db == "" || table == "" {
		return "", "", false
	}
	return db, table, true
}

// Diff is a sandbox's diff against production: Summary with
// DiffOptions.Summary, else Changes.
type Diff struct {
	Summary []DiffTable
	Changes []DiffChange
}

// DiffTable is one changed table of a summary diff (SANDBOX DIFF SUMMARY).
// Its JSON keys are the statement's column names.
type DiffTable struct {
	Table  string `json:"table_name"` // logical db.table
	Change string `json:"change"`     // forked, created, altered or dropped
	// Inserted, Updated and Deleted count the sandbox's changed rows;
	// Conflicts those of them production changed too since the fork.
	Inserted  int64 `json:"rows_inserted"`
	Updated   int64 `json:"rows_updated"`
	Deleted   int64 `json:"rows_deleted"`
	Conflicts int64 `json:"conflicts"`
	// KeyKind is what rows are matched by (the kind of key; row: whole
	// rows), Method how the table is diffed (capture, compare, created,
	// dropped).
	KeyKind string `json:"key_kind"`
	Method  string `json:"method"`
	// Note says why a table is compared whole, or that production changed
	// its columns since the fork ("": nothing to say).
	Note string `json:"note"`
}

// DiffChange is one changed row, or one DDL statement, of a detailed diff
// (SANDBOX DIFF). Key, Before, After and Production are JSON (objects of
// column values; null when the row has none), except for op ddl, whose After
// is a JSON string holding the statement.
type DiffChange struct {
	Table string `json:"table"` // logical db.table
	// Op is insert, update, delete, conflict (a row production changed
	// since the fork, differently) or ddl.
	Op         string          `json:"op"`
	Key        json.RawMessage `json:"key"`
	Before     json.RawMessage `json:"before"`     // the row at fork time
	After      json.RawMessage `json:"after"`      // the sandbox's row
	Production json.RawMessage `json:"production"` // production's row now
}

// ExportText is an export's statements as the export endpoint answers
// them: a script for the mysql client, each statement followed by ";\n"
// and each comment line ("-- …") by "\n".
func ExportText(statements []string) string {
	var b strings.Builder
	for _, s := range statements {
		b.WriteString(s)
		if !strings.HasPrefix(s, "-- ") {
			b.WriteByte(';')
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// The strategies of a promote.
const (
	StrategyFail   = "fail"   // refuse if production changed a row the sandbox changed
	StrategyOurs   = "ours"   // write the sandbox's rows anyway
	StrategyTheirs = "theirs" // leave such rows as production has them
)

// Promoted is the answer to a promote that committed, or to a dry run.
type Promoted struct {
	Sandbox  string `json:"sandbox"`
	Strategy string `json:"strategy"` // fail, ours or theirs
	Outcome  string `json:"outcome"`  // committed, or "dry run"
	// Info is the proxy's account of it (as SANDBOX PROMOTE's OK packet
	// says it, or a DRY RUN's message); Rows counts the rows inserted,
	// updated and deleted (none in a dry run).
	Info string `json:"info"`
	Rows int64  `json:"rows"`
	// DryRun is set in the answer to a dry run, which applied nothing:
	// Plan is what the promote would do (as PROMOTE … DRY RUN's rows, its
	// digest aside), Digest the plan's digest, which Matching takes.
	DryRun bool       `json:"dry_run,omitempty"`
	Plan   []PlanStep `json:"plan,omitempty"`
	Digest string     `json:"digest,omitempty"`
}

// PlanStep is one step of a dry run's plan, in its order: a conflict with
// production now first, then the statements (ddl before the rows, rows,
// ddl after).
type PlanStep struct {
	Step      string `json:"step"`      // conflict, ddl or rows
	Statement string `json:"statement"` // the conflict (table, key, columns) or the statement
}

// OutcomeDryRun is the Outcome of a dry run's answer.
const OutcomeDryRun = "dry run"

// ErrorBody is the answer to a request that failed.
type ErrorBody struct {
	Error string `json:"error"`
}

// Sandboxes is what the admin API manages; the proxy implements it.
type Sandboxes interface {
	// List returns every sandbox, without tables, sorted by name.
	List(ctx context.Context) ([]Sandbox, error)
	// Show returns the sandbox called name, with its tables.
	Show(ctx context.Context, name string) (Sandbox, error)
	// Create makes the sandbox called name for the proxy user owner, kept
	// for ttl (nil: the proxy's sandbox-ttl; 0: until discarded), with no
	// connection. A name taken is an ErrConflict (so is max-sandboxes or
	// the owner's cap reached); a bad name or owner, or a ttl beyond
	// max-sandbox-ttl, an ErrBadRequest.
	Create(ctx context.Context, name, owner string, ttl *time.Duration) (Sandbox, error)
	// Keep keeps the sandbox called name past its last connection for
	// ttl: nil is the proxy's sandbox-ttl (as SANDBOX KEEP without TTL),
	// 0 until discarded. A ttl beyond max-sandbox-ttl (0 included, when
	// one is set) is an ErrBadRequest.
	Keep(ctx context.Context, name string, ttl *time.Duration) (Sandbox, error)
	// Discard drops the sandbox called name and its forks.
	Discard(ctx context.Context, name string) error
	// Diff returns the diff of the sandbox called name against production,
	// as a sandbox admin reads it. A diff too large to answer is an
	// ErrConflict.
	Diff(ctx context.Context, name string, o DiffOptions) (Diff, error)
	// Export returns the statements that turn production into the sandbox
	// called name's state, as ExportText writes them.
	Export(ctx context.Context, name string) (string, error)
	// Promote applies the sandbox called name's changes to production as o
	// asks (its strategy, tables, overwrites; only the plan Matching names),
	// as a sandbox admin; with o.DryRun it applies nothing and answers the
	// plan. A promote refused as things stand (conflicts, tables it cannot
	// check under the strategy, a plan other than Matching, another promote
	// running) is an ErrConflict; one the proxy may not do (no promote
	// account) an ErrForbidden; options that do not hold an ErrBadRequest.
	Promote(ctx context.Context, name string, o PromoteOptions) (Promoted, error)
	// Reset gives the tables (db.table; none: every table) of the sandbox
	// called name back to production as it is now: its connections read
	// production's tables, and the next write forks them afresh. A table
	// that exists nowhere, a promote of it running or a transaction using
	// its tables is an ErrConflict; a table that is not db.table an
	// ErrBadRequest.
	Reset(ctx context.Context, name string, tables []string) (ResetResult, error)
}

// ErrBadRequest marks an error for a request refused as asked (a TTL that
// does not parse or is beyond the bound): HTTP 400.
var ErrBadRequest = errors.New("bad request")

// ErrNotFound marks an error for a sandbox that does not exist: HTTP 404.
var ErrNotFound = errors.New("not found")

// ErrForbidden marks an error for a request the proxy may not carry out
// (a promote without a promote account): HTTP 403.
var ErrForbidden = errors.New("forbidden")

// ErrConflict marks an error for a request refused as the sandbox or
// production stand (a promote's conflicts): HTTP 409.
var ErrConflict = errors.New("conflict")
