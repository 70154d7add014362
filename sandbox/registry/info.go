package registry

import "time"

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
}

// TableInfo is one table of a sandbox.
type TableInfo struct {
	Table string `json:"table"` // logical db.table
	State string `json:"state"` // fork, schema, created, dropped
	Rows  int64  `json:"rows"`
	Bytes int64  `json:"bytes"`
}
