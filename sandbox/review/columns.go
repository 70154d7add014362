package review

// DiffSummaryColumns are SANDBOX DIFF SUMMARY's columns.
var DiffSummaryColumns = []string{"table_name", "change", "rows_inserted", "rows_updated", "rows_deleted", "conflicts", "key_kind", "method", "note"}

// DiffColumns are SANDBOX DIFF's columns (one row per changed row or DDL
// statement).
var DiffColumns = []string{"table_name", "op", "key", "before", "after", "production"}

// ExportColumns are SANDBOX EXPORT's.
var ExportColumns = []string{"statement"}
