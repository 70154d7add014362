package session

import (
	"bytes"
	"encoding/binary"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/infoschema"
	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"github.com/sqlfork/sqlfork-proxy/sandbox"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Relabel is what the relay changes in the answer to a statement whose
// text the session rewrote, so that it reads as on the real database.
type Relabel struct {
	s *Session
	p *Plan
	// col counts the column definitions of the answer seen so far, types
	// are their types (for a prepared statement's binary rows).
	col   int
	types []byte
}

// relabel returns what to tell back in the answer to p: nil when p's text
// went upstream as the client wrote it, unless its answer is a plan, which
// may name the sandbox's tables as it is (the optimizer trace of the
// statement before), or the current database is one of the sandbox's own,
// which the server names by its schema (1305 FUNCTION <schema>.f does not
// exist).
func (s *Session) relabel(p *Plan) *Relabel {
	if p == nil || !p.changed && !(p.planJSON && s.sb != nil) && !(s.dbPhys && s.sb != nil) {
		return nil
	}
	return &Relabel{s: s, p: p}
}

// Definition is the column definition the client gets in place of the
// next one of the answer, when the answer must carry the server's own
// definitions (a SHOW the proxy asks as a query of information_schema);
// ok is false when the definition is only relabelled (Column). column
// says it defines a result column (not a parameter).
func (r *Relabel) Definition(p []byte, column bool) (def []byte, ok bool) {
	if !column {
		return nil, false
	}
	if r.p.binaryRows {
		typ, _ := wire.ColumnType(p)
		r.types = append(r.types, typ)
	}
	if len(r.p.defs) == 0 {
		return nil, false
	}
	i := r.col
	r.col++
	if i >= len(r.p.defs) {
		return nil, false
	}
	return r.p.defs[i], true
}

// NextResult starts the next result set of the answer (a CALL's answer
// holds one for each SELECT or SHOW of the body): its column definitions
// and binary row types are counted afresh.
func (r *Relabel) NextResult() { r.col, r.types = 0, r.types[:0] }

// Rows reports whether the answer's rows are to go through Row.
func (r *Relabel) Rows() bool { return r.p.nameRows }

// Row tells the sandbox's physical database names in the values of the
// row p back in logical names (p itself when it holds none): a text row,
// or for a prepared statement's execution a binary one, of the columns
// whose definitions the answer gave (Definition).
func (r *Relabel) Row(p []byte) []byte {
	if !bytes.Contains(p, []byte(r.s.m.cfg.Prefix)) {
		return p
	}
	tell := func(v string) string {
		v = r.s.unmap(r.s.unqualify(r.s.unqualifyJSON(v, r.p.explainDB), r.p.viewDB))
		if r.p.planJSON {
			v = joinJSONArrays(v)
		}
		return v
	}
	if r.p.binaryRows {
		if out, ok := wire.MapBinaryRowStrings(p, r.types, tell); ok {
			return out
		}
		return p
	}
	var vals []*string
	for rest := p; len(rest) > 0; {
		if rest[0] == 0xFB {
			vals, rest = append(vals, nil), rest[1:]
			continue
		}
		v, next, ok := wire.LenEncString(rest)
		if !ok {
			return p
		}
		s := tell(string(v))
		vals, rest = append(vals, &s), next
	}
	return wire.AppendTextRow(nil, vals)
}

// Error tells the sandbox's physical database names in the message of an
// error of code back in logical names; a syntax error quotes the client's
// text where the server quoted the rewritten one.
func (r *Relabel) Error(code uint16, msg string) string {
	if code == wire.ErParse {
		if m, ok := r.p.nearClient(msg); ok {
			return m
		}
	}
	return r.s.unmap(unquoteRenames(msg, r.p.renames))
}

// Column tells a column definition's names back as on the real database:
// its schema logical, and, for the sandbox's information_schema views, its
// name spelled as the statement wrote it (the server labels
// information_schema columns so). changed is false when nothing changes.
//
// A column of those views is described as the server describes its own
// information_schema column: the table named as the statement wrote it,
// and for the columns the views compute (the mapped names, which come with
// no schema) information_schema, the view as org_table and the column's
// flags and decimals (rest holds the definition's fixed fields).
func (r *Relabel) Column(n wire.ColumnNames, rest []byte) (wire.ColumnNames, []byte, bool) {
	if r.s.sb != nil && n.Schema == sandbox.InfoSchema(r.s.m.cfg.Prefix, r.s.sb.ID) {
		if _, ok := infoschema.OwnConnView(rewrite.Table{DB: "performance_schema", Name: n.OrgTable}); ok {
			n.Schema = "performance_schema" // a column of an own-connection view
			return n, rest, true
		}
	}
	orig := n
	n, changed := relabelColumn(n, r.s.logicalDB, r.spelling)
	if len(r.p.infoIdents) == 0 {
		return n, rest, changed
	}
	if v, ok := infoschema.ViewName(orig.Table); ok && (orig.Schema == "" || r.s.isInfoSchema(orig.Schema)) {
		if sp, ok := r.p.columnSpelling(orig.Table); ok && sp != n.Table {
			n.Table, changed = sp, true // no alias: the table as written
		}
		// Given a column alias, the server names the column the alias
		// stands for.
		if col := r.p.aliasedColumn(orig.OrgName); orig.Schema == "" && infoschema.ComputedColumn(v, col) {
			n.Schema, n.OrgTable, n.OrgName, rest, changed = "information_schema", v, strings.ToUpper(col), asInfoColumn(rest), true
		}
	} else if orig.Schema == "" && orig.OrgTable == "" && orig.Table != "" {
		// Through a table alias: the view the statement reads that
		// computes it.
		col := r.p.aliasedColumn(orig.OrgName)
		if v, ok := r.p.infoViewComputing(col); ok {
			n.Schema, n.OrgTable, n.OrgName, rest, changed = "information_schema", v, strings.ToUpper(col), asInfoColumn(rest), true
		}
	} else if orig.Schema == "" && orig.OrgTable == "" && orig.Table == "" {
		// An expression: over a view's column MariaDB echoes its label as
		// org_name and describes it otherwise than over the server's own
		// information_schema column.
		if orig.OrgName == orig.Name {
			n.OrgName = ""
		}
		rest, changed = asExpression(rest), true
	}
	return n, rest, changed
}

// asExpression gives the fixed fields rest of an expression's column those
// MariaDB gives an expression over information_schema's own columns: a
// binary (numeric, temporal) result is flagged binary, a string has
// decimals 39 (NOT_FIXED_DEC).
func asExpression(rest []byte) []byte {
	if len(rest) <= fixedDecimals || rest[0] != 0x0c {
		return rest
	}
	out := append([]byte(nil), rest...)
	if binary.LittleEndian.Uint16(out[1:]) == charsetBinary {
		binary.LittleEndian.PutUint16(out[fixedFlags:], binary.LittleEndian.Uint16(out[fixedFlags:])|flagBinary)
		return out
	}
	switch out[fixedType] {
	case typeVarString, typeString, typeBlob, typeVarchar:
		out[fixedDecimals] = notFixedDec
	}
	return out
}

// aliasedColumn is the column the plan's select list gives the alias
// name, or name itself.
func (p *Plan) aliasedColumn(name string) string {
	if p.analysis == nil {
		return name
	}
	for _, st := range p.analysis.Statements {
		for _, ac := range st.AliasedColumns {
			if strings.EqualFold(ac[0], name) {
				return ac[1]
			}
		}
	}
	return name
}

// infoViewComputing is the first of the sandbox's information_schema
// views the plan reads that computes column col.
func (p *Plan) infoViewComputing(col string) (string, bool) {
	if p.analysis == nil || col == "" {
		return "", false
	}
	for _, st := range p.analysis.Statements {
		for _, t := range st.Reads {
			if v, ok := infoschema.ViewName(t.Name); ok && strings.EqualFold(t.DB, "information_schema") && infoschema.ComputedColumn(v, col) {
				return v, true
			}
		}
	}
	return "", false
}

// Column definition flags and fields (ColumnDefinition41's fixed part:
// 0x0c, charset, length, type, flags, decimals).
const (
	flagNoDefault = 0x1000
	flagBinary    = 0x80
	fixedType     = 7
	fixedFlags    = 8
	fixedDecimals = 10
	charsetBinary = 63
	notFixedDec   = 39
	typeVarchar   = 15
	typeBlob      = 252
	typeVarString = 253
	typeString    = 254
)

// asInfoColumn gives the fixed fields rest of a column a sandbox's view
// computes those of the server's information_schema column: no default
// value, no decimals (an expression has 39).
func asInfoColumn(rest []byte) []byte {
	if len(rest) <= fixedDecimals || rest[0] != 0x0c {
		return rest
	}
	out := append([]byte(nil), rest...)
	flags := binary.LittleEndian.Uint16(out[fixedFlags:]) | flagNoDefault
	binary.LittleEndian.PutUint16(out[fixedFlags:], flags)
	out[fixedDecimals] = 0
	return out
}

// relabelColumn is Relabel.Column with the schema told back by logical
// and the name by spell (given the physical schema).
func relabelColumn(n wire.ColumnNames, logical func(string) (string, bool), spell func(schema, name string) (string, bool)) (wire.ColumnNames, bool) {
	schema, changed := n.Schema, false
	if db, ok := logical(schema); ok {
		n.Schema, changed = db, true
	}
	// The label as the query wrote it; org_name keeps the column's own.
	if sp, ok := spell(schema, n.Name); ok && sp != n.Name {
		n.Name, changed = sp, true
		if schema == "" && strings.EqualFold(sp, n.OrgName) {
			n.Schema = "information_schema" // a column the view maps: it is information_schema's
		}
	}
	return n, changed
}

// spelling renames a column of the sandbox's information_schema views as
// the statement spelled it. Columns the views compute (the mapped names)
// come with no schema, others with information_schema or the views'
// database.
func (r *Relabel) spelling(schema, name string) (string, bool) {
	if l, ok := r.p.label(name); ok {
		return l, true
	}
	if schema != "" && schema != "information_schema" && !r.s.isInfoSchema(schema) {
		return "", false
	}
	return r.p.columnSpelling(name)
}

// jsonLineWidth is the width up to which MariaDB's JSON writer puts an
// array of values on the line of its member (Single_line_formatting_helper,
// MAX_LINE_LEN).
const jsonLineWidth = 80

// joinJSONArrays puts back on one line, in JSON text the server wrote (a
// plan), the arrays of strings it broke across lines because the sandbox's
// physical names made them too long, when their logical names fit: the
// server writes `"name": [` and then its values on one line when its
// indentation, the name and one more character, and each value with four
// more (quotes, comma, space) stay within jsonLineWidth, else one value a
// line.
func joinJSONArrays(text string) string {
	if !strings.Contains(text, "\": [\n") {
		return text
	}
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		if joined, end, ok := joinedArray(lines, i); ok {
			out = append(out, joined)
			i = end
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}

// joinedArray reads, at lines[i], a member whose value is an array of
// strings written one a line, and returns it on one line with the index of
// its closing line, when the server would write it so.
func joinedArray(lines []string, i int) (joined string, end int, ok bool) {
	head := lines[i]
	body := strings.TrimLeft(head, " ")
	indent := len(head) - len(body)
	if !strings.HasPrefix(body, "\"") || !strings.HasSuffix(body, "\": [") {
		return "", 0, false
	}
	name := body[1 : len(body)-4]
	if strings.ContainsAny(name, "\"\\") {
		return "", 0, false
	}
	width := indent + len(name) + 1
	var values []string
	for j := i + 1; j < len(lines); j++ {
		v := strings.TrimSpace(lines[j])
		if v == "]" || v == "]," {
			if len(values) == 0 {
				return "", 0, false
			}
			return head + strings.Join(values, ", ") + v, j, true
		}
		v = strings.TrimSuffix(v, ",")
		if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' || strings.ContainsAny(v[1:len(v)-1], "\"\\") {
			return "", 0, false
		}
		if width += len(v) - 2 + 4; width > jsonLineWidth {
			return "", 0, false
		}
		values = append(values, v)
	}
	return "", 0, false
}
