package admin

import (
	"errors"
	"reflect"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/review"
	"github.com/sqlfork/sqlfork-proxy/session"
)

// TestReviewOptions: the API's options as the reviewer takes them, each
// table split at its first dot; one without a database or a name is 400.
func TestReviewOptions(t *testing.T) {
	digest := "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	tests := []struct {
		name    string
		o       adminapi.PromoteOptions
		want    review.PromoteOptions
		wantErr string
	}{
		{"strategy alone", adminapi.PromoteOptions{Strategy: "ours"}, review.PromoteOptions{Strategy: "ours"}, ""},
		{"every option", adminapi.PromoteOptions{Strategy: "theirs", Tables: []string{"app.users", "app.my.t"}, Overwrite: []string{"app.my.t"},
			Matching: digest},
			review.PromoteOptions{Strategy: "theirs", Tables: []rewrite.Table{{DB: "app", Name: "users"}, {DB: "app", Name: "my.t"}},
				Overwrite: []rewrite.Table{{DB: "app", Name: "my.t"}}, Matching: digest}, ""},
		{"dry run", adminapi.PromoteOptions{DryRun: true}, review.PromoteOptions{DryRun: true}, ""},
		{"a table without its database", adminapi.PromoteOptions{Tables: []string{"app.t", "users"}}, review.PromoteOptions{},
			`bad request: table: "users" is not db.table`},
		{"an overwrite without a name", adminapi.PromoteOptions{Overwrite: []string{"app."}}, review.PromoteOptions{},
			`bad request: overwrite: "app." is not db.table`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := reviewOptions(tt.o)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, adminapi.ErrBadRequest) {
					t.Errorf("reviewOptions = %+v, %v; want %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("reviewOptions = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestAPIPromoted: PROMOTE's reply as the admin API answers it — a dry
// run's rows as the plan, in their order, the digest's as the Digest.
func TestAPIPromoted(t *testing.T) {
	sp := func(s string) *string { return &s }
	const digest = "sha256:abababababababababababababababababababababababababababababababab"
	dryRun := &session.Reply{Columns: review.DryRunColumns, Info: "dry run: PROMOTE STRATEGY OURS of sandbox box would apply 2 statements", Rows: [][]*string{
		{sp("conflict"), sp("app.t 1: a")},
		{sp("ddl"), sp("ALTER TABLE `app`.`t` ADD `c` int")},
		{sp("rows"), sp("UPDATE `app`.`t` SET `a` = 2 WHERE `id` = 1")},
		{sp("digest"), sp(digest)},
	}}
	tests := []struct {
		name string
		o    adminapi.PromoteOptions
		r    *session.Reply
		want adminapi.Promoted
	}{
		{"committed", adminapi.PromoteOptions{Strategy: "OURS"}, &session.Reply{Affected: 3, Info: "promoted sandbox box: 3 rows"},
			adminapi.Promoted{Sandbox: "box", Strategy: "ours", Outcome: "committed", Info: "promoted sandbox box: 3 rows", Rows: 3}},
		{"committed by default", adminapi.PromoteOptions{Matching: digest}, &session.Reply{Info: "promoted sandbox box: 0 rows"},
			adminapi.Promoted{Sandbox: "box", Strategy: "fail", Outcome: "committed", Info: "promoted sandbox box: 0 rows"}},
		{"dry run", adminapi.PromoteOptions{Strategy: "ours", DryRun: true}, dryRun,
			adminapi.Promoted{Sandbox: "box", Strategy: "ours", Outcome: "dry run", Info: dryRun.Info, DryRun: true, Digest: digest,
				Plan: []adminapi.PlanStep{{Step: "conflict", Statement: "app.t 1: a"}, {Step: "ddl", Statement: "ALTER TABLE `app`.`t` ADD `c` int"},
					{Step: "rows", Statement: "UPDATE `app`.`t` SET `a` = 2 WHERE `id` = 1"}}}},
		{"dry run of nothing", adminapi.PromoteOptions{DryRun: true}, &session.Reply{Columns: review.DryRunColumns, Info: "dry run",
			Rows: [][]*string{{sp("digest"), sp(digest)}}},
			adminapi.Promoted{Sandbox: "box", Strategy: "fail", Outcome: "dry run", Info: "dry run", DryRun: true, Digest: digest}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := apiPromoted("box", tt.o, tt.r); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("apiPromoted = %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
