package registry

import "time"

// Config is what the registry needs of the proxy's settings.
type Config struct {
	// Prefix starts every database the proxy makes.
	Prefix string
	// Lease is how long a process's claim on its unkept sandboxes lasts
	// unless renewed; ReapInterval is how often the reaper renews leases
	// and expires sandboxes.
	Lease, ReapInterval time.Duration
	// SyncLease is how long a process may trust what it read of a shared
	// sandbox's tables without reading the registry again.
	SyncLease time.Duration
	// ForkTimeout bounds the wait for a side connection (with
	// ForkQueueTimeout) and for a sandbox's locks.
	ForkTimeout time.Duration
	// Admins may manage every sandbox.
	Admins []string
	// SideConnections and ForkQueueTimeout size the side connection pool
	// until SetLimits.
	SideConnections  int
	ForkQueueTimeout time.Duration
}

// Observer is told what the registry does, for metrics.
type Observer interface {
	// Discarded reports a sandbox discarded, by reason: discarded
	// (SANDBOX DISCARD or the admin API), last_connection (its last
	// connection closed: anonymous, or no grace), grace (a named one's
	// grace ended with nobody holding it) or expired (TTL, idle or lease).
	Discarded(reason string)
	// SideConnTimedOut reports a wait for a side connection that ran out,
	// whatever it was for.
	SideConnTimedOut()
	// RegistryChecked reports a check of a shared sandbox's registry
	// before a statement (sync.go), by result: unchanged, reloaded
	// (another process changed its tables) or discarded.
	RegistryChecked(result string)
	// LeasesAwaited reports a change of a shared sandbox's tables that
	// waited for other processes' sync leases to run out, and how long.
	LeasesAwaited(took time.Duration)
}

// nop is the Observer until SetObserver.
type nop struct{}

func (nop) Discarded(string)            {}
func (nop) SideConnTimedOut()           {}
func (nop) RegistryChecked(string)      {}
func (nop) LeasesAwaited(time.Duration) {}
