package main

import (
	"errors"
	"fmt"
	"math"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/sqlfork/sqlfork-proxy/duration"
	"github.com/sqlfork/sqlfork-proxy/proxy"
)

// Every setting of `serve` is a flag --some-name, an environment variable
// SQLFORK_SOME_NAME and a key some_name in the --config YAML file; the first of
// those that is present wins, else the default applies. The YAML file may also
// hold `users:`, which has no flag or variable.

const (
	envPrefix      = "SQLFORK_"
	configFlag     = "config"
	usersKey       = "users"
	defaultMetrics = "127.0.0.1:9104"
)

// logFormats and logLevels list what --log-format and --log-level accept.
func logFormats() []string { return []string{"console", "json"} }
func logLevels() []string  { return []string{"debug", "info", "warn", "error"} }

// settings is the resolved configuration of `serve`.
type settings struct {
	Proxy proxy.Config
	// MetricsListen is the host:port of the metrics HTTP server; empty
	// disables it.
	MetricsListen string
	LogFormat     string // one of logFormats()
	LogLevel      string // one of logLevels()
	// AdminToken protects the admin API; without it the API is served
	// only when the metrics listener is on loopback.
	AdminToken string
	// AdminTokenlessChanges lets a tokenless (loopback) admin API keep and
	// discard sandboxes.
	AdminTokenlessChanges bool
	// MemoryLimit is the Go runtime's soft memory limit in bytes
	// (runtime/debug.SetMemoryLimit); 0 leaves GOMEMLIMIT, or no limit.
	MemoryLimit byteSize
	// DiffCapture captures each fork's changed rows for SANDBOX DIFF,
	// EXPORT and PROMOTE (on by default).
	DiffCapture bool
	// Shadowed are the settings the config file gives a value a flag or
	// an environment variable overrides (a reload logs them: editing the
	// file changes nothing there).
	Shadowed []string
}

// defaultSettings takes the proxy defaults from proxy.DefaultConfig, the one
// source of truth for them.
func defaultSettings() settings {
	return settings{
		Proxy:         proxy.DefaultConfig(),
		MetricsListen: defaultMetrics,
		LogFormat:     "console",
		LogLevel:      "info",
		DiffCapture:   true,
	}
}

// setting describes one configurable value.
type setting struct {
	name  string // flag name
	usage string // help text; a `quoted` word names the flag's argument
	// field points into s at the value: *string, *bool, *int, *int64,
	// *[]string, *time.Duration or *byteSize.
	field func(s *settings) any
}

func (st setting) envVar() string  { return envName(st.name) }
func (st setting) fileKey() string { return fileKey(st.name) }

