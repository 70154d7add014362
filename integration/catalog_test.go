package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/sqlfork/sqlfork-proxy/catalog"
)

// TestNativeFunctionsResolveNatively checks the proxy's list of the
// server's own functions: the proxy does not look a listed name up among
// stored functions, so an unqualified call of it must never reach one,
// whatever its arguments. In a database without stored functions, a call
// the server would send to a stored function fails with 1305 (FUNCTION
// … does not exist, or 1630 for names like built-ins); a native one runs,
// or fails on its arguments or
// syntax.
func TestNativeFunctionsResolveNatively(t *testing.T) {
	db, _ := env(t)
	root := openDB(t, db.DSN(""))
	ctx := context.Background()
	c, err := root.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mustExecC(t, c, "DROP DATABASE IF EXISTS natcheck")
	mustExecC(t, c, "CREATE DATABASE natcheck")
	defer func() { _, _ = c.ExecContext(ctx, "DROP DATABASE natcheck") }()
	mustExecC(t, c, "USE natcheck")
	names := catalog.NativeFunctions()
	if len(names) < 300 {
		t.Fatalf("only %d native functions listed", len(names))
	}
	args := []string{"", "1", "1, 1", "1, 1, 1", "1, 1, 1, 1", "'a', 'b', 'c', 'd', 'e'"}
	// However the call is spelled: the grammar takes some names for its
	// own functions only when they come unquoted right before "(".
	spellings := []string{"%s(", "%s (", "`%s`(", "%s/**/("}
	ran := 0
	for _, n := range names {
	next:
		for _, sp := range spellings {
			for _, a := range args {
				call := fmt.Sprintf(sp, n) + a + ")"
				var v any
				err := c.QueryRowContext(ctx, "SELECT "+call).Scan(&v)
				if me, ok := err.(*mysql.MySQLError); ok && (me.Number == 1305 || me.Number == 1630) {
					t.Errorf("%s is not a call of one of the server's own functions (%s), so %s must not be listed as native",
						call, strings.TrimSpace(me.Message), n)
					break next
				}
				if err == nil {
					ran++
				}
			}
		}
	}
	// The check needs calls the server accepts, not only errors.
	// Keyword functions are native only when written bare.
	for _, n := range catalog.KeywordFunctions() {
		for _, a := range args {
			call := n + "(" + a + ")"
			var v any
			err := c.QueryRowContext(ctx, "SELECT "+call).Scan(&v)
			if me, ok := err.(*mysql.MySQLError); ok && (me.Number == 1305 || me.Number == 1630) {
				t.Errorf("%s reaches a stored function (%s), so %s must not be listed as a keyword function",
					call, strings.TrimSpace(me.Message), n)
				break
			}
		}
	}
	// Names the lexer always takes for its own: native however spaced.
	for _, n := range catalog.UnquotedFunctions() {
		for _, sp := range []string{"%s(", "%s (", "%s/**/("} {
			for _, a := range args {
				call := fmt.Sprintf(sp, n) + a + ")"
				var v any
				err := c.QueryRowContext(ctx, "SELECT "+call).Scan(&v)
				if me, ok := err.(*mysql.MySQLError); ok && (me.Number == 1305 || me.Number == 1630) {
					t.Errorf("%s reaches a stored function (%s), so %s must not be listed as always native unquoted",
						call, strings.TrimSpace(me.Message), n)
				}
			}
		}
	}
	if ran < len(names)/2 {
		t.Fatalf("only %d calls ran: the check proves little", ran)
	}
	t.Logf("%d names, %d calls ran natively", len(names), ran)
}
