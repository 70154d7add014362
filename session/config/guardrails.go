package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox/forking"
)

// Guardrail names, as counted in refusals (Refusal.Reason) and named in
// settings.
const (
	GuardDenyStatements      = rewrite.ReasonDenyStatements
	GuardDenyMultiStatements = rewrite.ReasonDenyMultiStatements
	GuardStatementTimeout    = rewrite.ReasonStatementTimeout
	GuardMaxRows             = "max_rows"
	GuardMaxForkBytes        = forking.ReasonMaxForkBytes
	GuardMaxSandboxes        = "max_sandboxes_per_user"
)

// Guardrails bound what one proxy user's sessions may do in the sandbox
// modes (transparent and explicit); passthrough sessions are not read by
// the proxy and get none. Zero values mean no bound.
type Guardrails struct {
	// DenyStatements names statement classes refused outright: read,
	// write, ddl, transaction, session, routine, other.
	DenyStatements []string
	// DenyMultiStatements refuses inputs holding more than one statement.
	DenyMultiStatements bool
	// StatementTimeout is injected into every read and write sent
	// upstream (MariaDB SET STATEMENT max_statement_time=… FOR, MySQL
	// MAX_EXECUTION_TIME for SELECT).
	StatementTimeout time.Duration
	// MaxRows caps the rows of one result set: past it the proxy stops
	// forwarding rows and ends the statement with an error.
	MaxRows int64
	// MaxForkBytes caps the bytes of tables forked into one sandbox.
	MaxForkBytes int64
	// MaxSandboxes caps the sandboxes one proxy user owns at once in this
	// process.
	MaxSandboxes int
}

// deniableClasses are the classes DenyStatements may name (SANDBOX
// statements are how a user leaves trouble; unparseable ones are refused
// in sandboxes anyway).
func deniableClasses() []rewrite.Class {
	return []rewrite.Class{rewrite.ClassRead, rewrite.ClassWrite, rewrite.ClassDDL, rewrite.ClassTransaction,
		rewrite.ClassSession, rewrite.ClassRoutine, rewrite.ClassOther}
}

// Validate checks the guardrails, naming the bad one.
func (g Guardrails) Validate() error {
	if _, err := g.Classes(); err != nil {
		return err
	}
	switch {
	case g.StatementTimeout < 0:
		return fmt.Errorf("statement-timeout: must be >= 0, got %s", g.StatementTimeout)
	case g.StatementTimeout > 0 && g.StatementTimeout < time.Millisecond:
		return fmt.Errorf("statement-timeout: %s is below the server's resolution of 1ms", g.StatementTimeout)
	case g.MaxRows < 0:
		return fmt.Errorf("max-rows: must be >= 0, got %d", g.MaxRows)
	case g.MaxForkBytes < 0:
		return fmt.Errorf("max-fork-bytes: must be >= 0, got %d", g.MaxForkBytes)
	case g.MaxSandboxes < 0:
		return fmt.Errorf("max-sandboxes-per-user: must be >= 0, got %d", g.MaxSandboxes)
	}
	return nil
}

// Classes are the statement classes DenyStatements names.
func (g Guardrails) Classes() ([]rewrite.Class, error) {
	var out []rewrite.Class
	for _, name := range g.DenyStatements {
		i := slices.IndexFunc(deniableClasses(), func(c rewrite.Class) bool { return strings.EqualFold(c.String(), name) })
		if i < 0 {
			names := make([]string, 0, 7)
			for _, c := range deniableClasses() {
				names = append(names, c.String())
			}
			return nil, fmt.Errorf("deny-statements: %q is not a statement class (want some of %s)", name, strings.Join(names, ", "))
		}
		out = append(out, deniableClasses()[i])
	}
	return out, nil
}