// envName maps a flag name to its environment variable: SQLFORK_ + upper case,
// '-' becomes '_'.
func envName(flag string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// fileKey maps a flag name to its YAML key: '-' becomes '_'.
func fileKey(flag string) string { return strings.ReplaceAll(flag, "-", "_") }

// settingTable lists every setting, in help order.
func settingTable() []setting {
	return slices.Concat(connectionSettings(), sandboxSettings(), operatorSettings())
}

// connectionSettings lists the settings of the proxy's listener, its
// upstream and its client connections.
func connectionSettings() []setting {
	return []setting{
		{"listen", "host:port MySQL clients connect to",
			func(s *settings) any { return &s.Proxy.Listen }},
		{"upstream", "host:port of the upstream MySQL/MariaDB server",
			func(s *settings) any { return &s.Proxy.Upstream }},
		{"upstream-user", "default upstream account; clients may log in to the proxy with it",
			func(s *settings) any { return &s.Proxy.UpstreamUser }},
		{"upstream-password", "password of upstream-user",
			func(s *settings) any { return &s.Proxy.UpstreamPassword }},
		{"auth-plugin", "auth method clients use for the default account: mysql_native_password or caching_sha2_password",
			func(s *settings) any { return &s.Proxy.AuthPlugin }},
		{"metrics-listen", "host:port of the HTTP server of /metrics, /healthz, /readyz and the admin API; empty disables it",
			func(s *settings) any { return &s.MetricsListen }},
		{"tls-cert", "PEM `file` of the certificate offered to clients (enables client TLS, with tls-key)",
			func(s *settings) any { return &s.Proxy.TLSCert }},
		{"tls-key", "PEM `file` of the private key of tls-cert",
			func(s *settings) any { return &s.Proxy.TLSKey }},
		{"tls-required", "refuse clients that do not use TLS",
			func(s *settings) any { return &s.Proxy.TLSRequired }},
		{"upstream-tls", "TLS to the upstream: disabled, preferred, required, verify-ca or verify-identity",
			func(s *settings) any { return &s.Proxy.UpstreamTLS }},
		{"upstream-tls-ca", "PEM `file` of CAs for upstream-tls verify-ca/verify-identity (default: system roots)",
			func(s *settings) any { return &s.Proxy.UpstreamTLSCA }},
		{"connect-timeout", "limit for dialling and authenticating upstream",
			func(s *settings) any { return &s.Proxy.ConnectTimeout }},
		{"handshake-timeout", "limit for the client handshake",
			func(s *settings) any { return &s.Proxy.HandshakeTimeout }},
		{"idle-timeout", "close client connections idle for this long",
			func(s *settings) any { return &s.Proxy.IdleTimeout }},
		{"write-timeout", "limit for each write to a client that has stopped reading",
			func(s *settings) any { return &s.Proxy.WriteTimeout }},
		{"shutdown-grace", "on SIGTERM/SIGINT, how long in-flight statements may finish",
			func(s *settings) any { return &s.Proxy.ShutdownGrace }},
		{"max-connections", "maximum concurrent client connections (0: unlimited)",
			func(s *settings) any { return &s.Proxy.MaxConnections }},
	}
}

// sandboxSettings lists the settings of sandboxes: the mode, forks,
// lifetimes, guardrails and side connections.
func sandboxSettings() []setting {
	return []setting{
		{"mode", "sandbox mode: transparent (every session in a sandbox), explicit (production until SANDBOX CREATE/ATTACH) or passthrough",
			func(s *settings) any { return &s.Proxy.Mode }},
		{"production-writes", "explicit mode: deny or allow writes outside a sandbox",
			func(s *settings) any { return &s.Proxy.ProductionWrites }},
		{"user-separator", "login-name separator choosing a sandbox at connect time (appuser+mysandbox); empty disables",
			func(s *settings) any { return &s.Proxy.UserSeparator }},
		{"forker", "fork strategy: auto (seekdb if VERSION() says SeekDB/OceanBase, else copy), seekdb or copy",
			func(s *settings) any { return &s.Proxy.Sandbox.Forker }},
		{"sandbox-prefix", "prefix of the databases holding forks and the registry (the upstream account needs all privileges on them)",
			func(s *settings) any { return &s.Proxy.Sandbox.Prefix }},
		{"sandbox-ttl", "lifetime of a kept sandbox unless SANDBOX KEEP TTL says otherwise (0: until discarded)",
			func(s *settings) any { return &s.Proxy.Sandbox.DefaultTTL }},
		{"sandbox-idle-ttl", "discard kept sandboxes no connection used for this long (0: never)",
			func(s *settings) any { return &s.Proxy.Sandbox.IdleTTL }},
		{"sandbox-grace", "how long a named sandbox (user+name login, sqlfork_sandbox attribute, SANDBOX CREATE name) outlives its last connection unless kept; a login with its name meanwhile gets it back (0: it ends with its last connection)",
			func(s *settings) any { return &s.Proxy.Sandbox.Grace }},
		{"max-sandbox-ttl", "longest lifetime a kept sandbox may be given, by SANDBOX KEEP/CREATE TTL or the admin API (0: no bound)",
			func(s *settings) any { return &s.Proxy.Sandbox.MaxTTL }},
		{"sandbox-reap-interval", "how often sandbox expiry is checked and leases renewed",
			func(s *settings) any { return &s.Proxy.Sandbox.ReapInterval }},
		{"sandbox-sync-lease", "how long a proxy process reads a sandbox other processes may share (named, kept) without checking the registry for their forks; a first write of a table there waits until the other processes' leases ran out (0: check before every statement that reads production)",
			func(s *settings) any { return &s.Proxy.Sandbox.SyncLease }},
		{"max-sandboxes", "maximum sandboxes alive in this process (0: unlimited)",
			func(s *settings) any { return &s.Proxy.Sandbox.MaxSandboxes }},
		{"max-fork-bytes", "guardrail: maximum bytes of forked tables per sandbox (0: unlimited)",
			func(s *settings) any { return &s.Proxy.Sandbox.Guardrails.MaxForkBytes }},
		{"max-sandboxes-per-user", "guardrail: maximum sandboxes one proxy user owns at once (0: unlimited)",
			func(s *settings) any { return &s.Proxy.Sandbox.Guardrails.MaxSandboxes }},
		{"deny-statements", "guardrail: comma-separated statement classes refused in sandbox modes: read, write, ddl, transaction, session, routine, other",
			func(s *settings) any { return &s.Proxy.Sandbox.Guardrails.DenyStatements }},
		{"deny-multi-statements", "guardrail: refuse inputs holding several statements",
			func(s *settings) any { return &s.Proxy.Sandbox.Guardrails.DenyMultiStatements }},
		{"statement-timeout", "guardrail: time limit injected into each read and write (MariaDB max_statement_time, MySQL MAX_EXECUTION_TIME; 0: none)",
			func(s *settings) any { return &s.Proxy.Sandbox.Guardrails.StatementTimeout }},
		{"max-rows", "guardrail: maximum rows of one result set; a longer one is cut with error 1226 (0: unlimited)",
			func(s *settings) any { return &s.Proxy.Sandbox.Guardrails.MaxRows }},
		{"side-connections", "most upstream connections the proxy opens for forks, its sandbox registry and catalog lookups, on top of one per client",
			func(s *settings) any { return &s.Proxy.Sandbox.SideConnections }},
		{"fork-queue-timeout", "how long a statement waits for a free side connection before it gets error 1205",
			func(s *settings) any { return &s.Proxy.Sandbox.ForkQueueTimeout }},
		{"lazy-fork-rows", "fork tables of at least this many rows lazily: usable at once, their rows copied from a snapshot in the background (0: copy every table whole before the first write returns; 1: every table)",
			func(s *settings) any { return &s.Proxy.Sandbox.LazyForkRows }},
		{"lazy-fork-rate", "most rows per second a lazy fork's background copy reads from production (0: no limit)",
			func(s *settings) any { return &s.Proxy.Sandbox.LazyForkRate }},
		{"lazy-fork-rate-for", "how long after its fork a lazy fork's background copy keeps to lazy-fork-rate; after it the copy goes as fast as it can, so that its snapshot's read view on production ends (0: until the copy is complete)",
			func(s *settings) any { return &s.Proxy.Sandbox.LazyForkRateFor }},
	}
}

// operatorSettings lists the settings of who administers sandboxes and
// promotes them, the admin API, diffs, memory and logs.
func operatorSettings() []setting {
	return []setting{
		{"sandbox-admins", "comma-separated proxy users who may list, attach and discard every sandbox",
			func(s *settings) any { return &s.Proxy.Sandbox.Admins }},
		{"promote-user", "upstream account SANDBOX PROMOTE writes production with (without it PROMOTE is refused); the everyday account can stay read-only",
			func(s *settings) any { return &s.Proxy.PromoteUser }},
		{"promote-password", "password of promote-user",
			func(s *settings) any { return &s.Proxy.PromotePassword }},
		{"diff-capture", "capture each fork's changed rows (triggers on the fork), so SANDBOX DIFF, EXPORT and PROMOTE read only what changed; off, they compare whole tables",
			func(s *settings) any { return &s.DiffCapture }},
		{"admin-token", "bearer token of the admin API on the metrics listener (required to serve it beyond loopback)",
			func(s *settings) any { return &s.AdminToken }},
		{"admin-tokenless-changes", "without admin-token, let the loopback admin API keep and discard sandboxes (any local process could)",
			func(s *settings) any { return &s.AdminTokenlessChanges }},
		{"memory-limit", "soft memory limit of the process, e.g. 512MiB (runtime/debug.SetMemoryLimit); 0 leaves GOMEMLIMIT, or none",
			func(s *settings) any { return &s.MemoryLimit }},
		{"log-format", "log encoding: console or json",
			func(s *settings) any { return &s.LogFormat }},
		{"log-level", "minimum log level: debug, info, warn or error",
			func(s *settings) any { return &s.LogLevel }},
	}
}

// addFlags defines --config and one flag per setting on fs, with the defaults
// shown in the help. Flags hold raw text: resolveSettings parses it, so a bad
// value is reported the same way whatever its source.
func addFlags(fs *pflag.FlagSet) {
	def := defaultSettings()
	fs.String(configFlag, "", "YAML `file` of settings; flags and environment variables override it (env "+envName(configFlag)+")")
	for _, st := range settingTable() {
		ptr := st.field(&def)
		raw := &rawValue{typ: typeName(ptr), val: formatValue(ptr)}
		var v pflag.Value = raw
		if _, ok := ptr.(*bool); ok {
			v = &rawBoolValue{raw}
		}
		fs.Var(v, st.name, st.usage+" (env "+st.envVar()+")")
		if _, ok := ptr.(*bool); ok {
			fs.Lookup(st.name).NoOptDefVal = "true"
		}
	}
}

// rawValue is a flag value kept as text until resolveSettings parses it.
type rawValue struct {
	typ string
	val string
}

func (v *rawValue) String() string     { return v.val }
func (v *rawValue) Set(s string) error { v.val = s; return nil }
func (v *rawValue) Type() string       { return v.typ }

// rawBoolValue lets a boolean flag be given without a value.
type rawBoolValue struct{ *rawValue }

func (*rawBoolValue) IsBoolFlag() bool { return true }

func typeName(ptr any) string {
	switch ptr.(type) {
	case *bool:
		return "bool"
	case *int, *int64:
		return "int"
	case *[]string:
		return "list"
	case *time.Duration:
		return "duration"
	case *byteSize:
		return "bytes"
	default:
		return "string"
	}
}

// formatValue renders a setting value as it would be written.
func formatValue(ptr any) string {
	switch p := ptr.(type) {
	case *string:
		return *p
	case *bool:
		return strconv.FormatBool(*p)
	case *int:
		return strconv.Itoa(*p)
	case *time.Duration:
		return duration.Format(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *[]string:
		return strings.Join(*p, ",")
	case *byteSize:
		return p.String()
	}
	panic(fmt.Sprintf("setting of unsupported type %T", ptr))
}

// parseValue parses text into the setting value ptr points at.
func parseValue(ptr any, text string) error {
	switch p := ptr.(type) {
	case *string:
		*p = text
	case *bool:
		b, err := strconv.ParseBool(text)
		if err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", text)
		}
		*p = b
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		*p = n
	case *time.Duration:
		d, err := duration.Parse(strings.TrimSpace(text))
		if err != nil {
			return err // already says: bad duration "x": use forms like …
		}
		*p = d
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", text)
		}
		*p = n
	case *[]string:
		*p = nil
		for _, f := range strings.Split(text, ",") {
			if f = strings.TrimSpace(f); f != "" {
				*p = append(*p, f)
			}
		}
	case *byteSize:
		n, err := parseByteSize(text)
		if err != nil {
			return err
		}
		*p = n
	default:
		panic(fmt.Sprintf("setting of unsupported type %T", ptr))
	}
	return nil
}

