package operator

import (
	"errors"
	"fmt"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/internal/testkit"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestAdminRefusal: the refusals of DIFF, EXPORT and PROMOTE are marked for
// the admin API, their text without the prefix of a client's error; other
// errors are left as they are.
func TestAdminRefusal(t *testing.T) {
	conflicts := rewrite.Refuse(wire.ErUnknown, "PROMOTE refused: 2 rows changed in production since the fork")
	noAccount := rewrite.Refuse(wire.ErOptionPreventsStatement, "SANDBOX PROMOTE needs a promote account")
	notOwner := rewrite.Refuse(wire.ErSpecificAccessDenied, "only the owner of sandbox %q (%s) or a sandbox admin may promote it", "ops", "alice")
	other := errors.New("connect with the promote account: refused")
	tests := []struct {
		name string
		err  error
		want string
		kind error // nil: not marked
	}{
		{"conflicts", conflicts, "PROMOTE refused: 2 rows changed in production since the fork", ErrRefused},
		{"no promote account", noAccount, "SANDBOX PROMOTE needs a promote account", ErrForbidden},
		{"not the owner", notOwner, `only the owner of sandbox "ops" (alice) or a sandbox admin may promote it`, ErrForbidden},
		{"a wrapped refusal keeps its context", fmt.Errorf("promote: %w", conflicts),
			"promote: 1105 (HY000): sqlfork-proxy: PROMOTE refused: 2 rows changed in production since the fork", ErrRefused},
		{"not a refusal", other, other.Error(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := adminRefusal(tt.err)
			testkit.WantMarked(t, got, tt.err, tt.want, []error{ErrRefused, ErrForbidden}, tt.kind)
			var r *rewrite.Refusal
			if errors.As(tt.err, &r) != errors.As(got, &r) {
				t.Error("the refusal is lost")
			}
		})
	}
	if adminRefusal(nil) != nil {
		t.Error("adminRefusal(nil) != nil")
	}
}
