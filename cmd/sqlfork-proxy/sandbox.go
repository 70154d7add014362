package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/duration"
	"github.com/sqlfork/sqlfork-proxy/internal/human"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

func fmtTime(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// apiClient returns the admin API client of a `sandbox` subcommand, or a
// usage error in its shared flags.
type apiClient func() (*adminapi.Client, error)

// printJSON writes v as the admin API writes its answers (indented), with
// the characters a terminal would act on or hide written as \u escapes:
// encoding/json escapes C0 controls but leaves C1 controls (U+009B starts
// an escape sequence on some terminals) and bidirectional overrides raw,
// through which a name a sandbox made could make its output read otherwise.
func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // <, > and & are harmless on a terminal, and a DSN reads better with them
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := io.WriteString(w, quote.JSONSafe(b.String()))
	return err
}

// cell is a value of a table the CLI prints: on one line, with what a
// terminal would act on or not show escaped (quote.Display).
func cell(s string) string { return quote.Display(flatten(s)) }

// withClient is the RunE of a `sandbox` subcommand: it marks the command
// run, and runs f with the admin API client of the shared flags.
func withClient(ran *bool, client apiClient, f func(c *cobra.Command, args []string, a *adminapi.Client) error) func(*cobra.Command, []string) error {
	return func(c *cobra.Command, args []string) error {
		*ran = true
		a, err := client()
		if err != nil {
			return err
		}
		return f(c, args, a)
	}
}

// newSandboxCmd is `sqlfork-proxy sandbox
// create|connect|list|show|keep|discard|diff|export|promote|reset`.
func newSandboxCmd(e env, ran *bool) *cobra.Command {
	var base, token, output string
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Create, connect to, list, show, keep, discard, diff, export, promote and reset the sandboxes of a running proxy (through its admin API)",
		Long: `Create, connect to, list, show, keep, discard, diff, export, promote and reset the sandboxes of a
running proxy through the admin API on its metrics listener (--admin-url, env SQLFORK_ADMIN_URL; default
http://127.0.0.1:9104). The bearer token is --admin-token or SQLFORK_ADMIN_TOKEN; promote always needs it.`,
	}
	cmd.PersistentFlags().StringVar(&base, "admin-url", "", "base URL of the proxy's admin API (env SQLFORK_ADMIN_URL; default http://"+defaultMetrics+")")
	cmd.PersistentFlags().StringVar(&token, "admin-token", "", "bearer token of the admin API (env SQLFORK_ADMIN_TOKEN)")
	cmd.PersistentFlags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	cmd.PersistentFlags().Var(&colorChoice{mode: colorAuto, lookupEnv: e.lookupEnv}, colorFlag,
		"colour the tables: auto (on a terminal, unless NO_COLOR is set), always or never")
	client := adminClient(e, &base, &token, &output)
	cmd.AddCommand(newListCmd(ran, client, &output), newShowCmd(ran, client, &output), newKeepCmd(ran, client, &output),
		newDiscardCmd(ran, client, &output), newDiffCmd(ran, client, &output), newExportCmd(ran, client, &output),
		newPromoteCmd(ran, client, &output))
	cmd.AddCommand(newResetCmd(ran, client, &output))
	cmd.AddCommand(newCreateCmd(ran, client, &output), newConnectCmd(ran, client, &output))
	return cmd
}

// adminClient is the apiClient of the `sandbox` subcommands: their shared
// flags, once parsed, with the environment filling in what they leave out.
func adminClient(e env, base, token, output *string) apiClient {
	return func() (*adminapi.Client, error) {
		if *output != "table" && *output != "json" {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("--output: %q is not table or json", *output)}
		}
		if *base == "" {
			*base, _ = e.lookupEnv("SQLFORK_ADMIN_URL")
		}
		if *base == "" {
			*base = "http://" + defaultMetrics
		}
		if _, err := url.Parse(*base); err != nil {
			return nil, &exitError{code: exitUsage, err: fmt.Errorf("--admin-url: %w", err)}
		}
		if *token == "" {
			*token, _ = e.lookupEnv("SQLFORK_ADMIN_TOKEN")
		}
		return &adminapi.Client{BaseURL: *base, Token: *token, HTTP: &http.Client{Timeout: 2 * time.Minute}}, nil
	}
}

