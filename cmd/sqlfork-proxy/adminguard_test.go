package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
)

// TestAdminGuard: the admin API and the console refuse changes sent from
// another site (with or without a token: a browser sends the token's
// cookie along) and, without a token, requests for a Host that does not
// name loopback (DNS rebinding); the CLI's requests, which carry neither
// Origin nor Sec-Fetch-Site, and /metrics are served as before.
func TestAdminGuard(t *testing.T) {
	type req struct {
		method, path, host, site, origin, auth string
		want                                   int
	}
	tests := []struct {
		name, token string
		reqs        []req
	}{
		{"tokenless", "", []req{
			{method: "GET", path: "/api/v1/sandboxes/box/diff?summary=1", host: "rebind.example:9104", want: 421},
			{method: "GET", path: "/ui/sandboxes/box", host: "rebind.example:9104", want: 421},
			{method: "GET", path: "/ui", host: "rebind.example", want: 421},
			{method: "GET", path: "/ui/../api/v1/sandboxes", host: "rebind.example:9104", want: 421},
			{method: "GET", path: "/metrics", host: "rebind.example:9104", want: 200},
			{method: "GET", path: "/api/v1/sandboxes/box/diff?summary=1", host: "127.0.0.1:9104", want: 200},
			{method: "GET", path: "/api/v1/sandboxes", host: "localhost:9104", want: 200},
			{method: "GET", path: "/api/v1/sandboxes", host: "[::1]:9104", want: 200},
			{method: "GET", path: "/api/v1/sandboxes", host: "127.0.0.2", want: 200},
			{method: "GET", path: "/api/v1/sandboxes", host: "localhost.rebind.example:9104", want: 421},
			{method: "POST", path: "/api/v1/sandboxes/box/keep?ttl=1s", host: "127.0.0.1:9104", site: "cross-site", want: 403},
			{method: "POST", path: "/api/v1/sandboxes/box/reset", host: "127.0.0.1:9104", origin: "http://evil.example", want: 403},
			{method: "POST", path: "/api/v1/sandboxes", host: "127.0.0.1:9104", site: "same-site", want: 403},
			{method: "POST", path: "/ui/sandboxes/box/keep", host: "127.0.0.1:9104", site: "cross-site", want: 403},
			{method: "POST", path: "/api/v1/sandboxes/box/keep?ttl=1h", host: "127.0.0.1:9104", want: 200},
			{method: "POST", path: "/api/v1/sandboxes/box/keep?ttl=1h", host: "127.0.0.1:9104", origin: "http://127.0.0.1:9104", want: 200},
		}},
		{"token", "s3cret", []req{
			{method: "GET", path: "/api/v1/sandboxes", host: "proxy.internal:9104", auth: "Bearer s3cret", want: 200},
			{method: "DELETE", path: "/api/v1/sandboxes/box", host: "proxy.internal:9104", site: "cross-site", auth: "Bearer s3cret", want: 403},
			{method: "POST", path: "/api/v1/sandboxes/box/keep?ttl=1h", host: "proxy.internal:9104", origin: "http://evil.example", auth: "Bearer s3cret", want: 403},
			{method: "DELETE", path: "/api/v1/sandboxes/box", host: "proxy.internal:9104", auth: "Bearer s3cret", want: 200},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := defaultSettings()
			s.MetricsListen, s.AdminToken, s.AdminTokenlessChanges = "127.0.0.1:9104", tc.token, true
			h, _, err := metricsListenerMux(s, prometheus.NewRegistry(), nil, &cliSandboxes{}, nil, zap.NewNop())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tc.reqs {
				q := httptest.NewRequest(r.method, r.path, nil)
				q.Host = r.host
				for k, v := range map[string]string{"Sec-Fetch-Site": r.site, "Origin": r.origin, "Authorization": r.auth} {
					if v != "" {
						q.Header.Set(k, v)
					}
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, q)
				if rec.Code != r.want {
					t.Errorf("%s %s (Host %s, site %q, origin %q): HTTP %d, want %d: %s", r.method, r.path, r.host, r.site, r.origin,
						rec.Code, r.want, strings.TrimSpace(rec.Body.String()))
				}
			}
		})
	}
}
