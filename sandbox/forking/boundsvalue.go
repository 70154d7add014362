package forking

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/forker"
)

// typeArgs reads the numbers of a column type's parentheses: varchar(8)
// → [8], decimal(8,2) → [8 2].
var typeArgs = regexp.MustCompile(`^[a-z]+\((\d+)(?:,(\d+))?\)`)

// intRanges are the integer types' value ranges, signed and unsigned.
var intRanges = map[string]uint{"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "integer": 32, "bigint": 64}

// storesExactly says whether column c stores lit (an integer literal or a
// plain quoted ASCII string, as rewrite.Bounds gives them) as written,
// in every sql_mode: no rounding, truncation, padding, clamping or
// conversion that a lookup by lit would not find. When unsure, no.
func storesExactly(c forker.Column, lit string) bool {
	str := strings.HasPrefix(lit, "'")
	text := lit
	if str {
		text = strings.TrimSuffix(strings.TrimPrefix(lit, "'"), "'")
	}
	typ := strings.ToLower(c.Type)
	args := typeArgs.FindStringSubmatch(typ)
	n := func(i int) int {
		if args == nil || args[i] == "" {
			return -1
		}
		v, _ := strconv.Atoi(args[i])
		return v
	}
	switch c.DataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		return !str && intFits(text, intRanges[c.DataType], strings.Contains(typ, "unsigned"))
	case "decimal", "numeric":
		digits := strings.TrimPrefix(text, "-")
		return !str && n(1) > 0 && len(digits) <= n(1)-max(n(2), 0) && (digits == text || !strings.Contains(typ, "unsigned"))
	case "char", "varchar":
		return !strings.HasSuffix(text, " ") && n(1) >= 0 && len(text) <= n(1)
	case "tinytext", "text", "mediumtext", "longtext":
		return !strings.HasSuffix(text, " ") && len(text) <= 63
	case "varbinary":
		return n(1) >= 0 && len(text) <= n(1)
	case "binary":
		return len(text) == n(1) // shorter ones are padded with zero bytes
	}
	return false
}

// intFits says whether the decimal integer s fits an integer of bits bits.
func intFits(s string, bits uint, unsigned bool) bool {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok || bits == 0 {
		return false
	}
	lo, hi := new(big.Int), new(big.Int).Lsh(big.NewInt(1), bits)
	if unsigned {
		hi.Sub(hi, big.NewInt(1))
	} else {
		half := new(big.Int).Lsh(big.NewInt(1), bits-1)
		lo.Neg(half)
		hi.Sub(half, big.NewInt(1))
	}
	return v.Cmp(lo) >= 0 && v.Cmp(hi) <= 0
}
