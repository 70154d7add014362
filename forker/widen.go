package forker

import (
	"regexp"
	"strconv"
	"strings"
)

// Widens reports whether a column's type changing from old to new keeps
// every value it can hold, and its order and equality: an integer type to
// a larger one of the same signedness, a VARCHAR or VARBINARY to a longer
// one, a TEXT or BLOB to a larger one, a DECIMAL to one with as many
// digits before and after the point or more — in each case with the same
// character set and collation. Such a MODIFY keeps a capture's fork-time
// images comparable with the sandbox's rows and production's.
func Widens(old, new Column) bool {
	if old.Charset != new.Charset || old.Collation != new.Collation || old.Generated || new.Generated {
		return false
	}
	o, n := strings.ToLower(old.Type), strings.ToLower(new.Type)
	if o == n {
		return true
	}
	if strings.Contains(o, "zerofill") != strings.Contains(n, "zerofill") || strings.Contains(o, "unsigned") != strings.Contains(n, "unsigned") {
		return false
	}
	if fo, ro := sizeRank(old.DataType); fo != "" {
		fn, rn := sizeRank(new.DataType)
		return fn == fo && rn >= ro && (fo != "int" || sameSuffix(o, n))
	}
	switch {
	case old.DataType != new.DataType:
		return false
	case old.DataType == "varchar" || old.DataType == "varbinary":
		lo, okO := typeArgs(o)
		ln, okN := typeArgs(n)
		return okO && okN && len(lo) == 1 && len(ln) == 1 && ln[0] >= lo[0]
	case old.DataType == "decimal":
		po, okO := typeArgs(o)
		pn, okN := typeArgs(n)
		return okO && okN && len(po) == 2 && len(pn) == 2 && pn[1] >= po[1] && pn[0]-pn[1] >= po[0]-po[1]
	}
	return false
}

// sameSuffix reports whether two integer types carry the same attributes
// after their name and display width (unsigned, zerofill).
func sameSuffix(o, n string) bool {
	cut := func(s string) string {
		if i := strings.IndexByte(s, ')'); i >= 0 {
			return strings.TrimSpace(s[i+1:])
		}
		if i := strings.IndexByte(s, ' '); i >= 0 {
			return strings.TrimSpace(s[i+1:])
		}
		return ""
	}
	return cut(o) == cut(n)
}

// sizeRank places an integer, text or blob type in its family by the
// values it holds ("" for other types).
func sizeRank(dataType string) (family string, rank int) {
	for _, f := range [...]struct {
		name  string
		types []string
	}{
		{"int", []string{"tinyint", "smallint", "mediumint", "int", "bigint"}},
		{"text", []string{"tinytext", "text", "mediumtext", "longtext"}},
		{"blob", []string{"tinyblob", "blob", "mediumblob", "longblob"}},
	} {
		for i, t := range f.types {
			if t == dataType {
				return f.name, i
			}
		}
	}
	return "", 0
}

// typeArg reads the numbers in a type's parentheses: varchar(20) → [20],
// decimal(10,2) → [10 2].
var typeArg = regexp.MustCompile(`^[a-z]+\(([0-9]+)(?:,([0-9]+))?\)`)

func typeArgs(t string) ([]int, bool) {
	m := typeArg.FindStringSubmatch(t)
	if m == nil {
		return nil, false
	}
	var out []int
	for _, s := range m[1:] {
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
