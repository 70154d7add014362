package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
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
	// sandbox. Promote, which writes production, needs the Token whatever
	// this says.
	TokenlessChanges bool
	// Proxy is what GET /api/v1/proxy answers; its UserSeparator is also
	// refused in the owner of a sandbox to create.
	Proxy Proxy
}

// The messages of the handler's own refusals.
const (
	msgUnauthorized = "missing or wrong bearer token"
	msgReadOnly     = "keeping and discarding sandboxes needs admin-token " +
		"(or admin-tokenless-changes on a host whose local processes are all trusted)"
	msgTokenOnly = "promoting a sandbox writes production: it needs admin-token " +
		"(admin-tokenless-changes does not cover it)"
	msgCreateNeedsToken = "creating a sandbox needs admin-token " +
		"(or admin-tokenless-changes on a host whose local processes are all trusted)"
	msgRowsNeedToken = "a sandbox's diff and export show rows, production's too: they need admin-token " +
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
// mux. Answers are JSON (indented), but for export's text; a failed request
// gets an ErrorBody with 401 (token missing or wrong), 403 (a change without
// a token, unless TokenlessChanges; a promote without a token; or
// ErrForbidden), 400 (ErrBadRequest, or a parameter that does not parse),
// 404 (ErrNotFound), 409 (ErrConflict) or 500 (any other error of
// Sandboxes). The ttl of keep is read with duration.Parse, as SANDBOX KEEP
// TTL reads it.
func Register(mux *http.ServeMux, o Options) {
	h := handler{o}
	mux.HandleFunc("GET /api/v1/sandboxes", h.read(h.list))
	mux.HandleFunc("GET /api/v1/sandboxes/{name}", h.read(h.show))
	mux.HandleFunc("POST /api/v1/sandboxes", h.needs(NeedCreate, h.create))
	mux.HandleFunc("GET /api/v1/proxy", h.read(h.proxy))
	mux.HandleFunc("POST /api/v1/sandboxes/{name}/keep", h.change(h.keep))
	mux.HandleFunc("DELETE /api/v1/sandboxes/{name}", h.change(h.discard))
	mux.HandleFunc("GET /api/v1/sandboxes/{name}/diff", h.rows(h.diff))
	mux.HandleFunc("GET /api/v1/sandboxes/{name}/export", h.rows(h.export))
	mux.HandleFunc("POST /api/v1/sandboxes/{name}/promote", h.tokenOnly(h.promote))
	mux.HandleFunc("POST /api/v1/sandboxes/{name}/reset", h.change(h.reset))
}

// handler serves the routes of Register.
type handler struct{ o Options }

// read guards a request that only reads: the token, when one is set.
func (h handler) read(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !h.o.Authenticated(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="sqlfork-proxy"`)
			writeJSON(w, http.StatusUnauthorized, ErrorBody{Error: msgUnauthorized})
			return
		}
		next(w, r)
	}
}

// change guards a request that keeps, discards or resets: the token, or
// without one, TokenlessChanges.
func (h handler) change(next http.HandlerFunc) http.HandlerFunc { return h.needs(NeedChange, next) }

// rows guards a request that reads rows (production's among them): as
// change — any local process can reach a tokenless loopback API, which
// otherwise shows metadata only.
func (h handler) rows(next http.HandlerFunc) http.HandlerFunc { return h.needs(NeedRows, next) }

// tokenOnly guards a request that writes production: the token, which must
// be set (TokenlessChanges does not cover it).
func (h handler) tokenOnly(next http.HandlerFunc) http.HandlerFunc { return h.needs(NeedPromote, next) }

// needs passes a request that read lets through on to next when Permits
// allows need, and otherwise answers 403 with its reason.
func (h handler) needs(need Need, next http.HandlerFunc) http.HandlerFunc {
	return h.read(func(w http.ResponseWriter, r *http.Request) {
		if ok, refused := h.o.Permits(need); !ok {
			writeJSON(w, http.StatusForbidden, ErrorBody{Error: refused})
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
	withParam(w, r, "ttl", ParseTTL, h.o.Sandboxes.Keep)
}

func (h handler) discard(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	answer(w, Discarded{Discarded: name}, h.o.Sandboxes.Discard(r.Context(), name))
}

func (h handler) diff(w http.ResponseWriter, r *http.Request) {
	o, err := parseDiff(r.URL.Query())
	if err != nil {
		answer(w, nil, err)
		return
	}
	d, err := h.o.Sandboxes.Diff(r.Context(), r.PathValue("name"), o)
	switch {
	case err != nil:
		answer(w, nil, err)
	case o.Summary:
		answer(w, orEmpty(d.Summary), nil)
	default:
		answer(w, orEmpty(d.Changes), nil)
	}
}

func (h handler) export(w http.ResponseWriter, r *http.Request) {
	text, err := h.o.Sandboxes.Export(r.Context(), r.PathValue("name"))
	if err != nil {
		answer(w, nil, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte(text))
}

func (h handler) promote(w http.ResponseWriter, r *http.Request) {
	o, err := ParsePromote(r.URL.Query())
	if err != nil {
		answer(w, nil, err)
		return
	}
	p, err := h.o.Sandboxes.Promote(r.Context(), r.PathValue("name"), o)
	answer(w, p, err)
}

// withParam answers a request on the sandbox its path names with what do
// gives for the query parameter param as parse reads it, or with parse's
// error.
func withParam[P, V any](w http.ResponseWriter, r *http.Request, param string, parse func(string) (P, error),
	do func(ctx context.Context, name string, p P) (V, error)) {
	p, err := parse(r.URL.Query().Get(param))
	if err != nil {
		answer(w, nil, err)
		return
	}
	v, err := do(r.Context(), r.PathValue("name"), p)
	answer(w, v, err)
}

// answer writes v, or the error err with the status it calls for.
func answer(w http.ResponseWriter, v any, err error) {
	if err == nil {
		writeJSON(w, http.StatusOK, v)
		return
	}
	writeJSON(w, HTTPStatus(err), ErrorBody{Error: err.Error()})
}

// HTTPStatus is the status the API answers err with: that of the first
// mark of errStatus err holds (ErrNotFound 404, ErrBadRequest 400,
// ErrForbidden 403, ErrConflict 409), 500 for an error marked with none.
func HTTPStatus(err error) int {
	for _, s := range errStatus {
		if errors.Is(err, s.err) {
			return s.code
		}
	}
	return http.StatusInternalServerError
}

// errStatus is the status of an error marked with err, the first that
// matches; 500 for one marked with none.
var errStatus = []struct {
	err  error
	code int
}{
	{ErrNotFound, http.StatusNotFound},
	{ErrBadRequest, http.StatusBadRequest},
	{ErrForbidden, http.StatusForbidden},
	{ErrConflict, http.StatusConflict},
}

// ParseTTL reads the ttl of a keep request (the API's query, the console's
// form) as SANDBOX KEEP TTL reads it: "" (none asked) is nil, the proxy's
// sandbox-ttl; what does not parse is an ErrBadRequest.
func ParseTTL(text string) (*time.Duration, error) {
	if text == "" {
		return nil, nil // the proxy's default
	}
	d, err := duration.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: ttl: %w", ErrBadRequest, err)
	}
	return &d, nil
}

// parseDiff reads the options of a diff request: summary (a boolean; given
// without a value, true), table (db.table) and rows (a count above 0).
func parseDiff(q url.Values) (DiffOptions, error) {
	var o DiffOptions
	var err error
	if o.Summary, err = boolParam(q, "summary"); err != nil {
		return DiffOptions{}, err
	}
	o.Table = q.Get("table")
	if _, _, ok := o.TableName(); o.Table != "" && !ok {
		return DiffOptions{}, fmt.Errorf("%w: table: %q is not db.table", ErrBadRequest, o.Table)
	}
	if s := q.Get("rows"); q.Has("rows") {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return DiffOptions{}, fmt.Errorf("%w: rows: %q is not a count of rows above 0", ErrBadRequest, s)
		}
		o.RowsPerTable = n
	}
	return o, nil
}

// boolParam reads the boolean parameter param: absent, false; given
// without a value, true; else 1, 0, true or false.
func boolParam(q url.Values, param string) (bool, error) {
	s := q.Get(param)
	if !q.Has(param) || s == "" {
		return q.Has(param), nil
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%w: %s: %q is not 1, 0, true or false", ErrBadRequest, param, s)
	}
	return v, nil
}

// parseStrategy reads the strategy of a promote, in any case: "" is
// StrategyFail.
func parseStrategy(text string) (string, error) {
	switch s := strings.ToLower(text); s {
	case "":
		return StrategyFail, nil
	case StrategyFail, StrategyOurs, StrategyTheirs:
		return s, nil
	}
	return "", fmt.Errorf("%w: strategy: %q is not fail, ours or theirs", ErrBadRequest, text)
}

// orEmpty is s, or an empty slice for nil: JSON [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
