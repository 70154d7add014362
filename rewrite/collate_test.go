package rewrite

import (
	"errors"
	"testing"
)

// TestNamesCollate reads SET NAMES DEFAULT COLLATE c as a SET NAMES, a
// statement that changes how the server reads text (the session reads its
// settings again after it). SET CHARACTER SET 'DEFAULT', which the server
// rejects (1115, unknown character set), is refused for the server to
// answer: the client gets the server's own error.
func TestNamesCollate(t *testing.T) {
	e := NewEngine(0)
	opts := Options{DB: "app", Server: maria1011}
	r := sandboxApp()
	wantRewrites(t, e, opts, r, []rewriteCase{
		{"SET NAMES DEFAULT COLLATE utf8mb4_bin", "SET NAMES DEFAULT COLLATE utf8mb4_bin"},
		{"SET NAMES DEFAULT COLLATE `binary`", "SET NAMES DEFAULT COLLATE `binary`"},
		{"SET NAMES DEFAULT COLLATE DEFAULT", "SET NAMES DEFAULT COLLATE DEFAULT"},
		{"SET NAMES utf8mb4 COLLATE DEFAULT", "SET NAMES utf8mb4 COLLATE DEFAULT"},
	})
	for _, sql := range []string{"SET NAMES DEFAULT COLLATE latin1_bin", "SET NAMES DEFAULT COLLATE 'utf8mb4_bin'"} {
		if st := e.Analyze(sql, opts).Statements[0]; !st.ChangesLexing {
			t.Errorf("%q does not change lexing", sql)
		}
	}
	wantRefused(t, e, opts, r, "SET NAMES DEFAULT COLLATE utf8mb4_bin, @a = (SELECT 1 FROM t)")
	_, err := e.Rewrite("SET CHARACTER SET 'DEFAULT'", opts, r)
	var rf *Refusal
	if !errors.As(err, &rf) || !rf.ServerCheck || !rf.ServerRejects(1115) {
		t.Errorf("SET CHARACTER SET 'DEFAULT': %v, want a refusal the server's 1115 answers", err)
	}
}
