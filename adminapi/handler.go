package adminapi

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/duration"
)

// Options configure the admin API's handler.
type Options struct {
	// Sandboxes answers the requests; it must not be nil.
	Sandboxes Sandboxes
	// Token, when set, must be presented as "Authorization: Bearer
	// <token>" on every request (else 401).
	Token string
	// TokenlessChanges lets requests keep and discard sandboxes when no
	// Token is set. Without it a tokenless API only reads (keep and discard
	// are 403): any local process could otherwise keep or drop anyone's
	// sandbox.
	TokenlessChanges bool
}

// The messages of the handler's own refusals.
const (
	msgUnauthorized = "missing or wrong bearer token"
	msgReadOnly     = "keeping and discarding sandboxes needs admin-token " +
		"(or admin-tokenless-changes on a host whose local processes are all trusted)"
)

// NewHandler returns a handler serving the admin API alone; Register adds
// it to a mux that serves more.
func NewHandler(o Options) http.Handler {
	mux := http.NewServeMux()
	Register(mux, o)
	return mux
}

// Register adds the admin API's routes (see the package documentation) to
// mux. Answers are JSON (indented); a failed request gets an ErrorBody with
// 401 (token missing or wrong), 403 (a change without a token, unless
// TokenlessChanges), 400 (ErrBadRequest, or a ttl that does not parse),
// 404 (ErrNotFound) or 500 (any other error of Sandboxes). The ttl of keep
// is read with duration.Parse, as SANDBOX KEEP TTL reads it.
func Register(mux *http.ServeMux, o Options) {
	h := handler{o}
	mux.HandleFunc("GET /api/v1/sandboxes", h.read(h.list))
	mux.HandleFunc("GET /api/v1/sandboxes/{name}", h.read(h.show))
	mux.HandleFunc("POST /api/v1/sandboxes/{name}/keep", h.change(h.keep))
	mux.HandleFunc("DELETE /api/v1/sandboxes/{name}", h.change(h.discard))
}

// handler serves the routes of Register.
type handler struct{ o Options }

// read guards a request that only reads: the token, when one is set.
func (h handler) read(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.o.Token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.o.Token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sqlfork-proxy"`)
				writeJSON(w, http.StatusUnauthorized, ErrorBody{Error: msgUnauthorized})
				return
			}
		}
		next(w, r)
	}
}

// change guards a request that keeps or discards: the token, or without
// one, TokenlessChanges.
func (h handler) change(next http.HandlerFunc) http.HandlerFunc {
	return h.read(func(w http.ResponseWriter, r *http.Request) {
		if h.o.Token == "" && !h.o.TokenlessChanges {
			writeJSON(w, http.StatusForbidden, ErrorBody{Error: msgReadOnly})
			return
		}
		next(w, r)
	})
}

func (h handler) list(w http.ResponseWriter, r *http.Request) {
	v, err := h.o.Sandboxes.List(r.Context())
	if v == nil {
		v = []Sandbox{} // [] rather than null
	}
	answer(w, v, err)
}

func (h handler) show(w http.ResponseWriter, r *http.Request) {
	v, err := h.o.Sandboxes.Show(r.Context(), r.PathValue("name"))
	answer(w, v, err)
}

func (h handler) keep(w http.ResponseWriter, r *http.Request) {
	ttl, err := parseTTL(r.URL.Query().Get("ttl"))
	if err != nil {
		answer(w, nil, err)
		return
	}
	v, err := h.o.Sandboxes.Keep(r.Context(), r.PathValue("name"), ttl)
	answer(w, v, err)
}

func (h handler) discard(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	answer(w, Discarded{Discarded: name}, h.o.Sandboxes.Discard(r.Context(), name))
}

// answer writes v, or the error err with the status it calls for.
func answer(w http.ResponseWriter, v any, err error) {
	switch {
	case errors.Is(err, ErrNotFound):
		writeJSON(w, http.StatusNotFound, ErrorBody{Error: err.Error()})
	case errors.Is(err, ErrBadRequest):
		writeJSON(w, http.StatusBadRequest, ErrorBody{Error: err.Error()})
	case err != nil:
		writeJSON(w, http.StatusInternalServerError, ErrorBody{Error: err.Error()})
	default:
		writeJSON(w, http.StatusOK, v)
	}
}

// parseTTL reads the ttl of a keep request: "" (none asked) is 0.
func parseTTL(text string) (*time.Duration, error) {
	if text == "" {
		return nil, nil // the proxy's default
	}
	d, err := duration.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: ttl: %w", ErrBadRequest, err)
	}
	return &d, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
