package adminapi

import (
	"fmt"
	"net/url"
	"strings"
)

// PromoteOptions are what a promote asks besides its sandbox, as SANDBOX
// PROMOTE's clauses ask it: the query of POST …/promote.
type PromoteOptions struct {
	// Strategy is StrategyFail (""), StrategyOurs or StrategyTheirs
	// (?strategy=, in any case).
	Strategy string
	// Tables, as db.table, are the tables to promote (none: every table
	// the sandbox changed; ?table=, repeated); Overwrite those compared
	// whole whose rows production takes from the sandbox whole
	// (?overwrite=, repeated).
	Tables, Overwrite []string
	// DryRun asks for the plan — conflicts, statements, digest — applied
	// nowhere (?dry_run=1); Matching applies only the plan of that digest,
	// as a dry run gave it (?matching=sha256:…). They exclude each other.
	DryRun   bool
	Matching string
}

// The query parameters of a promote.
const (
	paramStrategy  = "strategy"
	paramTable     = "table"
	paramOverwrite = "overwrite"
	paramDryRun    = "dry_run"
	paramMatching  = "matching"
)

// Query is o as the query of a promote request; url.Values encodes it in
// a stable order (by parameter, tables in o's order). An empty Strategy is
// left out (the API's default, fail).
func (o PromoteOptions) Query() url.Values {
	q := url.Values{}
	if o.Strategy != "" {
		q.Set(paramStrategy, o.Strategy)
	}
	for _, t := range o.Tables {
		q.Add(paramTable, t)
	}
	for _, t := range o.Overwrite {
		q.Add(paramOverwrite, t)
	}
	if o.DryRun {
		q.Set(paramDryRun, "1")
	}
	if o.Matching != "" {
		q.Set(paramMatching, o.Matching)
	}
	return q
}

// IsDigest reports whether s is a plan's digest as a dry run gives it:
// "sha256:" and 64 hexadecimal digits, in any case.
func IsDigest(s string) bool {
	hex, ok := strings.CutPrefix(strings.ToLower(s), "sha256:")
	if !ok || len(hex) != 64 {
		return false
	}
	return strings.Trim(hex, "0123456789abcdef") == ""
}

// ParsePromote reads the options of a promote request (see PromoteOptions),
// as the API reads its query and the console its form:
// the strategy in lower case ("" is fail), a digest in lower case. What
// does not parse is an ErrBadRequest naming its parameter.
func ParsePromote(q url.Values) (PromoteOptions, error) {
	var o PromoteOptions
	var err error
	if o.Strategy, err = parseStrategy(q.Get(paramStrategy)); err != nil {
		return PromoteOptions{}, err
	}
	if o.Tables, err = tablesParam(q, paramTable); err != nil {
		return PromoteOptions{}, err
	}
	if o.Overwrite, err = tablesParam(q, paramOverwrite); err != nil {
		return PromoteOptions{}, err
	}
	if o.DryRun, err = boolParam(q, paramDryRun); err != nil {
		return PromoteOptions{}, err
	}
	if o.Matching = strings.ToLower(q.Get(paramMatching)); o.Matching != "" && !IsDigest(o.Matching) {
		return PromoteOptions{}, fmt.Errorf("%w: %s: %q is not a plan's digest (sha256: and 64 hexadecimal digits, as a dry run gives it)",
			ErrBadRequest, paramMatching, q.Get(paramMatching))
	}
	if o.DryRun && o.Matching != "" {
		return PromoteOptions{}, fmt.Errorf("%w: %s and %s exclude each other: a dry run applies nothing, matching applies the plan a dry run gave",
			ErrBadRequest, paramDryRun, paramMatching)
	}
	return o, nil
}

// tablesParam reads the tables of the repeated parameter param, each
// db.table.
func tablesParam(q url.Values, param string) ([]string, error) {
	for _, t := range q[param] {
		if _, _, ok := SplitTable(t); !ok {
			return nil, fmt.Errorf("%w: %s: %q is not db.table", ErrBadRequest, param, t)
		}
	}
	return q[param], nil
}