// newListCmd is `sqlfork-proxy sandbox list`.
func newListCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	return &cobra.Command{
		Use: "list", Short: "List sandboxes", Args: cobra.NoArgs,
		RunE: withClient(ran, client, func(c *cobra.Command, _ []string, a *adminapi.Client) error {
			out, err := a.List(c.Context())
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(c.OutOrStdout(), out)
			}
			p, tw := paintFor(c), newTable(c.OutOrStdout())
			fmt.Fprintln(tw, "NAME\tID\tSTATE\tOWNER\tCREATED\tEXPIRES\tCONNECTIONS\tTABLES\tSIZE\tCHANGES")
			for _, s := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", cell(s.Name), cell(s.ID), p.paint(stateStyle(s.State), cell(s.State)), cell(s.Owner),
					fmtTime(&s.Created), fmtTime(s.Expires), s.Connections, s.TableCount, human.Bytes(s.Bytes), p.paint(stateStyle(s.Changes), cell(s.Changes)))
			}
			return tw.Flush()
		}),
	}
}

// newShowCmd is `sqlfork-proxy sandbox show NAME`.
func newShowCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	return &cobra.Command{
		Use: "show NAME", Short: "Show a sandbox and its tables", Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			s, err := a.Show(c.Context(), args[0])
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(c.OutOrStdout(), s)
			}
			p, tw := paintFor(c), newTable(c.OutOrStdout())
			fmt.Fprintf(tw, "name:\t%s\nid:\t%s\nstate:\t%s\nowner:\t%s\ncreated:\t%s\nexpires:\t%s\nconnections:\t%d\nchanges:\t%s\npromoted:\t%s\n",
				cell(s.Name), cell(s.ID), p.paint(stateStyle(s.State), cell(s.State)), cell(s.Owner), fmtTime(&s.Created), fmtTime(s.Expires), s.Connections,
				p.paint(stateStyle(s.Changes), cell(s.Changes)), fmtTime(s.Promoted))
			fmt.Fprintln(tw, "\nTABLE\tSTATE\tROWS\tSIZE")
			for _, t := range s.Tables {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", cell(t.Table), p.paint(stateStyle(t.State), cell(tableState(t))), t.Rows, human.Bytes(t.Bytes))
			}
			return tw.Flush()
		}),
	}
}

// newKeepCmd is `sqlfork-proxy sandbox keep NAME [--ttl D]`.
func newKeepCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	var ttl string
	keep := &cobra.Command{
		Use: "keep NAME", Short: "Keep a sandbox past its last connection (and restarts)", Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
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
			if *output == "json" {
				return printJSON(c.OutOrStdout(), s)
			}
			_, err = fmt.Fprintf(c.OutOrStdout(), "sandbox %s kept until %s\n", cell(s.Name), fmtTime(s.Expires))
			return err
		}),
	}
	keep.Flags().StringVar(&ttl, "ttl", "", "how long to keep it, as SANDBOX KEEP TTL takes it: 7d, 36h, 90m, seconds (default: sandbox-ttl)")
	return keep
}

// newDiscardCmd is `sqlfork-proxy sandbox discard NAME`.
func newDiscardCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	return &cobra.Command{
		Use: "discard NAME", Short: "Discard a sandbox: drop its forks", Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			if err := a.Discard(c.Context(), args[0]); err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(c.OutOrStdout(), adminapi.Discarded{Discarded: args[0]})
			}
			_, err := fmt.Fprintf(c.OutOrStdout(), "sandbox %s discarded\n", cell(args[0]))
			return err
		}),
	}
}