// fileValue is a setting's text from the config file and where it was.
type fileValue struct {
	text string
	line int
}

// configFile is the parsed --config file.
type configFile struct {
	path   string
	values map[string]fileValue // by flag name
	users  []proxy.User
}

// resolveSettings computes the settings of `serve` from fs (already parsed,
// with the flags of addFlags), the environment as seen through lookupEnv and
// the config file read with readFile. Per setting, a flag given on the command
// line wins over an environment variable (even an empty one), which wins over
// the config file, which wins over the default. The result is validated: every
// error names the offending setting first, and says where a value came from
// unless it came from a flag.
func resolveSettings(fs *pflag.FlagSet, lookupEnv func(string) (string, bool), readFile func(string) ([]byte, error)) (settings, error) {
	s := defaultSettings()

	var file configFile
	path, _ := lookupEnv(envName(configFlag))
	if f := fs.Lookup(configFlag); f != nil && f.Changed {
		path = f.Value.String()
	}
	if path != "" {
		data, err := readFile(path)
		if err != nil {
			return settings{}, fmt.Errorf("%s: %w", configFlag, err)
		}
		if file, err = parseConfigFile(path, data); err != nil {
			return settings{}, err
		}
		s.Proxy.Users = file.users
	}

	for _, st := range settingTable() {
		var text, from string
		fv, inFile := file.values[st.name]
		if f := fs.Lookup(st.name); f != nil && f.Changed {
			text = f.Value.String()
		} else if v, ok := lookupEnv(st.envVar()); ok {
			text, from = v, " (from "+st.envVar()+")"
		} else if inFile {
			text, from, inFile = fv.text, fmt.Sprintf(" (from %s:%d, key %s)", file.path, fv.line, st.fileKey()), false
		} else {
			continue
		}
		if inFile {
			s.Shadowed = append(s.Shadowed, st.name)
		}
		if err := parseValue(st.field(&s), text); err != nil {
			return settings{}, fmt.Errorf("%s: %w%s", st.name, err, from)
		}
	}

	if err := s.validate(); err != nil {
		return settings{}, err
	}
	return s, nil
}

