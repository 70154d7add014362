package rewrite_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// crude: statements of a .test file, mysqltest commands skipped.
func TestScan(t *testing.T) {
	e := rewrite.NewEngine(10)
	for _, name := range strings.Fields(os.Getenv("SCAN")) {
		b, _ := os.ReadFile("/usr/share/mysql/mysql-test/main/" + name + ".test")
		var cur []string
		n, bad := 0, 0
		delim := ";"
		for _, l := range strings.Split(string(b), "\n") {
			tl := strings.TrimSpace(l)
			if len(cur) == 0 && (tl == "" || strings.HasPrefix(tl, "#") || strings.HasPrefix(tl, "--")) {
				continue
			}
			if strings.HasPrefix(strings.ToLower(tl), "delimiter ") || strings.HasPrefix(strings.ToLower(tl), "--delimiter ") {
				cur = nil
				tl = strings.TrimPrefix(tl, "--")
				delim = strings.TrimSpace(tl[10:])
				delim = strings.TrimSuffix(delim, ";")
				continue
			}
			lw := strings.ToLower(tl)
			if len(cur) == 0 {
				skip := false
				for _, p := range []string{"let ", "eval ", "echo ", "if ", "if(", "while", "}", "{", "source ", "connect", "disconnect", "connection ", "send", "reap", "error", "disable_", "enable_", "replace_", "sleep", "dec ", "inc ", "exec ", "remove_file", "write_file", "end", "perl", "query_vertical", "sorted_result", "horizontal_results", "vertical_results", "die", "exit", "real_sleep", "change_user", "ping", "save_master_pos", "sync_", "file_exists", "copy_file", "move_file", "cat_file", "list_files", "mkdir", "rmdir", "character_set", "result_format", "lowercase_result", "skip", "require", "append_file", "partially_sorted_result", "chmod", "diff_files"} {
					if strings.HasPrefix(lw, p) {
						skip = true
					}
				}
				if skip {
					continue
				}
			}
			cur = append(cur, l)
			if strings.HasSuffix(tl, delim) {
				q := strings.TrimSuffix(strings.TrimSpace(strings.Join(cur, "\n")), delim)
				cur = nil
				n++
				if os.Getenv("TRACE") != "" {
					fmt.Printf("Q %q\n", q)
				}
				a := e.Analyze(q, rewrite.Options{DB: "test"})
				for _, st := range a.Statements {
					if st.Unprovable != "" || st.Class == rewrite.ClassUnparseable {
						bad++
						if bad <= 6 {
							fmt.Printf("  %s: %.100q: %.100s\n", name, q, st.Unprovable)
						}
						break
					}
				}
			}
		}
		fmt.Printf("%s: %d statements, %d unreadable\n", name, n, bad)
	}
}
