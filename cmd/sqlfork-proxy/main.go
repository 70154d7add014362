// Command sqlfork-proxy is the MySQL wire-protocol proxy of sqlfork.
//
//	sqlfork-proxy serve [flags]   run the proxy
//	sqlfork-proxy version         print version information
//
// Every setting of serve is a flag, an environment variable SQLFORK_<FLAG>
// and a key of the YAML file given with --config; see
// configs/sqlfork.example.yaml.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// Build information, set with
// -ldflags "-X main.version=v1.2.3 -X main.commit=0123abc".
var (
	version = "dev"
	commit  = "unknown"
)

const progName = "sqlfork-proxy"

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the proxy could not start or failed while running
	exitUsage   = 2 // bad command line or bad setting
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], env{
		lookupEnv: os.LookupEnv,
		readFile:  os.ReadFile,
		stdout:    os.Stdout,
		stderr:    os.Stderr,
	}))
}

// env is what the commands may use of the outside world.
type env struct {
	lookupEnv func(string) (string, bool)
	readFile  func(string) ([]byte, error)
	stdout    io.Writer
	stderr    io.Writer // also receives the logs
}

// exitError carries an exit code other than exitFailure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// run executes the command line args and returns the exit code.
func run(ctx context.Context, args []string, e env) int {
	ran := false // set once a command's RunE starts: earlier errors are usage errors
	root := newRootCmd(e, &ran)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return exitOK
	}
	code := exitFailure
	if ee := (*exitError)(nil); errors.As(err, &ee) {
		code = ee.code
	} else if !ran {
		code = exitUsage
	}
	fmt.Fprintf(e.stderr, "%s: %s\n", progName, quote.Display(err.Error())) // it may name what a sandbox made
	if !ran {
		fmt.Fprintf(e.stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

func newRootCmd(e env, ran *bool) *cobra.Command {
	root := &cobra.Command{
		Use:   progName,
		Short: "MySQL wire-protocol proxy",
		Long: progName + ` is a MySQL wire-protocol proxy. Run "` + progName + ` serve" to start it;
settings come from flags, SQLFORK_* environment variables and a --config YAML file.`,
		SilenceErrors: true, // run prints them, once
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)

	serve := &cobra.Command{
		Use:   "serve",
		Short: "Run the proxy until SIGTERM or SIGINT",
		Long: `Run the proxy until SIGTERM or SIGINT.

Each setting is read from, in order of precedence: its flag; the environment
variable SQLFORK_<FLAG NAME> (upper case, '-' as '_', e.g. SQLFORK_UPSTREAM_PASSWORD);
the key <flag name> ('-' as '_', e.g. upstream_password) of the YAML file given
by --config or SQLFORK_CONFIG; else the default. Proxy users mapped to upstream
accounts are only set in the file, under users:.

Durations are written 500ms, 90s, 30m, 2h, 1h30m, 7d (whole days) or a number
of seconds, in flags, variables and the file alike.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			*ran = true
			s, err := resolveSettings(cmd.Flags(), e.lookupEnv, e.readFile)
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			reload := func() (settings, error) { return resolveSettings(cmd.Flags(), e.lookupEnv, e.readFile) }
			return runServe(cmd.Context(), s, e.stderr, reload)
		},
	}
	serve.Flags().SortFlags = false
	addFlags(serve.Flags())

	versionCmd := &cobra.Command{
		Use:   "version",
		Short: "Print version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			*ran = true
			v, c := buildVersion()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "%s %s\ncommit: %s\ngo: %s %s/%s\n",
				progName, v, c, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}

	root.AddCommand(serve, versionCmd, newSandboxCmd(e, ran))
	return root
}

// buildVersion returns version and commit, falling back to what the Go
// toolchain recorded when they were not set with -ldflags.
func buildVersion() (ver, rev string) {
	ver, rev = version, commit
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ver, rev
	}
	if ver == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		ver = bi.Main.Version
	}
	if rev == "unknown" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				rev = s.Value
			}
		}
	}
	return ver, rev
}
