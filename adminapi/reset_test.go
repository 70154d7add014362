package adminapi

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
)

// TestHandlerReset: POST …/reset is a change (the token, or
// admin-tokenless-changes), takes ?table=db.t repeated, and answers the
// ResetResult; a table that is not db.table is a 400.
func TestHandlerReset(t *testing.T) {
	const jsonType = "application/json"
	withToken := Options{Token: "s3cret"}
	readOnly := "keeping and discarding sandboxes needs admin-token " +
		"(or admin-tokenless-changes on a host whose local processes are all trusted)"
	for _, tc := range []apiCase{
		{"reset", withToken, "POST", "/api/v1/sandboxes/box/reset", "Bearer s3cret", 200, jsonType,
			"{\n  \"sandbox\": \"box\",\n  \"tables\": [\n    \"app.users\"\n  ],\n  \"info\": \"sandbox box reset\"\n}\n", "reset box "},
		{"reset tables", withToken, "POST", "/api/v1/sandboxes/box/reset?table=app.a&table=app.b", "Bearer s3cret", 200, jsonType,
			"{\n  \"sandbox\": \"box\",\n  \"tables\": [\n    \"app.a\",\n    \"app.b\"\n  ],\n  \"info\": \"sandbox box reset\"\n}\n", "reset box app.a,app.b"},
		{"reset of a table without its database", withToken, "POST", "/api/v1/sandboxes/box/reset?table=users", "Bearer s3cret", 400, jsonType,
			errorJSON(`bad request: table: "users" is not db.table`), ""},
		{"reset missing", withToken, "POST", "/api/v1/sandboxes/nosuch/reset", "Bearer s3cret", 404, jsonType,
			errorJSON(`not found: no such sandbox: "nosuch"`), ""},
		{"reset without the token", withToken, "POST", "/api/v1/sandboxes/box/reset", "", 401, jsonType, errorJSON("missing or wrong bearer token"), ""},
		{"tokenless reset", Options{}, "POST", "/api/v1/sandboxes/box/reset", "", 403, jsonType, errorJSON(readOnly), ""},
		{"tokenless reset allowed", Options{TokenlessChanges: true}, "POST", "/api/v1/sandboxes/box/reset", "", 200, jsonType,
			"{\n  \"sandbox\": \"box\",\n  \"tables\": [\n    \"app.users\"\n  ],\n  \"info\": \"sandbox box reset\"\n}\n", "reset box "},
		{"reset by GET", withToken, "GET", "/api/v1/sandboxes/box/reset", "Bearer s3cret", 405, "text/plain; charset=utf-8", "Method Not Allowed\n", ""},
	} {
		tc.run(t)
	}
}

// TestClientReset: the Client sends the tables as ?table= and reads the
// answer.
func TestClientReset(t *testing.T) {
	f := newFake()
	srv := httptest.NewServer(NewHandler(Options{Sandboxes: f, Token: "s3cret"}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL, Token: "s3cret"}
	r, err := c.Reset(context.Background(), "box", []string{"app.a", "app.b"})
	if err != nil || r.Sandbox != "box" || !slices.Equal(r.Tables, []string{"app.a", "app.b"}) {
		t.Errorf("Reset: %+v, %v", r, err)
	}
	if !slices.Equal(f.changes, []string{"reset box app.a,app.b"}) {
		t.Errorf("asked %v", f.changes)
	}
}
