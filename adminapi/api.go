// Package adminapi is the admin HTTP API of sqlfork-proxy: the types of its
// JSON answers, the handler the proxy serves on its metrics listener, and
// the Client that `sqlfork-proxy sandbox list|show|keep|discard` calls it
// with.
//
//	GET    /api/v1/sandboxes              list: []Sandbox
//	GET    /api/v1/sandboxes/{name}       one, with its tables: Sandbox
//	POST   /api/v1/sandboxes/{name}/keep  keep (?ttl=2h, 7d…): Sandbox
//	DELETE /api/v1/sandboxes/{name}       discard: Discarded
//
// Errors are an ErrorBody with 400, 401, 403, 404 or 500. The package knows
// nothing of the proxy: the proxy implements Sandboxes.
package adminapi

import (
	"context"
	"errors"
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
}

// Table is one table of a sandbox.
type Table struct {
	Table string `json:"table"` // logical db.table
	State string `json:"state"` // fork, schema, created or dropped
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}

// Discarded is the answer to a discard: the name of the sandbox dropped.
type Discarded struct {
	Discarded string `json:"discarded"`
}

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
	// Keep keeps the sandbox called name past its last connection for
	// ttl: nil is the proxy's sandbox-ttl (as SANDBOX KEEP without TTL),
	// 0 until discarded. A ttl beyond max-sandbox-ttl (0 included, when
	// one is set) is an ErrBadRequest.
	Keep(ctx context.Context, name string, ttl *time.Duration) (Sandbox, error)
	// Discard drops the sandbox called name and its forks.
	Discard(ctx context.Context, name string) error
}

// ErrBadRequest marks an error for a request refused as asked (a TTL that
// does not parse or is beyond the bound): HTTP 400.
var ErrBadRequest = errors.New("bad request")

// ErrNotFound marks an error for a sandbox that does not exist: HTTP 404.
var ErrNotFound = errors.New("not found")
