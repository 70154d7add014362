package registry

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/quote"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// Info describes a sandbox for operators (the admin API and CLI).
type Info struct {
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	State   string    `json:"state"` // active, kept, grace
	Owner   string    `json:"owner"`
	Created time.Time `json:"created"`
	// Expires is when a kept sandbox's TTL ends, or an unkept one's grace.
	Expires     *time.Time  `json:"expires,omitempty"`
	Connections int         `json:"connections"` // attached through this process
	Tables      []TableInfo `json:"tables,omitempty"`
	TableCount  int         `json:"table_count"`
	Bytes       int64       `json:"bytes"`
	// Changes says what it holds that production does not: none,
	// unpromoted (it wrote since it was made or last promoted whole) or
	// promoted (everything it changed is production's).
	Changes string `json:"changes"`
	// Promoted is when a promote of it last committed.
	Promoted *time.Time `json:"promoted,omitempty"`
}

// TableInfo is one table of a sandbox.
type TableInfo struct {
	Table string `json:"table"` // logical db.table
	State string `json:"state"` // fork, filling, schema, created, dropped
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
	// Fill is how far the copy of a lazy fork still filling is (nil for
	// any other table, and for one another process fills).
	Fill *FillInfo `json:"fill,omitempty"`
}

// FillInfo is how far a lazy fork's copy is: rows copied of production's
// estimate, since when, and why it failed ("" while it runs).
type FillInfo struct {
	Copied  int64     `json:"copied"`
	Total   int64     `json:"total"`
	Started time.Time `json:"started"`
	Error   string    `json:"error,omitempty"`
	// CopiedUp counts the statements' copy-ups by where they read the
	// rows (adminapi.Fill).
	CopiedUp map[string]int64 `json:"copied_up,omitempty"`
	// Waiting: the copy is complete, and its end waits for a transaction
	// that used the fork to end (holds.go).
	Waiting bool `json:"waiting,omitempty"`
	// BuildingKeys: the copy is complete, and the keys it left out are
	// being built (forker.Filler.Seal).
	BuildingKeys bool `json:"building_keys,omitempty"`
}

// StateFilling is a lazy fork's state while its copy runs.
const StateFilling = "filling"

// InfoNow is sb.Info(true) as of now: its tables' rows and bytes as the
// server counts them now (information_schema.TABLES: InnoDB's count is
// kept as rows come and go; an estimate for some engines), not at their
// fork, and the change marks other processes recorded.
func (m *Registry) InfoNow(ctx context.Context, sb *Sandbox) (Info, error) {
	if err := m.ReadMarks(ctx, sb); err != nil {
		return Info{}, err
	}
	phys := map[string]string{} // physical db.table → logical
	var where []string
	for e := range sb.Each() {
		if e.Kind != sandbox.KindAbsent && e.Kind != sandbox.KindView && e.Kind != sandbox.KindDropped {
			phys[e.Phys.DB+"."+e.Phys.Name] = e.Logical.DB + "." + e.Logical.Name
			where = append(where, "(TABLE_SCHEMA = "+quote.String(e.Phys.DB)+" AND TABLE_NAME = "+quote.String(e.Phys.Name)+")")
		}
	}
	in := sb.Info(true)
	if len(where) == 0 {
		return in, nil
	}
	sizes := map[string][2]int64{} // logical → rows, bytes
	err := m.WithConn(ctx, func(c sideconn.Conn) error {
		rows, err := c.Query(ctx, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_ROWS, DATA_LENGTH + INDEX_LENGTH FROM information_schema.TABLES WHERE "+
			strings.Join(where, " OR "))
		for _, r := range rows {
			sizes[phys[sideconn.Str(r[0])+"."+sideconn.Str(r[1])]] = [2]int64{sideconn.Num(r[2]), sideconn.Num(r[3])}
		}
		return err
	})
	if err != nil {
		return Info{}, fmt.Errorf("read the sizes of sandbox %s's tables: %w", sb.Name, err)
	}
	in.Bytes = 0
	for i, t := range in.Tables {
		if n, ok := sizes[t.Table]; ok && t.State != StateFilling {
			in.Tables[i].Rows, in.Tables[i].Bytes = n[0], n[1]
		}
		in.Bytes += in.Tables[i].Bytes
	}
	return in, nil
}
