package session

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/sandbox/registry"
)

// TestTableState: SANDBOX STATUS's table_state: a lazy fork's progress,
// its failure, its end waiting for a transaction, or its keys being built.
func TestTableState(t *testing.T) {
	for _, c := range []struct {
		t    registry.TableInfo
		want string
	}{
		{registry.TableInfo{State: "forked"}, "forked"},
		{registry.TableInfo{State: "filling", Fill: &registry.FillInfo{Copied: 41, Total: 100}}, "filling 41%"},
		{registry.TableInfo{State: "filling", Fill: &registry.FillInfo{Copied: 5, Total: 4}}, "filling 99%"},
		{registry.TableInfo{State: "filling", Fill: &registry.FillInfo{Error: "lost"}}, "filling failed: lost"},
		{registry.TableInfo{State: "filling", Fill: &registry.FillInfo{Copied: 4, Total: 4, Waiting: true}},
			"filling 99%, waiting for a transaction to end"},
		{registry.TableInfo{State: "filling", Fill: &registry.FillInfo{Copied: 4, Total: 4, BuildingKeys: true}},
			"filling 99%, building keys"},
	} {
		if got := tableState(c.t); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}
