package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/quote"
)

// promoteLong is the help of `sqlfork-proxy sandbox promote`.
const promoteLong = `Apply a sandbox's changes to production, as SANDBOX PROMOTE does, through the
admin API (it needs --admin-token and the proxy's promote account).

Review first: --dry-run prints the plan — the rows that conflict with
production's changes since the fork, the statements the strategy would apply,
and the plan's digest — and applies nothing. It ends with the command that
applies exactly that plan (--matching the digest): run as printed, it is
refused if production or the sandbox changed since.

  sqlfork-proxy sandbox promote NAME --strategy ours --dry-run
  sqlfork-proxy sandbox promote NAME --strategy ours --matching sha256:…

--for promotes only the tables named (db.table, repeatable); --overwrite names
a table compared whole (no fork-time image: every strategy refuses it) whose
rows production takes from the sandbox whole, losing what production changed
since the fork.`

// promoteFlags are the flags of `sandbox promote`.
type promoteFlags struct {
	strategy, matching string
	tables, overwrite  []string
	dryRun             bool
}

// newPromoteCmd is `sqlfork-proxy sandbox promote NAME [--strategy s]
// [--for db.t]... [--overwrite db.t]... [--dry-run | --matching sha256:…]`.
func newPromoteCmd(ran *bool, client apiClient, output *string) *cobra.Command {
	var f promoteFlags
	cmd := &cobra.Command{
		Use:   "promote NAME",
		Short: "Apply a sandbox's changes to production, or (--dry-run) show the plan (needs the proxy's promote account and --admin-token)",
		Long:  promoteLong,
		Args:  cobra.ExactArgs(1),
		RunE: withClient(ran, client, func(c *cobra.Command, args []string, a *adminapi.Client) error {
			o, err := f.options()
			if err != nil {
				return &exitError{code: exitUsage, err: err}
			}
			p, err := a.Promote(c.Context(), args[0], o)
			if err != nil {
				return err
			}
			if *output == "json" {
				return printJSON(c.OutOrStdout(), p)
			}
			return writePromoted(c.OutOrStdout(), args[0], o, p)
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&f.strategy, "strategy", adminapi.StrategyFail,
		"rows production changed since the fork: fail (refuse the promote), ours (write the sandbox's) or theirs (keep production's)")
	fl.StringArrayVar(&f.tables, "for", nil, "promote only this table, a `db.table` (repeat for more)")
	fl.StringArrayVar(&f.overwrite, "overwrite", nil,
		"replace production's rows of this table compared whole, a `db.table`, with the sandbox's (repeat for more)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan (conflicts, statements, digest) and apply nothing")
	fl.StringVar(&f.matching, "matching", "", "apply only the plan of this `digest`, as --dry-run printed it (sha256:…)")
	return cmd
}

// options are the flags as the API's options, or what is wrong with them.
func (f promoteFlags) options() (adminapi.PromoteOptions, error) {
	s := strings.ToLower(f.strategy)
	if s != adminapi.StrategyFail && s != adminapi.StrategyOurs && s != adminapi.StrategyTheirs {
		return adminapi.PromoteOptions{}, fmt.Errorf("--strategy: %q is not fail, ours or theirs", f.strategy)
	}
	for _, fl := range []struct {
		name   string
		tables []string
	}{{"--for", f.tables}, {"--overwrite", f.overwrite}} {
		for _, t := range fl.tables {
			if _, _, ok := adminapi.SplitTable(t); !ok {
				return adminapi.PromoteOptions{}, fmt.Errorf("%s: %q is not db.table", fl.name, t)
			}
		}
	}
	switch {
	case f.dryRun && f.matching != "":
		return adminapi.PromoteOptions{}, fmt.Errorf("--dry-run and --matching exclude each other: review with --dry-run, then apply with --matching")
	case f.matching != "" && !adminapi.IsDigest(f.matching):
		return adminapi.PromoteOptions{}, fmt.Errorf("--matching: %q is not a plan's digest (sha256: and 64 hexadecimal digits, as --dry-run prints it)",
			f.matching)
	}
	return adminapi.PromoteOptions{Strategy: s, Tables: f.tables, Overwrite: f.overwrite, DryRun: f.dryRun,
		Matching: strings.ToLower(f.matching)}, nil
}

// writePromoted writes what a promote of the sandbox called name as o
// asked did, as aligned columns; a dry run's plan follows (conflicts
// first), then its digest and the command that applies it.
func writePromoted(w io.Writer, name string, o adminapi.PromoteOptions, p adminapi.Promoted) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if !p.DryRun {
		fmt.Fprintf(tw, "sandbox:\t%s\nstrategy:\t%s\noutcome:\t%s\nrows:\t%d\ninfo:\t%s\n", cell(p.Sandbox), cell(p.Strategy), cell(p.Outcome),
			p.Rows, cell(p.Info))
		return tw.Flush()
	}
	fmt.Fprintf(tw, "sandbox:\t%s\nstrategy:\t%s\noutcome:\t%s\ninfo:\t%s\n", cell(p.Sandbox), cell(p.Strategy), cell(p.Outcome), cell(p.Info))
	fmt.Fprintln(tw, "\nSTEP\tSTATEMENT")
	plan := slices.Clone(p.Plan)
	slices.SortStableFunc(plan, func(a, b adminapi.PlanStep) int { return conflictRank(a) - conflictRank(b) })
	conflicts := 0
	for _, s := range plan {
		fmt.Fprintf(tw, "%s\t%s\n", cell(s.Step), cell(s.Statement))
		conflicts += 1 - conflictRank(s)
	}
	fmt.Fprintf(tw, "\ndigest:\t%s\n", cell(p.Digest))
	if o.Strategy == adminapi.StrategyFail && conflicts > 0 {
		fmt.Fprintf(tw, "apply:\tnone: strategy fail refuses this plan (%d conflicts); --strategy ours or theirs resolves them\n", conflicts)
	} else {
		fmt.Fprintf(tw, "apply:\t%s\n", applyCommand(name, o, p.Digest))
	}
	return tw.Flush()
}

// conflictRank orders a plan's steps: conflicts (0) before the rest (1).
func conflictRank(s adminapi.PlanStep) int {
	if s.Step == "conflict" {
		return 0
	}
	return 1
}

// applyCommand is the command line that promotes the sandbox called name
// as o asks, matching digest, each word as shellArg writes it.
func applyCommand(name string, o adminapi.PromoteOptions, digest string) string {
	words := []string{progName, "sandbox", "promote", name, "--strategy", o.Strategy}
	for _, t := range o.Tables {
		words = append(words, "--for", t)
	}
	for _, t := range o.Overwrite {
		words = append(words, "--overwrite", t)
	}
	words = append(words, "--matching", digest)
	for i, w := range words {
		words[i] = shellArg(w)
	}
	return strings.Join(words, " ")
}

// shellArg is s as one word of a shell's command line that a terminal
// shows as it is: s escaped as the CLI's cells are (quote.Display), in
// ANSI-C quotes ($'…', which bash and zsh read back as s) when that
// changed it, else as shellWord writes it.
func shellArg(s string) string {
	if d := quote.Display(s); d != s {
		return "$'" + strings.ReplaceAll(d, "'", `\'`) + "'"
	}
	return shellWord(s)
}

// shellWord is s as one word of a POSIX shell's command line: as it is
// when it holds only characters no shell reads specially, else in single
// quotes (a quote in it as '\”).
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
