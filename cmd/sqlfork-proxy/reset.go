package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// newResetCmd is `sqlfork-proxy sandbox reset NAME [--for db.t ...]`:
// SANDBOX RESET through the admin API.
func newResetCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	var tables []string
	cmd := &cobra.Command{
		Use: "reset NAME", Args: cobra.ExactArgs(1),
		Short: "Give a sandbox's tables (--for: those) back to production as it is now; the next write forks them afresh",
		Long: `Reset a sandbox, as SANDBOX RESET does: the tables it forked, created or dropped (with --for, the tables
named and those foreign keys or triggers link to them) read production as it is now, their changes gone,
and the next write forks them afresh. The sandbox stays: its name, connections, keep and expiry.`,
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			for _, t := range tables {
				if _, _, ok := adminapi.SplitTable(t); !ok {
					return &exitError{code: exitUsage, err: fmt.Errorf("--for: %q is not db.table", t)}
				}
			}
			r, err := a.Reset(c.Context(), args[0], tables)
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(c.OutOrStdout(), r)
			}
			_, err = fmt.Fprintln(c.OutOrStdout(), cell(r.Info))
			return err
		}),
	}
	cmd.Flags().StringSliceVar(&tables, "for", nil, "reset only this table, as db.table (repeat, or comma-separate, for more)")
	return cmd
}
