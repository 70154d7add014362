package main

import (
	"testing"

	"github.com/sqlfork/sqlfork-proxy/adminapi"
)

// TestTableState: the CLI's state of a table: as the API gives it, with a
// lazy fork's progress, its failure, its end waiting for a transaction, or
// its keys being built.
func TestTableState(t *testing.T) {
	for _, c := range []struct {
		t    adminapi.Table
		want string
	}{
		{adminapi.Table{State: "forked"}, "forked"},
		{adminapi.Table{State: "filling", Fill: &adminapi.Fill{Copied: 41, Total: 100}}, "filling 41%"},
		{adminapi.Table{State: "filling", Fill: &adminapi.Fill{Copied: 120, Total: 100}}, "filling 99%"},
		{adminapi.Table{State: "filling", Fill: &adminapi.Fill{Error: "lost"}}, "filling (failed)"},
		{adminapi.Table{State: "filling", Fill: &adminapi.Fill{Copied: 100, Total: 100, Waiting: true}},
			"filling 99% (waiting for a transaction to end)"},
		{adminapi.Table{State: "filling", Fill: &adminapi.Fill{Copied: 100, Total: 100, BuildingKeys: true}},
			"filling 99% (building keys)"},
		{adminapi.Table{State: "filling", Fill: &adminapi.Fill{}}, "filling"},
	} {
		if got := tableState(c.t); got != c.want {
			t.Errorf("%+v: %q, want %q", c.t, got, c.want)
		}
	}
}
