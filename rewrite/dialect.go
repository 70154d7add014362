package rewrite

import "github.com/sqlfork/sqlfork-proxy/rewrite/dialect"

// Flavor is the upstream server family (dialect.Flavor).
type Flavor = dialect.Flavor

// Server flavors.
const (
	MariaDB     = dialect.MariaDB
	MySQL       = dialect.MySQL
	OtherFlavor = dialect.OtherFlavor
)

// Server is the upstream's flavor and version (dialect.Server).
type Server = dialect.Server

// ParseServer reads a VERSION() string or handshake server version (see
// dialect.ParseServer).
func ParseServer(version string) Server { return dialect.ParseServer(version) }
