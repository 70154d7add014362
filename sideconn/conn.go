// Package sideconn holds the proxy's side connections to the upstream
// (for forks and the sandbox registry): what one is (Conn), and the
// bounded pool that hands them out in arrival order (Pool), with its
// timeout error, which a client gets as 1205.
package sideconn

import (
	"context"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

// Conn is a side connection: a forker.Conn that can be closed.
type Conn interface {
	forker.Conn
	Close() error
}

// Dialer opens side connections.
type Dialer func(ctx context.Context) (Conn, error)
