package operator

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/reply"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// TestPromoteWith: a promote's tables, overwrites, dry run and digest
// reach the reviewer — a dry run answers its plan, applies and records
// nothing; a digest applies only its plan — as AdminUser via "api";
// options that do not hold are refused before anything is read.
func TestPromoteWith(t *testing.T) {
	appT, appX := []rewrite.Table{{DB: "app", Name: "t"}}, []rewrite.Table{{DB: "app", Name: "x"}}
	other := "sha256:" + strings.Repeat("0", 64)
	const insert = "rows INSERT INTO `app`.`t` (`v`) VALUES (7), (7)"
	tests := []struct {
		name     string
		keyless  bool // the sandbox added 2 rows to app.t, a table compared whole
		o        review.PromoteOptions
		reviewed bool   // Matching is the digest a dry run of o gave
		kind     error  // nil: answered
		want     string // the error's text, or the answer's Info, starts so
		steps    []string
		audit    string // the outcome of the promote recorded ("": none)
		unread   bool   // refused before anything is read
	}{
		{"dry run", false, review.PromoteOptions{DryRun: true}, false, nil,
			"dry run: PROMOTE STRATEGY FAIL of sandbox ops would apply 0 statements", nil, "", false},
		{"dry run of an overwrite", true, review.PromoteOptions{Strategy: "ours", Overwrite: appT, DryRun: true}, false, nil,
			"dry run: PROMOTE STRATEGY OURS of sandbox ops would apply 1 statements", []string{insert}, "", false},
		{"dry run of tables", true, review.PromoteOptions{Strategy: "Theirs", Tables: appT, Overwrite: appT, DryRun: true}, false, nil,
			"dry run: PROMOTE STRATEGY THEIRS of sandbox ops would apply 1 statements", []string{insert}, "", false},
		{"dry run of a table compared whole", true, review.PromoteOptions{Strategy: "ours", DryRun: true}, false, ErrRefused,
			"PROMOTE refused: the rows of app.t cannot be told from production's changes", nil, "", false},
		{"a table it did not change", true, review.PromoteOptions{Strategy: "ours", Tables: appX, Overwrite: appT}, false, ErrRefused,
			`sandbox "ops" changed nothing of app.x`, nil, "refused", false},
		{"matching another plan", true, review.PromoteOptions{Strategy: "ours", Overwrite: appT, Matching: other}, false, ErrRefused,
			"PROMOTE refused: its plan is now sha256:", nil, "refused", false},
		{"matching the plan reviewed", true, review.PromoteOptions{Strategy: "ours", Overwrite: appT}, true, nil,
			"promoted sandbox ops: ", nil, "committed", false},
		{"dry run matching", false, review.PromoteOptions{DryRun: true, Matching: other}, false, ErrOptions,
			"bad PROMOTE options: DRY RUN and MATCHING exclude each other", nil, "", true},
		{"matching what is not a digest", false, review.PromoteOptions{Matching: "sha256:abc"}, false, ErrOptions,
			`bad PROMOTE options: MATCHING "sha256:abc" is not a plan's digest`, nil, "", true},
		{"matching another hash", false, review.PromoteOptions{Matching: "md5:" + strings.Repeat("0", 64)}, false, ErrOptions,
			`bad PROMOTE options: MATCHING "md5:`, nil, "", true},
		{"a strategy it does not know", false, review.PromoteOptions{Strategy: "mine", DryRun: true}, false, ErrStrategy,
			`unknown PROMOTE strategy: "MINE" (FAIL, OURS or THEIRS)`, nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, registry.Limits{})
			e.rev.SetPromoteDialer(e.up.Dialer())
			sb := e.open("ops", "alice")
			if tt.keyless {
				e.keyless(sb, 2)
				e.up.On("^INSERT INTO `app`\\.`t` ").Affected(2)
			}
			if tt.reviewed {
				tt.o.Matching = e.dryRunDigest(tt.o)
			}
			e.up.ClearLog()
			r, err := e.op.PromoteWith(e.ctx, "ops", tt.o)
			got := ""
			if r != nil {
				got = r.Info
			}
			if !errors.Is(err, tt.kind) || err != nil && !strings.HasPrefix(err.Error(), tt.want) || err == nil && !strings.HasPrefix(got, tt.want) {
				t.Fatalf("PromoteWith = %q, %v; want %v, %q", got, err, tt.kind, tt.want)
			}
			if tt.o.DryRun && err == nil {
				checkPlan(t, r, tt.steps)
			}
			if log := e.up.Log(); tt.unread && len(log) != 0 {
				t.Errorf("read %d statements before refusing", len(log))
			}
			if a := e.promoted(); a != tt.audit {
				t.Errorf("promotes recorded %q, want %q", a, tt.audit)
			}
		})
	}
}

// checkPlan checks a dry run's answer: its columns, its steps (steps, as
// "step statement") and a digest last.
func checkPlan(t *testing.T, r *reply.Reply, steps []string) {
	t.Helper()
	var got []string
	for _, row := range r.Rows {
		got = append(got, sideconn.Str(row[0])+" "+sideconn.Str(row[1]))
	}
	if !slices.Equal(r.Columns, review.DryRunColumns) || len(got) != len(steps)+1 || !slices.Equal(got[:len(steps)], steps) ||
		!strings.HasPrefix(got[len(steps)], "digest sha256:") {
		t.Errorf("dry run %v %q, want %q and a digest", r.Columns, got, steps)
	}
}

// dryRunDigest is the digest of a dry run of o.
func (e *env) dryRunDigest(o review.PromoteOptions) string {
	e.t.Helper()
	o.DryRun = true
	r, err := e.op.PromoteWith(e.ctx, "ops", o)
	if err != nil || len(r.Rows) == 0 {
		e.t.Fatalf("dry run: %v, %v", r, err)
	}
	return sideconn.Str(r.Rows[len(r.Rows)-1][1])
}

// promoted is the outcome of the promote recorded in the registry since
// the log was cleared, as AdminUser via "api" ("": none recorded).
func (e *env) promoted() string {
	e.t.Helper()
	inserts := e.up.Matching("^INSERT INTO `_sqlfork_meta`\\.promotes ")
	updates := e.up.Matching("^UPDATE `_sqlfork_meta`\\.promotes SET ")
	if len(inserts) == 0 && len(updates) == 0 {
		return ""
	}
	outcome := regexp.MustCompile(`outcome = '(\w+)'`).FindStringSubmatch(strings.Join(updates, " "))
	if len(inserts) != 1 || len(updates) != 1 || outcome == nil || !strings.Contains(inserts[0], "'alice', '"+AdminUser+"', 'api', ") {
		e.t.Fatalf("promote recorded by %q, %q", inserts, updates)
	}
	return outcome[1]
}
