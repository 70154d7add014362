package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/duration"
)

// CreateRequest is the body of POST /api/v1/sandboxes: the sandbox to
// make, kept, for its owner.
type CreateRequest struct {
	// Name is the sandbox's name: 1 to 48 letters, digits, '_' or '-'.
	Name string `json:"name"`
	// Owner is the proxy user who is to use it (its login tag is
	// owner+name): only the owner and sandbox admins may attach it.
	Owner string `json:"owner"`
	// TTL is how long it is kept, as SANDBOX KEEP TTL reads it (7d, 36h,
	// 90m, a number of seconds; "0": until discarded); "" is the proxy's
	// sandbox-ttl.
	TTL string `json:"ttl,omitempty"`
}

// Proxy is what the admin API tells of the proxy itself
// (GET /api/v1/proxy): what a client needs to connect to a sandbox.
type Proxy struct {
	// Listen is the host:port MySQL clients connect to (listen).
	Listen string `json:"listen"`
	// UserSeparator joins a login's user and sandbox (appuser+mysandbox);
	// "" when login tags are off (user-separator empty).
	UserSeparator string `json:"user_separator"`
}

// maxCreateBody bounds the body of a create request.
const maxCreateBody = 64 << 10

// create answers POST /api/v1/sandboxes: 201 and the sandbox made, with
// its path in Location.
func (h handler) create(w http.ResponseWriter, r *http.Request) {
	req, ttl, err := h.readCreate(w, r)
	if err != nil {
		answer(w, nil, err)
		return
	}
	v, err := h.o.Sandboxes.Create(r.Context(), req.Name, req.Owner, ttl)
	if err != nil {
		answer(w, nil, err)
		return
	}
	w.Header().Set("Location", sandboxPath(v.Name))
	writeJSON(w, http.StatusCreated, v)
}

// readCreate reads the body of a create request: a CreateRequest, alone,
// with its TTL parsed. An owner that holds the user separator is refused:
// its login, owner+name, would be read as another user's.
func (h handler) readCreate(w http.ResponseWriter, r *http.Request) (CreateRequest, *time.Duration, error) {
	var req CreateRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxCreateBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, nil, fmt.Errorf(`%w: the body must be a JSON object {"name": …, "owner": …, "ttl": …}: %w`, ErrBadRequest, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return req, nil, fmt.Errorf("%w: the body must hold one JSON object", ErrBadRequest)
	}
	if sep := h.o.Proxy.UserSeparator; sep != "" && strings.Contains(req.Owner, sep) {
		return req, nil, fmt.Errorf("%w: owner %q holds the user separator %q: the login %s would name another user",
			ErrBadRequest, req.Owner, sep, req.Owner+sep+req.Name)
	}
	ttl, err := ParseTTL(req.TTL)
	return req, ttl, err
}

// proxy answers GET /api/v1/proxy.
func (h handler) proxy(w http.ResponseWriter, _ *http.Request) { answer(w, h.o.Proxy, nil) }

// Create implements Sandboxes: POST /api/v1/sandboxes with a
// CreateRequest (ttl nil: none, the proxy's sandbox-ttl).
func (c *Client) Create(ctx context.Context, name, owner string, ttl *time.Duration) (Sandbox, error) {
	req := CreateRequest{Name: name, Owner: owner}
	if ttl != nil {
		if *ttl < 0 {
			return Sandbox{}, fmt.Errorf("%w: ttl %s is negative", ErrBadRequest, *ttl)
		}
		req.TTL = duration.Format(*ttl)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Sandbox{}, err
	}
	var out Sandbox
	err = c.doBody(ctx, http.MethodPost, "/api/v1/sandboxes", body, &out)
	return out, err
}

// Proxy is GET /api/v1/proxy: where clients connect, how a login names a
// sandbox.
func (c *Client) Proxy(ctx context.Context) (Proxy, error) {
	var out Proxy
	err := c.do(ctx, http.MethodGet, "/api/v1/proxy", &out)
	return out, err
}
