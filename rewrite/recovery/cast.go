package recovery

import "github.com/sqlfork/sqlfork-proxy/rewrite/lexer"

// Character types of CAST(x AS type) and CONVERT(x, type) the parser does
// not take: NCHAR (read as CHAR and a blank), the character set words
// UNICODE and BYTE (blanked) and COLLATE DEFAULT (blanked: the character
// set's default collation, which the type has without it). A type names
// nothing, and x keeps its place. Only a type after CAST's AS or
// CONVERT's ',' is read so: elsewhere NCHAR( could call a stored function
// of the name.

// castCharWords are the words of a cast's character set clause.
var castCharWords = map[string]bool{"ASCII": true, "UNICODE": true, "BYTE": true, "BINARY": true}

// castCharType: CHAR or NCHAR [(n)] [ASCII | UNICODE | BYTE | BINARY |
// CHARACTER SET cs | CHARSET cs …] [COLLATE name] as the type of a CAST
// or CONVERT, up to its ')'.
func (r *recovery) castCharType(i int) (int, bool) {
	w := r.word(i)
	if w != "CHAR" && w != "NCHAR" || !r.castTypeAt(i) {
		return i, false
	}
	j := i + 1
	if r.punct(j, '(') && j+2 < len(r.toks) && r.toks[j+1].Kind == lexer.Number && r.punct(j+2, ')') {
		j += 3
	}
	var blanks []int
	for {
		switch {
		case castCharWords[r.word(j)]:
			if r.word(j) == "UNICODE" || r.word(j) == "BYTE" {
				blanks = append(blanks, j)
			}
			j++
			continue
		case r.word(j) == "CHARACTER" && r.word(j+1) == "SET" && j+2 < len(r.toks) && r.toks[j+2].Kind != lexer.Punct:
			j += 3
			continue
		case r.word(j) == "CHARSET" && j+1 < len(r.toks) && r.toks[j+1].Kind != lexer.Punct:
			j += 2
			continue
		case r.word(j) == "COLLATE" && r.word(j+1) == "DEFAULT":
			blanks = append(blanks, j, j+1)
			j += 2
		}
		break
	}
	if !r.punct(j, ')') || w == "CHAR" && len(blanks) == 0 {
		return i, false
	}
	if w == "NCHAR" {
		r.putWord(i, "CHAR")
	}
	for _, b := range blanks {
		r.span(b, b)
	}
	return i, true // the length is read on: a long one is longNumber's
}

// castTypeAt reports whether toks[i] starts the type of a CAST (after
// AS, in CAST's parentheses) or of a CONVERT (after the ',' of CONVERT's
// parentheses).
func (r *recovery) castTypeAt(i int) bool {
	if r.word(i-1) != "AS" && !r.punct(i-1, ',') {
		return false
	}
	depth := 0
	for j := i - 1; j >= r.first; j-- {
		switch {
		case r.punct(j, ')'):
			depth++
		case r.punct(j, '('):
			if depth == 0 {
				return r.word(j-1) == "CAST" && r.word(i-1) == "AS" || r.word(j-1) == "CONVERT" && r.punct(i-1, ',')
			}
			depth--
		case depth == 0 && j < i-1 && (r.punct(j, ',') || r.word(j) == "AS"):
			return false
		}
	}
	return false
}

// castSpatial: a spatial type as the type of a CAST or CONVERT
// (CAST(x AS POINT), CONVERT(x, GEOMETRY)), which MariaDB's grammar takes
// and its server refuses (4162, an illegal cast target); read as CHAR and
// blanks. A type names nothing, and x keeps its place.
func (r *recovery) castSpatial(i int) (int, bool) {
	if !spatialTypes[r.word(i)] || !r.punct(i+1, ')') || !r.castTypeAt(i) {
		return i, false
	}
	r.putWord(i, "CHAR")
	return i, true
}

