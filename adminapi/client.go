package adminapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/duration"
)

// maxAnswer bounds the answer the Client reads: a larger one is an error,
// never cut short (an export cut short would be a script that does part of
// the job).
const maxAnswer = 256 << 20

// Client calls a running proxy's admin API. It implements Sandboxes, so
// what a Client returns is what the proxy's Sandboxes returned.
type Client struct {
	// BaseURL is where the API is served, e.g. http://127.0.0.1:9104
	// (the metrics listener).
	BaseURL string
	// Token is the bearer token sent with every request ("": none).
	Token string
	// HTTP makes the requests; nil uses http.DefaultClient.
	HTTP *http.Client
}

var _ Sandboxes = (*Client)(nil)

// StatusError is an answer of the admin API other than 200 OK. One with an
// ErrorBody wraps ErrNotFound for a 404, ErrBadRequest for a 400,
// ErrForbidden for a 403 and ErrConflict for a 409 (a 404 without one is a
// path the server does not serve, e.g. an admin API that is disabled).
type StatusError struct {
	StatusCode int
	// Message is the answer's ErrorBody.Error ("" if it had none).
	Message string
}

// Error reads "admin API: <message> (HTTP <code>)".
func (e *StatusError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("admin API: HTTP %d", e.StatusCode)
	}
	return fmt.Sprintf("admin API: %s (HTTP %d)", e.Message, e.StatusCode)
}

// Unwrap returns the sentinel error of the status, if it has one.
func (e *StatusError) Unwrap() error {
	if e.Message == "" {
		return nil
	}
	switch e.StatusCode {
	case http.StatusNotFound:
		return ErrNotFound
	case http.StatusBadRequest:
		return ErrBadRequest
	case http.StatusForbidden:
		return ErrForbidden
	case http.StatusConflict:
		return ErrConflict
	}
	return nil
}

// List implements Sandboxes: GET /api/v1/sandboxes.
func (c *Client) List(ctx context.Context) ([]Sandbox, error) {
	var out []Sandbox
	err := c.do(ctx, http.MethodGet, "/api/v1/sandboxes", &out)
	return out, err
}

// Show implements Sandboxes: GET /api/v1/sandboxes/{name}.
func (c *Client) Show(ctx context.Context, name string) (Sandbox, error) {
	var out Sandbox
	err := c.do(ctx, http.MethodGet, sandboxPath(name), &out)
	return out, err
}

// Keep implements Sandboxes: POST /api/v1/sandboxes/{name}/keep, with
// ?ttl= unless ttl is 0.
func (c *Client) Keep(ctx context.Context, name string, ttl *time.Duration) (Sandbox, error) {
	path := sandboxPath(name) + "/keep"
	if ttl != nil {
		if *ttl < 0 {
			return Sandbox{}, fmt.Errorf("%w: ttl %s is negative", ErrBadRequest, *ttl)
		}
		path += "?ttl=" + url.QueryEscape(duration.Format(*ttl))
	}
	var out Sandbox
	err := c.do(ctx, http.MethodPost, path, &out)
	return out, err
}

// Discard implements Sandboxes: DELETE /api/v1/sandboxes/{name}.
func (c *Client) Discard(ctx context.Context, name string) error {
	var out Discarded
	return c.do(ctx, http.MethodDelete, sandboxPath(name), &out)
}

// Diff implements Sandboxes: GET /api/v1/sandboxes/{name}/diff, with
// ?summary=1 and ?table= as o asks. It fills the Summary of the Diff with
// o.Summary, else its Changes.
func (c *Client) Diff(ctx context.Context, name string, o DiffOptions) (Diff, error) {
	q := url.Values{}
	if o.Summary {
		q.Set("summary", "1")
	}
	if o.Table != "" {
		q.Set("table", o.Table)
	}
	if o.RowsPerTable > 0 {
		q.Set("rows", strconv.Itoa(o.RowsPerTable))
	}
	path := sandboxPath(name) + "/diff"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var d Diff
	if o.Summary {
		err := c.do(ctx, http.MethodGet, path, &d.Summary)
		return d, err
	}
	err := c.do(ctx, http.MethodGet, path, &d.Changes)
	return d, err
}

// Export implements Sandboxes: GET /api/v1/sandboxes/{name}/export.
func (c *Client) Export(ctx context.Context, name string) (string, error) {
	body, err := c.send(ctx, http.MethodGet, sandboxPath(name)+"/export")
	return string(body), err
}

// Promote implements Sandboxes: POST /api/v1/sandboxes/{name}/promote,
// with the query of o.Query (none for the zero options: the API's default,
// strategy fail).
func (c *Client) Promote(ctx context.Context, name string, o PromoteOptions) (Promoted, error) {
	path := sandboxPath(name) + "/promote"
	if q := o.Query(); len(q) > 0 {
		path += "?" + q.Encode()
	}
	var out Promoted
	err := c.do(ctx, http.MethodPost, path, &out)
	return out, err
}

func sandboxPath(name string) string { return "/api/v1/sandboxes/" + url.PathEscape(name) }

// do sends a request without a body and decodes a 200 answer into out.
func (c *Client) do(ctx context.Context, method, path string, out any) error {
	return c.doBody(ctx, method, path, nil, out)
}

// doBody sends a request with the JSON body (nil: none) and decodes a 200
// or 201 answer into out.
func (c *Client) doBody(ctx context.Context, method, path string, in []byte, out any) error {
	body, err := c.sendBody(ctx, method, path, in)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("admin API at %s: reading the answer to %s %s: %w", c.BaseURL, method, path, err)
	}
	return nil
}

// send sends a request without a body and returns the body of a 200
// answer; any other answer is a StatusError.
func (c *Client) send(ctx context.Context, method, path string) ([]byte, error) {
	return c.sendBody(ctx, method, path, nil)
}

// sendBody sends a request with the JSON body in (nil: none) and returns
// the body of a 200 or 201 answer; any other answer is a StatusError.
func (c *Client) sendBody(ctx context.Context, method, path string, in []byte) ([]byte, error) {
	var reqBody io.Reader
	if in != nil {
		reqBody = bytes.NewReader(in)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, reqBody)
	if err != nil {
		return nil, fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		var e ErrorBody
		_ = json.Unmarshal(body, &e) // a body that is not an ErrorBody leaves Message empty
		return nil, &StatusError{StatusCode: resp.StatusCode, Message: e.Error}
	}
	if len(body) > maxAnswer {
		return nil, fmt.Errorf("admin API at %s: the answer to %s %s is larger than %d MiB", c.BaseURL, method, path, maxAnswer>>20)
	}
	return body, nil
}
