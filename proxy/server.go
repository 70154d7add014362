// Package proxy is the MySQL wire-protocol front of sqlfork-proxy: it accepts
// client connections, authenticates them, pins one upstream connection to each
// and runs the per-connection command loop that forwards responses untouched.
package proxy

import (
	"context"
	"net"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/metrics"
)

// Server is a running proxy listener. STUB: being written.
type Server struct {
	cfg Config
	log *zap.Logger
	m   *metrics.Proxy
	ln  net.Listener
}

// New validates cfg, loads TLS material and binds the client listener, so a bad
// setting or a busy port fails at start.
func New(cfg Config, log *zap.Logger, m *metrics.Proxy) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return nil, err
	}
	return &Server{cfg: cfg, log: log, m: m, ln: ln}, nil
}

// Addr is the bound client listener address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Ready reports nil when the upstream was reachable at the last check.
func (s *Server) Ready(ctx context.Context) error { return nil }

// Serve accepts clients until ctx is cancelled, then stops accepting, lets
// in-flight statements finish within ShutdownGrace and returns nil.
func (s *Server) Serve(ctx context.Context) error {
	<-ctx.Done()
	return s.ln.Close()
}
