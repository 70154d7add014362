package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
)

// ReadyTimeout bounds one readiness check made for GET /readyz. A check that
// has not returned by then is reported as not ready.
const ReadyTimeout = 2 * time.Second

// NewHandler returns the HTTP handler of the metrics listener:
//
//   - GET /metrics: the metrics gathered from g, in the Prometheus exposition
//     format.
//   - GET /healthz: 200 "ok" whenever the process is able to answer (liveness).
//   - GET /readyz: 200 "ready" if ready(ctx) returns nil within ReadyTimeout,
//     otherwise 503 with the error text (readiness). A nil ready is always
//     ready.
//
// HEAD is accepted wherever GET is; other methods get 405 and other paths 404.
func NewHandler(g prometheus.Gatherer, ready func(context.Context) error) http.Handler {
	return newHandler(g, ready, ReadyTimeout)
}

// NewMux is NewHandler as a mux the caller may add routes to: the
// listener of cmd/sqlfork-proxy also serves the admin API (adminapi.Register)
// on it.
func NewMux(g prometheus.Gatherer, ready func(context.Context) error) *http.ServeMux {
	return newMux(g, ready, ReadyTimeout)
}

func newHandler(g prometheus.Gatherer, ready func(context.Context) error, readyTimeout time.Duration) http.Handler {
	return newMux(g, ready, readyTimeout)
}

func newMux(g prometheus.Gatherer, ready func(context.Context) error, readyTimeout time.Duration) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeText(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := checkReady(r.Context(), ready, readyTimeout); err != nil {
			writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			return
		}
		writeText(w, http.StatusOK, "ready")
	})
	return mux
}

// checkReady runs ready with a deadline and gives up waiting at the deadline
// even if ready ignores its context.
func checkReady(ctx context.Context, ready func(context.Context) error, timeout time.Duration) error {
	if ready == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	done := make(chan error, 1) // buffered: a late ready must not block forever
	go func() { done <- ready(ctx) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("readiness check did not finish within %s", timeout)
		}
		return fmt.Errorf("readiness check abandoned: %w", ctx.Err())
	}
}

func writeText(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, body)
}

// Serve binds addr (host:port; port 0 picks a free one) at once, so a bad
// address or a busy port is reported here, then serves h on it in the
// background. It returns the bound address and a shutdown function.
//
// ctx is the parent of every request's context: cancelling it cancels
// in-flight requests but does not close the listener. Call shutdown to stop:
// it stops accepting, waits for in-flight requests until its own context ends,
// then closes whatever is left, and returns once the server has stopped.
// Calling shutdown more than once is harmless.
//
// Errors of the background server are logged to log, which may be nil.
func Serve(ctx context.Context, addr string, h http.Handler, log *zap.Logger) (net.Addr, func(context.Context) error, error) {
	if log == nil {
		log = zap.NewNop()
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("metrics listener: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          zap.NewStdLog(log.Named("metrics-http")),
	}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server stopped", zap.String("addr", ln.Addr().String()), zap.Error(err))
		}
	}()
	shutdown := func(sctx context.Context) error {
		err := srv.Shutdown(sctx)
		if err != nil {
			// Deadline reached with requests still running: cut them off.
			_ = srv.Close()
			err = fmt.Errorf("metrics server shutdown: %w", err)
		}
		<-stopped
		return err
	}
	return ln.Addr(), shutdown, nil
}
