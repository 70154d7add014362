package metrics

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Admin is what the admin API manages: the proxy's sandboxes. Results are
// JSON-encoded as they are.
type Admin interface {
	List(ctx context.Context) (any, error)
	Show(ctx context.Context, name string) (any, error)
	// Keep keeps the sandbox for ttl as the client wrote it ("" for the
	// default; the Admin reads it as SANDBOX KEEP TTL does, so 7d works
	// in both); a TTL it refuses is an ErrBadRequest.
	Keep(ctx context.Context, name string, ttl string) (any, error)
	Discard(ctx context.Context, name string) error
}

// ErrBadRequest marks an Admin error for a request it refuses as asked
// (a TTL beyond the bound).
var ErrBadRequest = errors.New("bad request")

// ErrNotFound marks an Admin error for a sandbox that does not exist.
var ErrNotFound = errors.New("not found")

// AdminOptions configure the admin API.
type AdminOptions struct {
	Admin Admin
	// Token, when set, must be presented as "Authorization: Bearer
	// <token>" on every admin request.
	Token string
	// TokenlessChanges lets requests keep and discard sandboxes when no
	// Token is set. Without it a tokenless API only reads: any local
	// process could otherwise keep or drop anyone's sandbox.
	TokenlessChanges bool
}

// NewAdminHandler is NewHandler plus the admin API:
//
//   - GET    /api/v1/sandboxes              list
//   - GET    /api/v1/sandboxes/{name}       one, with its tables
//   - POST   /api/v1/sandboxes/{name}/keep  keep (?ttl=2h; none: until discarded)
//   - DELETE /api/v1/sandboxes/{name}       discard
//
// Answers are JSON; errors are {"error": "..."} with 400, 401, 403, 404 or
// 500. Without a token, keep and discard are 403 unless TokenlessChanges.
func NewAdminHandler(g prometheus.Gatherer, ready func(context.Context) error, o AdminOptions) http.Handler {
	mux := newMux(g, ready, ReadyTimeout)
	if o.Admin != nil {
		adminRoutes(mux, o)
	}
	return mux
}

func adminRoutes(mux *http.ServeMux, o AdminOptions) {
	auth := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if o.Token != "" {
				got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
				if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(o.Token)) != 1 {
					w.Header().Set("WWW-Authenticate", `Bearer realm="sqlfork-proxy"`)
					writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "missing or wrong bearer token"})
					return
				}
			}
			h(w, r)
		}
	}
	// change is auth for requests that keep or discard.
	change := func(h http.HandlerFunc) http.HandlerFunc {
		return auth(func(w http.ResponseWriter, r *http.Request) {
			if o.Token == "" && !o.TokenlessChanges {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "keeping and discarding sandboxes needs " +
					"admin-token (or admin-tokenless-changes on a host whose local processes are all trusted)"})
				return
			}
			h(w, r)
		})
	}
	answer := func(w http.ResponseWriter, v any, err error) {
		switch {
		case errors.Is(err, ErrNotFound):
			writeJSON(w, http.StatusNotFound, map[string]string{"error": err.Error()})
		case errors.Is(err, ErrBadRequest):
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		case err != nil:
			writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
	mux.HandleFunc("GET /api/v1/sandboxes", auth(func(w http.ResponseWriter, r *http.Request) {
		v, err := o.Admin.List(r.Context())
		answer(w, v, err)
	}))
	mux.HandleFunc("GET /api/v1/sandboxes/{name}", auth(func(w http.ResponseWriter, r *http.Request) {
		v, err := o.Admin.Show(r.Context(), r.PathValue("name"))
		answer(w, v, err)
	}))
	mux.HandleFunc("POST /api/v1/sandboxes/{name}/keep", change(func(w http.ResponseWriter, r *http.Request) {
		v, err := o.Admin.Keep(r.Context(), r.PathValue("name"), r.URL.Query().Get("ttl"))
		answer(w, v, err)
	}))
	mux.HandleFunc("DELETE /api/v1/sandboxes/{name}", change(func(w http.ResponseWriter, r *http.Request) {
		err := o.Admin.Discard(r.Context(), r.PathValue("name"))
		answer(w, map[string]string{"discarded": r.PathValue("name")}, err)
	}))
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
