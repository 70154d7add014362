package forker

import (
	"encoding/hex"
	"regexp"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/quote"
)

// numeric matches the text the server gives a number in.
var numeric = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// selectExpr is how a column is read for a copy: a FLOAT as a DOUBLE (its
// own text form does not give its value back), the rest as is.
func selectExpr(c Column) string { return selectExprOf("", c) }

// selectExprOf is selectExpr of the column qualified by prefix ("s.").
func selectExprOf(prefix string, c Column) string {
	if c.Float() {
		return "CAST(" + prefix + quote.Ident(c.Name) + " AS DOUBLE)"
	}
	return prefix + quote.Ident(c.Name)
}

// Literal writes v, read from column c by a connection whose results are
// raw bytes (character_set_results = binary), as a literal that gives the
// same value back: bytes in hexadecimal, text in hexadecimal with its
// character set and collation, numbers as the server wrote them, the rest
// (dates, times) quoted. v is data: nothing in it can end the literal.
func Literal(c Column, v *string) string {
	if v == nil {
		return "NULL"
	}
	switch {
	case c.Binary():
		return "X'" + hex.EncodeToString([]byte(*v)) + "'"
	case c.Charset != "":
		lit := "_" + c.Charset + " X'" + hex.EncodeToString([]byte(*v)) + "'"
		if c.Collation != "" {
			lit += " COLLATE " + quote.Ident(c.Collation)
		}
		return lit
	case isNumber(c.DataType) && numeric.MatchString(*v):
		return *v
	}
	return quote.String(*v)
}

// isNumber reports the numeric data types.
func isNumber(dataType string) bool {
	switch strings.ToLower(dataType) {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "decimal", "numeric", "float", "double", "real", "year":
		return true
	}
	return false
}