// validate checks what proxy.Config.Validate does not, then runs it.
func (s *settings) validate() error {
	if !slices.Contains(logFormats(), s.LogFormat) {
		return fmt.Errorf("log-format: %q is not one of %s", s.LogFormat, strings.Join(logFormats(), ", "))
	}
	if !slices.Contains(logLevels(), s.LogLevel) {
		return fmt.Errorf("log-level: %q is not one of %s", s.LogLevel, strings.Join(logLevels(), ", "))
	}
	if s.MetricsListen != "" {
		if _, port, err := net.SplitHostPort(s.MetricsListen); err != nil {
			return fmt.Errorf("metrics-listen: %q is not host:port (or empty to disable): %w", s.MetricsListen, err)
		} else if _, err := net.LookupPort("tcp", port); err != nil {
			return fmt.Errorf("metrics-listen: %q has a bad port: %w", s.MetricsListen, err)
		}
	}
	return s.Proxy.Validate()
}

// parseConfigFile parses the YAML config file: a mapping of setting keys (flag
// names with '_' for '-') to scalars, plus an optional users list. Unknown and
// repeated keys are errors.
func parseConfigFile(path string, data []byte) (configFile, error) {
	cf := configFile{path: path, values: map[string]fileValue{}}
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s: %s:%d: %s", configFlag, path, line, fmt.Sprintf(format, args...))
	}

	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cf, fmt.Errorf("%s: %s: %w", configFlag, path, err)
	}
	if len(doc.Content) == 0 { // empty or only comments
		return cf, nil
	}
	root := deref(doc.Content[0])
	if isNull(root) {
		return cf, nil
	}
	if root.Kind != yaml.MappingNode {
		return cf, fail(root.Line, "the top level must be a mapping of key: value")
	}

	byKey := map[string]string{} // YAML key -> flag name
	for _, st := range settingTable() {
		byKey[st.fileKey()] = st.name
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], deref(root.Content[i+1])
		key := k.Value
		if first, dup := seen[key]; dup {
			return cf, fail(k.Line, "key %q repeats line %d", key, first)
		}
		seen[key] = k.Line

		if key == usersKey {
			users, err := parseUsers(v, fail)
			if err != nil {
				return cf, err
			}
			cf.users = users
			continue
		}
		name, ok := byKey[key]
		if !ok {
			hint := ""
			if _, ok := byKey[fileKey(key)]; ok {
				hint = fmt.Sprintf(" (did you mean %q?)", fileKey(key))
			}
			return cf, fail(k.Line, "unknown key %q%s", key, hint)
		}
		if v.Kind != yaml.ScalarNode {
			return cf, fail(v.Line, "%s: must be a single value", key)
		}
		text := v.Value
		if isNull(v) {
			text = ""
		}
		cf.values[name] = fileValue{text: text, line: v.Line}
	}
	return cf, nil
}

