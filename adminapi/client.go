package adminapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/duration"
)

// maxAnswer bounds the answer the Client reads.
const maxAnswer = 16 << 20

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
// ErrorBody wraps ErrNotFound for a 404 and ErrBadRequest for a 400 (a 404
// without one is a path the server does not serve, e.g. an admin API that
// is disabled).
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

func sandboxPath(name string) string { return "/api/v1/sandboxes/" + url.PathEscape(name) }

// do sends a request without a body and decodes a 200 answer into out.
func (c *Client) do(ctx context.Context, method, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.BaseURL, "/")+path, nil)
	if err != nil {
		return fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
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
		return fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return fmt.Errorf("admin API at %s: %w", c.BaseURL, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e ErrorBody
		_ = json.Unmarshal(body, &e) // a body that is not an ErrorBody leaves Message empty
		return &StatusError{StatusCode: resp.StatusCode, Message: e.Error}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("admin API at %s: reading the answer to %s %s: %w", c.BaseURL, method, path, err)
	}
	return nil
}
