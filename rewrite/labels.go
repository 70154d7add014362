package rewrite

// widenLabels moves the start of each label span (an expression the
// server labels with its text) back over the name a mask of the text moved
// right within the expression's own place (MAX  (a) read as "  MAX(a)",
// JSON_ARRAYAGG( read as " GROUP_CONCAT("): the characters before it that
// are blank in the masked text and part of the same word in the text the
// server reads. The server's label starts where the client's expression
// does.
func widenLabels(spans [][2]int, masked, text string) {
	if len(masked) != len(text) {
		return
	}
	for i, sp := range spans {
		start := sp[0]
		for start > 0 && masked[start-1] == ' ' && wordByte(text[start-1]) && (start == sp[0] && wordByte(text[start]) || start < sp[0]) {
			start--
		}
		spans[i][0] = start
	}
}

// wordByte reports whether c can be part of a bare name.
func wordByte(c byte) bool {
	return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
