package session

import (
	"context"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// FLUSH STATUS in a sandbox resets the session's status counters as the
// session sees them, and nothing of the server's: the proxy keeps the
// counters' values at the FLUSH (statusBase, read with SHOW SESSION
// STATUS, which changes none of the Handler_, Com_, Select_, Sort_ or
// Created_tmp_ counters but its own Com_show_status and Questions, counted
// before it reads them) and answers the session's SHOW [SESSION] STATUS
// with the differences (statusShow). The server's FLUSH STATUS would need
// the RELOAD privilege and reset server-wide counters production's
// monitoring reads.

// resetPrefixes and resetNames are the status variables FLUSH STATUS sets
// back to zero for the session (the session's own counters, measured on
// MariaDB 10.11); the rest (Uptime, Memory_used, the server's gauges and
// the global counters a server's FLUSH STATUS resets) are left as the
// server has them.
var resetPrefixes = []string{"com_", "handler_", "select_", "sort_", "created_tmp_", "feature_", "table_open_cache_", "opened_"}

var resetNames = map[string]bool{
	"bytes_received": true, "bytes_sent": true, "questions": true, "empty_queries": true, "rows_read": true,
	"rows_sent": true, "rows_tmp_read": true, "slow_queries": true, "access_denied_errors": true, "update_scan": true,
	"delete_scan": true, "executed_triggers": true, "max_statement_time_exceeded": true, "binlog_bytes_written": true,
	"optimizer_join_prefixes_check_calls": true, "resultset_metadata_skipped": true, "column_compressions": true,
	"column_decompressions": true, "transactions_multi_engine": true, "rpl_transactions_multi_engine": true,
	"transactions_gtid_foreign_engine": true, "table_locks_immediate": true, "table_locks_waited": true,
}

// resets reports whether FLUSH STATUS resets the session's status
// variable name (any case).
func resets(name string) bool {
	n := strings.ToLower(name)
	if resetNames[n] {
		return true
	}
	for _, p := range resetPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	return false
}

// sessionStatusQuery reads every status counter of the session.
const sessionStatusQuery = "SHOW SESSION STATUS"

// flushStatus answers FLUSH STATUS in a sandbox: the session's counters
// now are its new zero.
func (s *Session) flushStatus(ctx context.Context) (*Reply, error) {
	r, err := s.up.Query(ctx, sessionStatusQuery)
	if err != nil {
		return nil, err
	}
	base := map[string]string{}
	for _, row := range r.Rows {
		if len(row) == 2 && row[0] != nil && row[1] != nil && resets(*row[0]) {
			base[strings.ToLower(*row[0])] = *row[1]
		}
	}
	// The SHOW read the rows of its temporary table after it counted them.
	if v, ok := base["rows_tmp_read"]; ok {
		if n, err := strconv.ParseUint(v, 10, 64); err == nil {
			base["rows_tmp_read"] = strconv.FormatUint(n+uint64(len(r.Rows)), 10)
		}
	}
	s.statusBase = base
	return &Reply{}, nil
}

// statusShow answers SHOW [SESSION | LOCAL] STATUS [LIKE … | WHERE …]
// (sql, as sent) after a FLUSH STATUS: the server's answer with each
// counter FLUSH STATUS resets less its value at the FLUSH. (A WHERE on
// Value compares the server's counts.)
func (s *Session) statusShow(ctx context.Context, sql string) (*Reply, error) {
	r, err := s.up.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	for _, row := range r.Rows {
		if len(row) != 2 || row[0] == nil || row[1] == nil {
			continue
		}
		if b, ok := s.statusBase[strings.ToLower(*row[0])]; ok {
			v := since(*row[1], b)
			row[1] = &v
		}
	}
	return &Reply{Defs: r.Columns, Rows: r.Rows}, nil
}

// since is the counter now less its value base, as the server writes it:
// integers as integers, times with their decimals; now as it is when the
// two do not read as numbers of one kind, or the counter went back.
func since(now, base string) string {
	if n, err := strconv.ParseUint(now, 10, 64); err == nil {
		if b, err := strconv.ParseUint(base, 10, 64); err == nil && b <= n {
			return strconv.FormatUint(n-b, 10)
		}
		return now
	}
	n, err1 := strconv.ParseFloat(now, 64)
	b, err2 := strconv.ParseFloat(base, 64)
	if err1 != nil || err2 != nil || b > n {
		return now
	}
	decimals := 0
	if dot := strings.IndexByte(now, '.'); dot >= 0 {
		decimals = len(now) - dot - 1
	}
	return strconv.FormatFloat(n-b, 'f', decimals, 64)
}

// planFlushStatus plans FLUSH STATUS in a sandbox.
func (s *Session) planFlushStatus(prepared bool, p *Plan) (*Plan, error) {
	if prepared {
		return nil, rewrite.Refuse(wire.ErUnsupportedPS, "FLUSH STATUS in a sandbox is answered by the proxy (for the session's "+
			"counters only) and cannot be prepared; send it as a plain query")
	}
	p.answer = func(ctx context.Context) (*Reply, error) { return asServer(s.flushStatus(ctx)) }
	return p, nil
}