// parseUsers decodes the users list: a sequence of mappings whose keys are the
// yaml tags of proxy.User.
func parseUsers(n *yaml.Node, fail func(int, string, ...any) error) ([]proxy.User, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fail(n.Line, "%s: must be a list of users", usersKey)
	}
	known, durations := userKeys(), userDurationKeys()
	users := make([]proxy.User, 0, len(n.Content))
	for i, item := range n.Content {
		item = deref(item)
		if item.Kind != yaml.MappingNode {
			return nil, fail(item.Line, "%s[%d]: must be a mapping with keys %s", usersKey, i, strings.Join(known, ", "))
		}
		seen := map[string]int{}
		for j := 0; j+1 < len(item.Content); j += 2 {
			k, v := item.Content[j], deref(item.Content[j+1])
			if !slices.Contains(known, k.Value) {
				return nil, fail(k.Line, "%s[%d]: unknown key %q (want %s)", usersKey, i, k.Value, strings.Join(known, ", "))
			}
			if first, dup := seen[k.Value]; dup {
				return nil, fail(k.Line, "%s[%d]: key %q repeats line %d", usersKey, i, k.Value, first)
			}
			seen[k.Value] = k.Line
			if v.Kind != yaml.ScalarNode {
				return nil, fail(v.Line, "%s[%d].%s: must be a single value", usersKey, i, k.Value)
			}
			if durations[k.Value] && !isNull(v) {
				// Read as every duration setting is; yaml decodes a
				// time.Duration only from Go's form, so hand it that.
				d, err := duration.Parse(strings.TrimSpace(v.Value))
				if err != nil {
					return nil, fail(v.Line, "%s[%d].%s: %v", usersKey, i, k.Value, err)
				}
				item.Content[j+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: d.String(), Line: v.Line, Column: v.Column}
			}
		}
		var u proxy.User
		if err := item.Decode(&u); err != nil {
			return nil, fail(item.Line, "%s[%d]: %s", usersKey, i, oneLine(err))
		}
		users = append(users, u)
	}
	return users, nil
}

