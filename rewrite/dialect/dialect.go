// Package dialect names the upstream server's flavor and version, which
// decide details of how it reads a text.
package dialect

import (
	"strconv"
	"strings"
)

// Flavor is the upstream server family: its lexer and grammar differ in
// details the proxy must follow (executable comments, guardrail syntax).
type Flavor int

// Server flavors.
const (
	MariaDB Flavor = iota
	MySQL
	// OtherFlavor is a server that speaks the protocol but whose lexer the
	// proxy does not know in detail (SeekDB, OceanBase, TiDB, …).
	OtherFlavor
)

// String is the flavor's name.
func (f Flavor) String() string {
	switch f {
	case MariaDB:
		return "MariaDB"
	case MySQL:
		return "MySQL"
	}
	return "other"
}

// Server is the upstream's flavor and version, which decide how the
// server reads version comments (/*!NNNNN … */). The zero value is an
// unknown server: texts whose reading depends on the version are refused.
type Server struct {
	Flavor Flavor
	// Version is the server's MYSQL_VERSION_ID: major*10000 + minor*100 +
	// patch (10.11.19 is 101119); 0 when unknown.
	Version int
}

// ParseServer reads a VERSION() string or handshake server version
// ("10.11.19-MariaDB-0+deb12u1", "5.5.5-10.6.4-MariaDB", "8.0.36",
// "5.7.25-OceanBase-v4.2.1").
func ParseServer(version string) Server {
	v := version
	lower := strings.ToLower(v)
	s := Server{Flavor: MySQL}
	switch {
	case strings.Contains(lower, "mariadb"):
		s.Flavor = MariaDB
		// MariaDB's handshake prefixes "5.5.5-" for old replication
		// clients; VERSION() does not.
		v = strings.TrimPrefix(v, "5.5.5-")
	case strings.Contains(lower, "oceanbase") || strings.Contains(lower, "seekdb") || strings.Contains(lower, "tidb"):
		s.Flavor = OtherFlavor
	}
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || v[end] == '.') {
		end++
	}
	parts := strings.Split(v[:end], ".")
	if len(parts) < 3 {
		return Server{Flavor: s.Flavor}
	}
	var n [3]int
	for i := range n {
		x, err := strconv.Atoi(parts[i])
		if err != nil || x < 0 || x > 99 && i > 0 {
			return Server{Flavor: s.Flavor}
		}
		n[i] = x
	}
	s.Version = n[0]*10000 + n[1]*100 + n[2]
	return s
}
