package main

import (
	"fmt"
	"net"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// connectLong is the help of `sqlfork-proxy sandbox connect`.
const connectLong = `Print how to log in to a sandbox through the proxy: the login that names it
(its owner's user, the user separator, its name: app+fix-prices), a mariadb
command line, and DSNs for Go (go-sql-driver/mysql) and JDBC. The proxy's
address is its listen setting, as the admin API says (a wildcard address is
replaced by the admin URL's host; --host sets another). Passwords are never
printed: the mariadb command asks for it, the DSNs hold <password>. With the
proxy's user-separator empty the login is the owner's, and the sandbox is
attached by SANDBOX ATTACH (or the sqlfork_sandbox connection attribute).
A sandbox admin may log in as themselves the same way, with their own user.`

// passwordPlaceholder stands for the password in the DSNs connect prints.
const passwordPlaceholder = "<password>"

// connection is how to log in to a sandbox: what connect prints.
type connection struct {
	Sandbox string `json:"sandbox"`
	Owner   string `json:"owner"`
	// Login is the login name that attaches the sandbox (owner, user
	// separator, name), or with login tags off the owner's, which then
	// runs Attach.
	Login  string `json:"login"`
	Attach string `json:"attach,omitempty"`
	Host   string `json:"host"`
	Port   int    `json:"port"`
	// MariaDB is a mariadb command line (it asks for the password); GoDSN
	// and JDBC hold passwordPlaceholder for it.
	MariaDB string `json:"mariadb"`
	GoDSN   string `json:"go_dsn"`
	JDBC    string `json:"jdbc_url"`
}

// newConnectCmd is `sqlfork-proxy sandbox connect NAME [--host H]
// [--database DB]`.
func newConnectCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	var host, db string
	cmd := &cobra.Command{
		Use: "connect NAME", Short: "Print how to log in to a sandbox: its login, a mariadb command line, Go and JDBC DSNs",
		Long: connectLong, Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			s, err := a.Show(c.Context(), args[0])
			if err != nil {
				return err
			}
			p, err := a.Proxy(c.Context())
			if err != nil {
				return err
			}
			h, port, err := proxyAddr(p.Listen, host, a.BaseURL)
			if err != nil {
				return err
			}
			conn := connectionTo(s, p.UserSeparator, h, port, db)
			if *output == "json" {
				return printJSON(c.OutOrStdout(), conn)
			}
			return writeConnection(c, conn)
		}),
	}
	cmd.Flags().StringVar(&host, "host", "", "the proxy's host as clients reach it (default: its listen address's, or the admin URL's for a wildcard)")
	cmd.Flags().StringVar(&db, "database", "", "the database to name in the command line and DSNs")
	return cmd
}

// proxyAddr is the host and port clients reach the proxy listening on
// listen at: host when set, else listen's own host — but for a wildcard
// (0.0.0.0, ::, none), which clients cannot dial, the host of the admin
// API's URL base, else 127.0.0.1.
func proxyAddr(listen, host, base string) (string, int, error) {
	lh, lp, err := net.SplitHostPort(listen)
	if err != nil {
		return "", 0, fmt.Errorf("the proxy's listen address %q: %w", listen, err)
	}
	port, err := strconv.Atoi(lp)
	if err != nil {
		return "", 0, fmt.Errorf("the proxy's listen address %q: bad port: %w", listen, err)
	}
	if host != "" {
		return host, port, nil
	}
	if !wildcard(lh) {
		return lh, port, nil
	}
	if u, err := url.Parse(base); err == nil && u.Hostname() != "" && !wildcard(u.Hostname()) {
		return u.Hostname(), port, nil
	}
	return "127.0.0.1", port, nil
}

// wildcard reports a listen host that is every address, not one to dial.
func wildcard(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// connectionTo is how to log in to s through the proxy at host:port, whose
// user separator is sep, in database db ("": none).
func connectionTo(s adminapi.Sandbox, sep, host string, port int, db string) connection {
	conn := connection{Sandbox: s.Name, Owner: s.Owner, Login: s.Owner + sep + s.Name, Host: host, Port: port}
	var attrs url.Values // connection attributes for the DSNs
	if sep == "" {
		conn.Login, conn.Attach = s.Owner, "SANDBOX ATTACH "+s.Name
		attrs = url.Values{"connectionAttributes": {"sqlfork_sandbox:" + s.Name}}
	}
	mariadb := []string{"mariadb", "-h", host, "-P", strconv.Itoa(port), "-u", conn.Login, "-p"}
	if host == "localhost" {
		// The client reads localhost as its socket, not the proxy's port.
		mariadb = append(mariadb, "--protocol=tcp")
	}
	if conn.Attach != "" {
		mariadb = append(mariadb, "--init-command="+conn.Attach)
	}
	if db != "" {
		mariadb = append(mariadb, db)
	}
	conn.MariaDB = commandLine(mariadb...)
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	conn.GoDSN = conn.Login + ":" + passwordPlaceholder + "@tcp(" + addr + ")/" + url.PathEscape(db)
	if len(attrs) > 0 {
		conn.GoDSN += "?" + attrs.Encode()
	}
	jdbc := url.Values{"user": {conn.Login}}
	for k, v := range attrs {
		jdbc[k] = v
	}
	// The placeholder stays readable: url.Values would escape its < and >.
	conn.JDBC = "jdbc:mariadb://" + addr + "/" + url.PathEscape(db) + "?" + jdbc.Encode() + "&password=" + passwordPlaceholder
	return conn
}

// writeConnection writes conn as aligned lines, each escaped for a
// terminal (cell).
func writeConnection(c *cobra.Command, conn connection) error {
	tw := newTable(c.OutOrStdout())
	fmt.Fprintf(tw, "sandbox:\t%s (owner %s)\nlogin:\t%s\n", cell(conn.Sandbox), cell(conn.Owner), cell(conn.Login))
	if conn.Attach != "" {
		fmt.Fprintf(tw, "attach:\t%s (the proxy's user-separator is empty: no login names a sandbox)\n", cell(conn.Attach))
	}
	fmt.Fprintf(tw, "mariadb:\t%s\ngo:\t%s\njdbc:\t%s\n", conn.MariaDB, cell(conn.GoDSN), cell(conn.JDBC))
	fmt.Fprintf(tw, "password:\tthe proxy user %s's own (not printed: the mariadb command asks for it)\n", cell(conn.Owner))
	return tw.Flush()
}
