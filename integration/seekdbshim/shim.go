// Package seekdbshim is a test-only MySQL-protocol server that sits in front
// of a real MariaDB and emulates the parts of OceanBase seekdb that a
// "seekdb" fork strategy relies on:
//
//   - FORK TABLE src TO dst (emulated with CREATE TABLE ... LIKE plus
//     INSERT ... SELECT on the client's own upstream session), including its
//     implicit commit and its errors;
//   - the background task that runs after FORK TABLE returns, during which
//     DDL on the source or destination table fails (Options.BusyFor);
//   - the server version (VERSION(), @@version and the handshake greeting).
//
// Everything else is relayed to MariaDB packet by packet, unchanged, so
// ordinary SQL, prepared statements, transactions, COM_CHANGE_USER and so on
// behave exactly as they do on MariaDB. See README.md for what is known
// about seekdb's real behaviour and what the shim infers.
//
// # Authentication
//
// The shim does not check credentials itself and never sees passwords: for
// each client connection it dials the upstream, forwards the upstream's
// greeting (with the version string replaced, and TLS and compression no
// longer offered) and relays the whole authentication exchange. Since the
// client scrambles its password with the upstream's own nonce, any account
// that can log in to the upstream MariaDB can log in through the shim with
// the same user, password and default database (root with an empty
// password, mysql_native_password users, ...). TLS and protocol compression
// are not supported between client and shim.
package seekdbshim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// DefaultVersion is what the shim reports as the server version when
// Options.Version is empty. It has the shape of the VERSION() value
// documented for seekdb ("5.7.25-OceanBase seekdb-v1.0.0.0" in the seekdb
// docs), for v1.1.0, the first release with FORK TABLE.
const DefaultVersion = "5.7.25-OceanBase seekdb-v1.1.0.0"

// The error DDL gets on a table while the background task of a FORK TABLE
// still holds its DDL lock. seekdb takes an online-DDL table lock on both
// tables until the fork task finishes; a conflicting DDL lock request fails
// with OB_ERR_EXCLUSIVE_LOCK_CONFLICT (-6003), which seekdb reports to MySQL
// clients as ER_LOCK_WAIT_TIMEOUT. See README.md.
const (
	BusyErrorCode    = 1205
	BusyErrorState   = "HY000"
	BusyErrorMessage = "Lock wait timeout exceeded; try restarting transaction"
)

const dialTimeout = 10 * time.Second

// Options configures a Shim.
type Options struct {
	// Version is what VERSION(), @@version and the handshake greeting
	// report; DefaultVersion when empty.
	Version string
	// BusyFor is how long after a FORK TABLE returns DDL naming its source
	// or destination table fails with the busy error (BusyErrorCode),
	// emulating seekdb's background fork task. 0 disables it.
	BusyFor time.Duration
	// Now is the clock BusyFor is measured with (time.Now when nil): a
	// test sets its own to move past BusyFor without waiting.
	Now func() time.Time
}

// Shim is a running seekdb emulator. Its methods are safe for concurrent use.
type Shim struct {
	upstream string
	opts     Options
	ln       net.Listener
	forks    atomic.Int64

	mu       sync.Mutex
	closed   bool
	busy     map[string]time.Time // "db.table" (lower case) -> busy until
	sessions map[*session]struct{}
	wg       sync.WaitGroup
}

// Start listens on 127.0.0.1:0 and relays every client connection to the
// MariaDB at upstream (host:port). ctx bounds only the start-up check that
// upstream speaks the MySQL protocol; the shim runs until Close.
func Start(ctx context.Context, upstream string, opts Options) (*Shim, error) {
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	if strings.ContainsRune(opts.Version, 0) {
		return nil, errors.New("seekdbshim: Options.Version must not contain NUL")
	}
	if opts.BusyFor < 0 {
		return nil, errors.New("seekdbshim: Options.BusyFor must not be negative")
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := checkUpstream(ctx, upstream); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("seekdbshim: %w", err)
	}
	s := &Shim{
		upstream: upstream,
		opts:     opts,
		ln:       ln,
		busy:     make(map[string]time.Time),
		sessions: make(map[*session]struct{}),
	}
	s.wg.Add(1)
	go s.acceptLoop()
	return s, nil
}

// checkUpstream dials upstream and reads its greeting.
func checkUpstream(ctx context.Context, upstream string) error {
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", upstream)
	if err != nil {
		return fmt.Errorf("seekdbshim: upstream: %w", err)
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	p, err := readPacket(bufio.NewReader(c))
	if err != nil {
		return fmt.Errorf("seekdbshim: reading upstream greeting: %w", err)
	}
	switch {
	case len(p.payload) > 0 && p.payload[0] == wire.ErrHeader:
		return fmt.Errorf("seekdbshim: upstream refused the connection: %w", wire.ParseErr(p.payload))
	case len(p.payload) == 0 || p.payload[0] != 10:
		return errors.New("seekdbshim: upstream does not speak MySQL protocol 10")
	}
	return nil
}

// Addr returns the host:port the shim listens on.
func (s *Shim) Addr() string { return s.ln.Addr().String() }

// Forks returns the number of FORK TABLE statements executed successfully.
func (s *Shim) Forks() int { return int(s.forks.Load()) }

// Close stops listening, closes all client and upstream connections and
// waits for their goroutines. It is safe to call more than once.
func (s *Shim) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close()
	for sess := range s.sessions {
		sess.close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Shim) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return // listener closed
		}
		sess := newSession(s, c)
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.sessions[sess] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			sess.run()
			s.mu.Lock()
			delete(s.sessions, sess)
			s.mu.Unlock()
		}()
	}
}

// markBusy records that DDL on the given tables must fail for BusyFor.
func (s *Shim) markBusy(keys ...string) {
	if s.opts.BusyFor <= 0 {
		return
	}
	until := s.opts.Now().Add(s.opts.BusyFor)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		if until.After(s.busy[k]) {
			s.busy[k] = until
		}
	}
}

// busyKeys returns the tables currently busy, dropping expired entries.
func (s *Shim) busyKeys() []string {
	now := s.opts.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var keys []string
	for k, until := range s.busy {
		if now.Before(until) {
			keys = append(keys, k)
		} else {
			delete(s.busy, k)
		}
	}
	return keys
}