// newDiffCmd is `sqlfork-proxy sandbox diff NAME [--summary] [--table db.t]`.
func newDiffCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	var o adminapi.DiffOptions
	cmd := &cobra.Command{
		Use: "diff NAME", Short: "Show a sandbox's changes against production, row by row or (--summary) table by table", Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			if _, _, ok := o.TableName(); o.Table != "" && !ok {
				return &exitError{code: exitUsage, err: fmt.Errorf("--table: %q is not db.table", o.Table)}
			}
			d, err := a.Diff(c.Context(), args[0], o)
			if err != nil {
				return err
			}
			return writeDiff(c.OutOrStdout(), d, o.Summary, *output == "json", paintFor(c))
		}),
	}
	cmd.Flags().BoolVar(&o.Summary, "summary", false, "one line per changed table, with counts, instead of one per changed row")
	cmd.Flags().StringVar(&o.Table, "table", "", "only this table, as db.table")
	return cmd
}

// writeDiff writes d: as JSON (the API's answer), or as aligned columns
// painted by p.
func writeDiff(w io.Writer, d adminapi.Diff, summary, asJSON bool, p painter) error {
	switch {
	case asJSON && summary:
		return printJSON(w, orEmpty(d.Summary))
	case asJSON:
		return printJSON(w, orEmpty(d.Changes))
	}
	tw := newTable(w)
	if summary {
		fmt.Fprintln(tw, "TABLE\tCHANGE\tINSERTED\tUPDATED\tDELETED\tCONFLICTS\tKEY\tMETHOD\tNOTE")
		for _, t := range d.Summary {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", cell(t.Table), p.paint(changeStyle(t.Change), cell(t.Change)),
				count(p, added, t.Inserted), t.Updated, count(p, removed, t.Deleted), count(p, conflict, t.Conflicts),
				orDash(cell(t.KeyKind)), orDash(cell(t.Method)), orDash(cell(t.Note)))
		}
		return tw.Flush()
	}
	fmt.Fprintln(tw, "TABLE\tOP\tKEY\tCHANGES\tPRODUCTION")
	for _, ch := range d.Changes {
		prod := jsonCell(ch.Production)
		if ch.Op == "conflict" {
			prod = p.paint(conflict, prod)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", cell(ch.Table), p.paint(opStyle(ch.Op), cell(ch.Op)), jsonCell(ch.Key), changeText(ch, p), prod)
	}
	return tw.Flush()
}

// jsonCell is a JSON value of a diff on one line: compact, a string as its
// text (a DDL statement), "-" for null.
func jsonCell(v json.RawMessage) string {
	var s string
	switch {
	case len(v) == 0 || string(v) == "null":
		return "-"
	case json.Unmarshal(v, &s) == nil:
		return orDash(cell(s))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return cell(string(v))
	}
	return quote.JSONSafe(b.String())
}

// flatten is s with its runs of white space (line ends, tabs) as one space.
func flatten(s string) string { return strings.Join(strings.Fields(s), " ") }

// orDash is s, or "-" for "".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// orEmpty is s, or an empty slice for nil: JSON [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// newExportCmd is `sqlfork-proxy sandbox export NAME`: the SQL script on
// stdout.
func newExportCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	return &cobra.Command{
		Use: "export NAME", Short: "Write the SQL that turns production into the sandbox's state (to review, or run with the mysql client)",
		Args: cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			if *output == "json" {
				return &exitError{code: exitUsage, err: errors.New("--output json: export writes SQL text")}
			}
			text, err := a.Export(c.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = io.WriteString(c.OutOrStdout(), text)
			return err
		}),
	}
}

// tableState is a table's state, with how far a lazy fork's copy is
// while it fills ("filling 41%"), or that its keys are being built or its
// end waits for a transaction.
func tableState(t adminapi.Table) string {
	switch f := t.Fill; {
	case f == nil:
		return t.State
	case f.Error != "":
		return t.State + " (failed)"
	case f.Waiting:
		return t.State + " 99% (waiting for a transaction to end)"
	case f.BuildingKeys:
		return t.State + " 99% (building keys)"
	case f.Total > 0:
		return fmt.Sprintf("%s %d%%", t.State, min(99, f.Copied*100/f.Total))
	}
	return t.State
}
