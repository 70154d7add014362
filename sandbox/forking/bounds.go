package forking

import (
	"github.com/sqlfork/sqlfork-proxy/forker"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
)

// CopyUpWhere is the condition on a filling fork's columns that selects
// every production row st could read, change or collide with, from the
// literal key values st pins (rewrite.Bounds); ok is false when st's rows
// are not bounded so.
func CopyUpWhere(st rewrite.Statement, shape forker.Shape) (where string, ok bool) {
	return "", false
}
