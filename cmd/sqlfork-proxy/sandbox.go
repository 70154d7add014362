package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/duration"
)

func fmtTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// newSandboxCmd is `sqlfork-proxy sandbox list|show|keep|discard`.
func newSandboxCmd(e env, ran *bool) *cobra.Command {
	var base, token, output string
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "List, show, keep and discard the sandboxes of a running proxy (through its admin API)",
		Long: `List, show, keep and discard the sandboxes of a running proxy through the admin API
on its metrics listener (--admin-url, env SQLFORK_ADMIN_URL; default http://127.0.0.1:9104).
The bearer token is --admin-token or SQLFORK_ADMIN_TOKEN.`,
	}
	cmd.PersistentFlags().StringVar(&base, "admin-url", "", "base URL of the proxy's admin API (env SQLFORK_ADMIN_URL; default http://"+defaultMetrics+")")
	cmd.PersistentFlags().StringVar(&token, "admin-token", "", "bearer token of the admin API (env SQLFORK_ADMIN_TOKEN)")
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	client := func() (*adminapi.Client, error) {
		if output != "table" && output != "json" {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("--output: %q is not table or json", output)}
		}
		if base == "" {
			base, _ = e.lookupEnv("SQLFORK_ADMIN_URL")
		}
		if base == "" {
			base = "http://" + defaultMetrics
		}
		if _, err := url.Parse(base); err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("--admin-url: %w", err)}
		}
		if token == "" {
			token, _ = e.lookupEnv("SQLFORK_ADMIN_TOKEN")
		}
		return &adminapi.Client{BaseURL: base, Token: token, HTTP: &http.Client{Timeout: 2 * time.Minute}}, nil
	}
	printJSON := func(w io.Writer, v any) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	list := &cobra.Command{
		Use: "list", Short: "List sandboxes", Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			*ran = true
			a, err := client()
			if err != nil {
				return err
			}
			out, err := a.List(c.Context())
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(c.OutOrStdout(), out)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tID\tSTATE\tOWNER\tCREATED\tEXPIRES\tCONNECTIONS\tTABLES\tBYTES")
			for _, s := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\n", s.Name, s.ID, s.State, s.Owner, fmtTime(&s.Created),
					fmtTime(s.Expires), s.Connections, s.TableCount, s.Bytes)
			}
			return tw.Flush()
		},
	}
	show := &cobra.Command{
		Use: "show NAME", Short: "Show a sandbox and its tables", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			*ran = true
			a, err := client()
			if err != nil {
				return err
			}
			s, err := a.Show(c.Context(), args[0])
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(c.OutOrStdout(), s)
			}
			tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "name:\t%s\nid:\t%s\nstate:\t%s\nowner:\t%s\ncreated:\t%s\nexpires:\t%s\nconnections:\t%d\n",
				s.Name, s.ID, s.State, s.Owner, fmtTime(&s.Created), fmtTime(s.Expires), s.Connections)
			fmt.Fprintln(tw, "\nTABLE\tSTATE\tROWS\tBYTES")
			for _, t := range s.Tables {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", t.Table, t.State, t.Rows, t.Bytes)
			}
			return tw.Flush()
		},
	}
	var ttl string
	keep := &cobra.Command{
		Use: "keep NAME", Short: "Keep a sandbox past its last connection (and restarts)", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			*ran = true
			a, err := client()
			if err != nil {
				return err
			}
			var d *time.Duration // none: the proxy's sandbox-ttl
			if ttl != "" {
				// Read as SANDBOX KEEP TTL reads it (7d, 36h, 90m, seconds).
				v, err := duration.Parse(ttl)
				if err != nil {
					return fmt.Errorf("--ttl: %w", err)
				}
				d = &v
			}
			s, err := a.Keep(c.Context(), args[0], d)
			if err != nil {
				return err
			}
			if output == "json" {
				return printJSON(c.OutOrStdout(), s)
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "sandbox %s kept until %s\n", s.Name, fmtTime(s.Expires))
			return err
		},
	}
	keep.Flags().StringVar(&ttl, "ttl", "", "how long to keep it, as SANDBOX KEEP TTL takes it: 7d, 36h, 90m, seconds (default: sandbox-ttl)")
	discard := &cobra.Command{
		Use: "discard NAME", Short: "Discard a sandbox: drop its forks", Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			*ran = true
			a, err := client()
			if err != nil {
				return err
			}
			if err := a.Discard(c.Context(), args[0]); err != nil {
				return err
			}
			if output == "json" {
				return printJSON(c.OutOrStdout(), adminapi.Discarded{Discarded: args[0]})
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "sandbox %s discarded\n", args[0])
			return err
		},
	}
	cmd.AddCommand(list, show, keep, discard)
	return cmd
}
