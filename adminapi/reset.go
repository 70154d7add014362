package adminapi

import (
	"context"
	"net/http"
	"net/url"
)

// ResetResult is the answer to a reset (SANDBOX RESET): the tables that
// read production as it is now, each as db.table.
type ResetResult struct {
	Sandbox string `json:"sandbox"`
	// Tables are the tables whose sandbox state went; Linked those of them
	// not asked for, reset with one that was because foreign keys or
	// triggers link them to it.
	Tables []string `json:"tables"`
	Linked []string `json:"linked,omitempty"`
	// Production are tables asked for that the sandbox did not hold.
	Production []string `json:"production,omitempty"`
	// Info is the proxy's account of it, as SANDBOX RESET's OK packet says it.
	Info string `json:"info"`
}

// Reset implements Sandboxes: POST /api/v1/sandboxes/{name}/reset, with
// ?table= for each of tables (none: every table).
func (c *Client) Reset(ctx context.Context, name string, tables []string) (ResetResult, error) {
	path := sandboxPath(name) + "/reset"
	if len(tables) > 0 {
		path += "?" + url.Values{paramTable: tables}.Encode()
	}
	var out ResetResult
	err := c.do(ctx, http.MethodPost, path, &out)
	return out, err
}

func (h handler) reset(w http.ResponseWriter, r *http.Request) {
	tables, err := tablesParam(r.URL.Query(), paramTable)
	if err != nil {
		answer(w, nil, err)
		return
	}
	v, err := h.o.Sandboxes.Reset(r.Context(), r.PathValue("name"), tables)
	answer(w, v, err)
}
