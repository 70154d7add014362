package proxy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// Admin returns what the admin API manages: the proxy's sandboxes (starting
// the sandbox manager if no login has yet).
func (s *Server) Admin() adminapi.Sandboxes { return adminSandboxes{s} }

// adminSandboxes implements adminapi.Sandboxes with the sandbox manager.
type adminSandboxes struct{ s *Server }

// List implements adminapi.Sandboxes.
func (a adminSandboxes) List(ctx context.Context) ([]adminapi.Sandbox, error) {
	m, err := a.s.sandboxes(ctx)
	if err != nil {
		return nil, err
	}
	infos, err := m.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]adminapi.Sandbox, 0, len(infos))
	for _, in := range infos {
		out = append(out, apiSandbox(in))
	}
	return out, nil
}

// Show implements adminapi.Sandboxes.
func (a adminSandboxes) Show(ctx context.Context, name string) (adminapi.Sandbox, error) {
	m, err := a.s.sandboxes(ctx)
	if err != nil {
		return adminapi.Sandbox{}, err
	}
	in, err := m.Show(ctx, name)
	if err != nil {
		return adminapi.Sandbox{}, apiError(err)
	}
	return apiSandbox(in), nil
}

// Keep implements adminapi.Sandboxes.
func (a adminSandboxes) Keep(ctx context.Context, name string, ttl *time.Duration) (adminapi.Sandbox, error) {
	m, err := a.s.sandboxes(ctx)
	if err != nil {
		return adminapi.Sandbox{}, err
	}
	in, err := m.Keep(ctx, name, ttl)
	if err != nil {
		return adminapi.Sandbox{}, apiError(err)
	}
	return apiSandbox(in), nil
}

// Discard implements adminapi.Sandboxes.
func (a adminSandboxes) Discard(ctx context.Context, name string) error {
	m, err := a.s.sandboxes(ctx)
	if err != nil {
		return err
	}
	return apiError(m.Discard(ctx, name))
}

// apiError marks the manager's errors the admin API answers with their own
// status: a missing sandbox (404) and a TTL beyond max-sandbox-ttl (400).
func apiError(err error) error {
	switch {
	case errors.Is(err, session.ErrNoSandbox):
		return fmt.Errorf("%w: %w", adminapi.ErrNotFound, err)
	case errors.Is(err, session.ErrTTL):
		return fmt.Errorf("%w: %w", adminapi.ErrBadRequest, err)
	}
	return err
}

// apiSandbox is in as the admin API shows it.
func apiSandbox(in session.Info) adminapi.Sandbox {
	out := adminapi.Sandbox{ID: in.ID, Name: in.Name, State: in.State, Owner: in.Owner, Created: in.Created,
		Connections: in.Connections, TableCount: in.TableCount, Bytes: in.Bytes}
	if in.Expires != nil {
		e := *in.Expires
		out.Expires = &e
	}
	for _, t := range in.Tables {
		out.Tables = append(out.Tables, adminapi.Table{Table: t.Table, State: t.State, Rows: t.Rows, Bytes: t.Bytes})
	}
	return out
}
