package main

import (
	"encoding/json"
	"net"
	"net/http"
	"path"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// adminGuard wraps the admin listener's handler, next, for the admin API
// and the web console (paths under /api/ and /ui):
//   - a request to the API of a method that changes something (POST,
//     DELETE…) sent from another site is refused (http.CrossOriginProtection
//     reads the Sec-Fetch-Site and Origin headers a browser adds; the CLI
//     and scripts send neither): a page of any site the operator visits
//     could otherwise send it "simple" cross-site POSTs (the console checks
//     its forms' origin and CSRF token itself, and answers with its page);
//   - without an admin-token (the listener is then on loopback), a request
//     whose Host does not name loopback is refused: a site rebinding its
//     own name to 127.0.0.1 would otherwise read the API and the console
//     as the same origin.
//
// /metrics, /healthz and /readyz are served as they are.
func adminGuard(next http.Handler, tokenless bool) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		adminRefusal(w, http.StatusForbidden, "refused a request sent from another site: the admin API and the console "+
			"take changes from the CLI, scripts and the console's own pages only")
	}))
	guarded := cop.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !adminPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if tokenless && !loopbackHost(r.Host) {
			adminRefusal(w, http.StatusMisdirectedRequest, "without an admin-token the admin API and the console answer "+
				"requests for 127.0.0.1, [::1] or localhost only (this one named another host)")
			return
		}
		if isUI(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		guarded.ServeHTTP(w, r)
	})
}

// adminPath reports a path of the admin API or the console.
func adminPath(p string) bool {
	p = path.Clean("/" + p)
	return strings.HasPrefix(p, "/api/") || p == "/api" || isUI(p)
}

// isUI reports a path of the console.
func isUI(p string) bool {
	p = path.Clean("/" + p)
	return p == "/ui" || strings.HasPrefix(p, "/ui/")
}

// loopbackHost reports whether a request's Host (host or host:port) names
// loopback: localhost or a loopback address.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// adminRefusal answers a refused request as the admin API answers errors:
// an adminapi.ErrorBody.
func adminRefusal(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(adminapi.ErrorBody{Error: msg})
}
