// Package objects gives a sandbox its own stored objects: copies of the
// production views, stored functions and procedures a session's
// statements name, placed in the sandbox's databases with their
// definitions rewritten to the sandbox's tables (views.go, functions.go,
// routines.go, procedures.go); the tables of the triggers a sandbox
// defines or drops (triggers.go); and what the objects a statement names
// reach beyond it (hazards.go).
//
// A Placer serves one session: it reads production through the shared
// catalog and side connections (Config) and asks the session, through the
// Session interface, for what only the session knows — its sandbox, its
// resolver, its checks — and for forks of tables.
package objects

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/catalog"
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Registry is what a Placer needs of the sandbox registry
// (registry.Registry): side connections, and the records of the
// sandbox's views.
type Registry interface {
	WithConn(ctx context.Context, f func(sideconn.Conn) error) error
	Persist(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox) error
	SaveEntry(ctx context.Context, c sideconn.Conn, sb *registry.Sandbox, e *sandbox.Entry) error
	SetEntry(sb *registry.Sandbox, k string, e *sandbox.Entry)
	NextEpoch() uint64
}

// Schemas makes the sandbox database for a logical one
// (forking.Forker.CreateSchema).
type Schemas interface {
	CreateSchema(ctx context.Context, c sideconn.Conn, db, phys string) error
}

// Config is what every session's Placer shares: the names, the registry,
// the catalog of production's objects and the rewrite engine of one proxy
// process.
type Config struct {
	// Prefix is the proxy's schema prefix (_sqlfork).
	Prefix   string
	Names    sandbox.Names
	Registry Registry
	Schemas  Schemas
	Catalog  *catalog.Objects
	Engine   *rewrite.Engine
	// Server is the upstream's version as the engine reads it.
	Server rewrite.Server
}

// Session is what a Placer asks of the session it serves.
type Session interface {
	// Sandbox is the session's sandbox (nil: none).
	Sandbox() *registry.Sandbox
	// RoutineDB is the sandbox database of logical database db, recorded
	// by the session for telling its name back.
	RoutineDB(db string) string
	// Ensure forks t into the sandbox (forking.Forker.Ensure), with the
	// routines the triggers it copied call placed (Placer.PlaceNeeded).
	Ensure(ctx context.Context, t rewrite.Table, mode forker.Mode) (*sandbox.Entry, bool, error)
	// Resolver maps names to the sandbox, as a statement of the session
	// is rewritten.
	Resolver() rewrite.Resolver
	// Confined refuses what no sandbox can hold (a copied routine's
	// definition is checked as the client's statement would be).
	Confined(ctx context.Context, a *rewrite.Analysis) error
	// MayExecute refuses a copy of production's routine db.name the
	// session's account may not execute.
	MayExecute(ctx context.Context, kind, db, name string) error
	// Serializable reports whether the session's reads lock.
	Serializable() bool
	// StopCapturesFor stops the change capture of the tables DDL st
	// changes (own: the client's statement).
	StopCapturesFor(ctx context.Context, st rewrite.Statement, own bool) error
	// EnsureInfoViews makes the sandbox's information_schema views.
	EnsureInfoViews(ctx context.Context) error
}

// Placer places production's stored objects in one session's sandbox. It
// is used by the session's goroutine only.
type Placer struct {
	prefix  string
	names   sandbox.Names
	reg     Registry
	schemas Schemas
	cat     *catalog.Objects
	engine  *rewrite.Engine
	server  rewrite.Server
	host    Session
	// copying are the production routines (kind NUL lower-case db NUL
	// name) whose copies are being made (procedures.go): one that calls
	// itself.
	copying map[string]bool
}

// New returns the Placer of the session s.
func New(cfg Config, s Session) *Placer {
	return &Placer{prefix: cfg.Prefix, names: cfg.Names, reg: cfg.Registry, schemas: cfg.Schemas, cat: cfg.Catalog,
		engine: cfg.Engine, server: cfg.Server, host: s}
}

// sb is the session's sandbox.
func (o *Placer) sb() *registry.Sandbox { return o.host.Sandbox() }