// userKeys lists the YAML keys of proxy.User, from its struct tags.
func userKeys() []string {
	t := reflect.TypeFor[proxy.User]()
	keys := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
			keys = append(keys, tag)
		}
	}
	return keys
}

// userDurationKeys are the YAML keys of proxy.User that hold durations.
func userDurationKeys() map[string]bool {
	t := reflect.TypeFor[proxy.User]()
	keys := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag != "" && tag != "-" && ft == reflect.TypeFor[time.Duration]() {
			keys[tag] = true
		}
	}
	return keys
}

func deref(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// oneLine flattens a multi-line yaml.TypeError into one line.
func oneLine(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return strings.Join(te.Errors, "; ")
	}
	return err.Error()
}

// byteSize is a number of bytes, written as GOMEMLIMIT is: an integer with
// an optional unit B, KiB, MiB, GiB or TiB (e.g. 512MiB).
type byteSize int64

var byteUnits = []struct {
	suffix string
	mult   int64
}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}

// String renders n in the largest unit that divides it.
func (n byteSize) String() string {
	if n == 0 {
		return "0"
	}
	for _, u := range byteUnits {
		if int64(n)%u.mult == 0 {
			return strconv.FormatInt(int64(n)/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(n), 10)
}

// parseByteSize reads a byteSize.
func parseByteSize(text string) (byteSize, error) {
	t := strings.TrimSpace(text)
	mult := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size in bytes (an integer with an optional unit B, KiB, MiB, GiB or TiB, e.g. 512MiB)", text)
	}
	return byteSize(n * mult), nil
}
