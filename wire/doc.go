// Package wire is the MySQL client/server protocol's codec as the proxy
// uses it: packet framing, length-encoded integers, OK / ERR / EOF packets,
// column definitions and text rows, capability and status flags, command
// bytes and the error codes the proxy sends or reads. It does no
// orchestration: which packet comes next, and what to do with it, is the
// proxy's business.
package wire
