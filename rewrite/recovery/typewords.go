package recovery

// typeWords are MariaDB's column types the parser does not reserve, which
// the lexer can take for names.
var typeWords = map[string]bool{"JSON": true, "INET4": true, "INET6": true, "UUID": true, "TEXT": true, "DATE": true,
	"TIME": true, "TIMESTAMP": true, "DATETIME": true, "YEAR": true, "BIT": true, "BOOL": true, "BOOLEAN": true,
	"ENUM": true, "SERIAL": true, "NATIONAL": true, "NCHAR": true, "FIXED": true}

// IsTypeWord reports whether w (upper case) is one of typeWords.
func IsTypeWord(w string) bool { return typeWords[w] }
