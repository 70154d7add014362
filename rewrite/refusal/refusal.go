// Package refusal is the error the proxy answers a statement it will not
// let through with: the MySQL error the client gets, and whether the
// server's own verdict on the text should replace it.
package refusal

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Refusal is a statement the engine will not let through, with the MySQL
// error the client should get.
type Refusal struct {
	Code    uint16
	State   string
	Message string
	// Reason names the guardrail that refused (rewrite's Reason*
	// constants), for counting; empty for the proxy's other refusals.
	Reason string
	// ServerCheck marks the refusal of a single statement the engine
	// cannot parse, which the server may reject as well: the client should
	// then get the server's own error (a syntax error, an unknown
	// collation), not this one. The caller asks the server with the
	// statements rewrite.SyntaxCheck gives, on the client's own
	// connection, and answers with the server's error when
	// ServerSyntaxError says it rejects the text, with this refusal
	// otherwise.
	ServerCheck bool
	// CheckText, when set, is the text to ask the server about instead of
	// the input: the text a PREPARE … FROM '…' holds.
	CheckText string
	// ServerErrors are the server's error codes, besides those
	// ServerSyntaxError lists, by which it rejects this text whatever any
	// sandbox holds: ER_BAD_FIELD_ERROR for GET DIAGNOSTICS, which names
	// no table, so a name it holds is a column of none (see
	// forms.ServerErrors).
	ServerErrors []uint16
}

// ServerRejects reports whether the server's error code in answer to
// rewrite.SyntaxCheck's PREPARE of the text r refused means that the server
// rejects the text itself (ServerSyntaxError, ServerErrors).
func (r *Refusal) ServerRejects(code uint16) bool {
	return ServerSyntaxError(code) || slices.Contains(r.ServerErrors, code)
}

// Error is the refusal as code (state): message.
func (r *Refusal) Error() string { return fmt.Sprintf("%d (%s): %s", r.Code, r.State, r.Message) }

// MySQLError returns the error code, SQLSTATE and message for the client.
func (r *Refusal) MySQLError() (uint16, string, string) { return r.Code, r.State, r.Message }

// prefix starts the message of the proxy's own refusals (Refuse).
const prefix = "sqlfork-proxy: "

// Refuse is the proxy's refusal with code, the server's SQLSTATE for it
// and a message that says the proxy refused.
func Refuse(code uint16, format string, args ...any) *Refusal {
	return &Refusal{Code: code, State: wire.State(code), Message: prefix + fmt.Sprintf(format, args...)}
}

// Plain is the message without the "sqlfork-proxy: " a client's error
// starts with, to quote it in another message or an admin API's answer.
func (r *Refusal) Plain() string { return strings.TrimPrefix(r.Message, prefix) }

// ServerRefusal is a refusal worded as the server words the error (code,
// its SQLSTATE, message): what the client would get from the server.
func ServerRefusal(code uint16, format string, args ...any) *Refusal {
	return &Refusal{Code: code, State: wire.State(code), Message: fmt.Sprintf(format, args...)}
}

// ServerSyntaxError reports whether the server's error code in answer to
// rewrite.SyntaxCheck's PREPARE means that the server rejects the text
// itself, as any connection would (a syntax error, an unknown character
// set or collation, a name too long, a system variable it does not have,
// words that do not go together, a subquery or stored function where the
// statement takes none — HANDLER … READ, EXECUTE … USING, which its
// parser refuses whatever the names), and not that a table it names is
// missing where PREPARE looked (production, not the sandbox) or that
// PREPARE cannot take the statement.
func ServerSyntaxError(code uint16) bool {
	switch code {
	case wire.ErParse,
		1149, // ER_SYNTAX_ERROR
		1115, // ER_UNKNOWN_CHARACTER_SET
		1273, // ER_UNKNOWN_COLLATION
		1059, // ER_TOO_LONG_IDENT
		1193, // ER_UNKNOWN_SYSTEM_VARIABLE
		1221, // ER_WRONG_USAGE (SELECT ALL DISTINCT, UNION and ORDER BY, …)
		1300, // ER_INVALID_CHARACTER_STRING (a name's bytes not valid in the client's character set)
		1367, // ER_ILLEGAL_VALUE_FOR_TYPE (a literal out of its type's range, found while parsing)
		wire.ErSubqueriesNotSupported:
		return true
	}
	return false
}