// castDouble: DOUBLE(m, d) or FLOAT(m, d) as the type of a CAST or
// CONVERT, whose precision the parser does not take there: the precision,
// numbers, is blanked.
func (r *recovery) castDouble(i int) (int, bool) {
	if w := r.word(i); w != "DOUBLE" && w != "FLOAT" || !r.punct(i+1, '(') || !r.castTypeAt(i) {
		return i, false
	}
	j := i + 2
	for j < len(r.toks) && (r.toks[j].Kind == lexer.Number || r.punct(j, ',')) {
		j++
	}
	if !r.punct(j, ')') || !r.punct(j+1, ')') || j == i+2 {
		return i, false
	}
	r.span(i+1, j)
	return j, true
}

// castUnknownType: a word the parser takes for no type as the whole type
// of a CAST or CONVERT (CAST(x AS DUAL), a type of a plugin's the parser
// lacks): MariaDB reads any name there as a type's, and its server says
// whether it has it (4161). Read as CHAR and blanks; a type names nothing.
func (r *recovery) castUnknownType(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Ident || !r.punct(i+1, ')') || int(t.End-t.Start) < len("DEC") || r.blanked(i) || IsTypeWord(r.word(i)) ||
		castTypes[r.word(i)] || !r.castTypeAt(i) {
		return i, false
	}
	if t.End-t.Start < 4 {
		r.putWord(i, "DEC") // CAST(x AS END)
		return i, true
	}
	r.putWord(i, "CHAR")
	return i, true
}

// precisionTypes are the cast types whose precision castPrecision reads
// (a character type's length is read on: the parser takes a long one).
var precisionTypes = map[string]bool{"TIME": true, "DATETIME": true, "DECIMAL": true, "DEC": true, "DOUBLE": true, "FLOAT": true}

// castPrecision: a cast's type with a precision past what the parser
// reads (TIME(999999999999999999), DECIMAL(99999999999999999999)), which
// the server refuses (1426); read as 0 and blanks: a number names nothing.
func (r *recovery) castPrecision(i int) (int, bool) {
	t := r.toks[i]
	if t.Kind != lexer.Number || t.End-t.Start < 10 || !r.punct(i-1, '(') || !r.punct(i+1, ')') && !r.punct(i+1, ',') ||
		!precisionTypes[r.word(i-2)] || !r.castTypeAt(i-2) {
		return i, false
	}
	r.span(i, i)
	r.put(int(t.Start), "0")
	return i, true
}

// asciiBinary are the words of a cast's character type the parser takes
// one of (castCharType blanks UNICODE and BYTE).
var asciiBinary = map[string]bool{"ASCII": true, "BINARY": true}

// castCharWords2: CHAR(n) ASCII BINARY or BINARY ASCII as a cast's type,
// of which the parser takes BINARY: ASCII is blanked (a character set's
// word; a type names nothing).
func (r *recovery) castCharWords2(i int) (int, bool) {
	if r.word(i) != "CHAR" || !r.castTypeAt(i) || !r.punct(i+1, '(') || !r.punct(i+3, ')') ||
		!asciiBinary[r.word(i+4)] || !asciiBinary[r.word(i+5)] || !r.punct(i+6, ')') {
		return i, false
	}
	if r.word(i+4) == "ASCII" {
		r.span(i+4, i+4)
	} else {
		r.span(i+5, i+5)
	}
	return i + 5, true
}

// typeSchema: MARIADB_SCHEMA.type, a column's type qualified by the schema
// of MariaDB's own types (CREATE TABLE t (a mariadb_schema.date)): the
// qualifier is blanked, the type stays. It names no table (a name after a
// column's name in a CREATE or ALTER TABLE is a type's).
func (r *recovery) typeSchema(i int) (int, bool) {
	if !r.tableDDL || r.word(i) != "MARIADB_SCHEMA" || !r.punct(i+1, '.') || i+2 >= len(r.toks) || r.toks[i+2].Kind != lexer.Ident ||
		i == 0 || r.toks[i-1].Kind != lexer.Ident && r.toks[i-1].Kind != lexer.Quoted || !IsTypeWord(r.word(i+2)) {
		return i, false
	}
	r.span(i, i+1)
	return i + 1, true
}
