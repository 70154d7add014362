package forker

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// The last insert id of INSERT | REPLACE … SELECT. For a table with
// triggers, MariaDB's select_insert::send_data puts each row back to the
// table's defaults before it reads the row's AUTO_INCREMENT value, so such
// a statement whose rows all carry their ids answers last insert id 0
// where a table without triggers answers the last row's. A fork has the
// capture's triggers; its AFTER INSERT one also keeps each row's value in
// a user variable of its own (InsertIDVar), which the proxy reads once the
// statement answered 0 and puts in its answer (session/insertid.go).

// InsertIDVar is the user variable the capture's AFTER INSERT trigger sets
// to the AUTO_INCREMENT value of each row it sees inserted ("" for a table
// without an AUTO_INCREMENT column): one per fork, so that rows a
// statement's functions insert into other forks leave it.
func (cp Capture) InsertIDVar() string {
	if _, ok := cp.autoColumn(); !ok {
		return ""
	}
	return InsertIDVarOf(cp.Trigger)
}

// InsertIDVarOf is the user variable of the capture whose triggers' names
// start with trigger.
func InsertIDVarOf(trigger string) string { return trigger + "_id" }

// SetsInsertID reports whether body, a capture's AFTER INSERT trigger's,
// sets the user variable v (forks made before it did keep a body that
// does not).
func SetsInsertID(body, v string) bool {
	return strings.Contains(body, insertIDSet(v, ""))
}

// autoColumn is the table's AUTO_INCREMENT column.
func (cp Capture) autoColumn() (Column, bool) {
	for _, c := range cp.Columns {
		if c.Auto {
			return c, true
		}
	}
	return Column{}, false
}

// insertIDSet is the statement that sets v to NEW's col ("": its start).
func insertIDSet(v, col string) string {
	s := "SET @" + quote.Ident(v) + " = NEW."
	if col != "" {
		s += quote.Ident(col)
	}
	return s
}

// insertBody is the body of the AFTER INSERT trigger: capture, the
// statement that records the row's key, and, for a table with an
// AUTO_INCREMENT column, the setting of InsertIDVar.
func (cp Capture) insertBody(capture string) string {
	col, ok := cp.autoColumn()
	if !ok {
		return capture
	}
	return "BEGIN " + capture + "; " + insertIDSet(cp.InsertIDVar(), col.Name) + "; END"
}
