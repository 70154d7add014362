package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/duration"
	"github.com/sqlfork/sqlfork-proxy/sandbox/command"
)

// createLong is the help of `sqlfork-proxy sandbox create`.
const createLong = `Create a sandbox for a proxy user, kept (it outlives connections and restarts
until its TTL ends), with no connection yet. The owner is the proxy user who
is to use it: only the owner and the sandbox admins (sandbox-admins) may
attach it, and its changes are bounded by the owner's own account. It counts
against max-sandboxes and the owner's max-sandboxes-per-user.

  sqlfork-proxy sandbox create fix-prices --owner app --ttl 7d
  sqlfork-proxy sandbox connect fix-prices      # how to log in to it

It needs --admin-token (or admin-tokenless-changes on the proxy).`

// newCreateCmd is `sqlfork-proxy sandbox create NAME --owner USER [--ttl D]`.
func newCreateCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	var owner, ttl string
	cmd := &cobra.Command{
		Use: "create NAME --owner USER", Short: "Create a kept sandbox for a proxy user (then `sandbox connect NAME` says how to log in)",
		Long: createLong, Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			if err := command.ValidName(args[0]); err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			var d *time.Duration // none: the proxy's sandbox-ttl
			if ttl != "" {
				v, err := duration.Parse(ttl)
				if err != nil {
					return &exitError{code: exitUsage, err: fmt.Errorf("--ttl: %w", err)}
				}
				d = &v
			}
			s, err := a.Create(c.Context(), args[0], owner, d)
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(c.OutOrStdout(), s)
			}
			until := "until discarded"
			if s.Expires != nil {
				until = "until " + fmtTime(s.Expires)
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "sandbox %s created for %s, kept %s\nconnect: %s\n", cell(s.Name), cell(s.Owner), until,
				commandLine(progName, "sandbox", "connect", s.Name))
			return err
		}),
	}
	cmd.Flags().StringVar(&owner, "owner", "", "the proxy user who is to use the sandbox (required)")
	cmd.Flags().StringVar(&ttl, "ttl", "", "how long to keep it, as SANDBOX KEEP TTL takes it: 7d, 36h, 90m, seconds, 0 for no end (default: sandbox-ttl)")
	_ = cmd.MarkFlagRequired("owner")
	return cmd
}

// commandLine is a command line of words, each as shellArg writes it.
func commandLine(words ...string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellArg(w)
	}
	return strings.Join(quoted, " ")
}
