package setvar

import (
	"fmt"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

func TestRead(t *testing.T) {
	tests := []struct {
		text string
		want string // each assignment: scope name=value, or "!" for not ok
	}{
		{"SET GLOBAL sort_buffer_size = 1024*1024", "[{1 sort_buffer_size 1024*1024 false}]"},
		{"SET @@GLOBAL.x = 1", "[{1 x 1 false}]"},
		{"set @@global.x := @save", "[{1 x @save false}]"},
		{"SET @@global.`x` = DEFAULT", "[{1 x DEFAULT true}]"},
		// The scope keyword carries to the assignments after it; @@x is
		// the session's (measured on MariaDB 10.11).
		{"SET GLOBAL a = 1, b = 2", "[{1 a 1 false} {1 b 2 false}]"},
		{"SET GLOBAL a = 1, @@b = 2, c = 3", "[{1 a 1 false} {0 b 2 false} {1 c 3 false}]"},
		{"SET GLOBAL a = DEFAULT, SESSION b = 4, @u = 1, c = 5", "[{1 a DEFAULT true} {0 b 4 false} {2 u 1 false} {0 c 5 false}]"},
		{"SET @@global.a = 1, b = 2", "[{1 a 1 false} {0 b 2 false}]"},
		{"SET GLOBAL a = CONCAT('x', 'y'), LOCAL b = 1;", "[{1 a CONCAT('x', 'y') false} {0 b 1 false}]"},
		{"SET GLOBAL TRANSACTION ISOLATION LEVEL READ COMMITTED", "!"},
		{"SET NAMES utf8mb4", "!"},
		{"SET GLOBAL keycache1.key_buffer_size = 1", "!"},
		{"SET @@global.keycache1.key_buffer_size = 1", "!"},
		{"SET PASSWORD = 'x'", "!"},
		{"SET GLOBAL x", "!"},
		{"SET GLOBAL x =", "!"},
		{"SELECT 1", "!"},
	}
	for _, c := range tests {
		as, ok := Read(c.text, lexer.Options{})
		got := "!"
		if ok {
			var parts []string
			for _, a := range as {
				parts = append(parts, fmt.Sprintf("{%d %s %s %v}", a.Scope, a.Name, a.Value, a.Default))
			}
			got = fmt.Sprint(parts)
		}
		if got != c.want {
			t.Errorf("Read(%q) = %s, want %s", c.text, got, c.want)
		}
	}
}

func TestText(t *testing.T) {
	as, ok := Read("SET GLOBAL a = 1, SESSION b = 2, c = @x", lexer.Options{})
	if !ok {
		t.Fatal("not read")
	}
	if got := Text(as[1:]); got != "SET SESSION b = 2, c = @x" {
		t.Errorf("Text = %q", got)
	}
	if Text(nil) != "" {
		t.Error("Text of none")
	}
}
