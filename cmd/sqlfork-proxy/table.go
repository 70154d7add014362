package main

import (
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// table lays out tab-separated cells in aligned columns as text/tabwriter
// does with padding 2 and spaces (a column as wide as its widest cell
// among the consecutive lines that have it, plus two; the last cell of a
// line as it is), but measures a cell without the SGR escape sequences a
// painter adds, which tabwriter would count as text.
type table struct {
	w   io.Writer
	buf strings.Builder
}

// tablePadding is the space between two columns.
const tablePadding = 2

func newTable(w io.Writer) *table { return &table{w: w} }

// Write adds lines, or part of one, to the table.
func (t *table) Write(p []byte) (int, error) { return t.buf.Write(p) }

// Flush writes the table laid out and empties it.
func (t *table) Flush() error {
	text := t.buf.String()
	t.buf.Reset()
	ended := strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if text == "" {
		return nil
	}
	cells := make([][]string, len(lines))
	for i, l := range lines {
		cells[i] = strings.Split(l, "\t")
	}
	widths := columnWidths(cells)
	var b strings.Builder
	for i, row := range cells {
		for j, c := range row[:len(row)-1] {
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i][j]-visibleWidth(c)))
		}
		b.WriteString(row[len(row)-1])
		if i < len(cells)-1 || ended {
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

// columnWidths are the widths of each line's cells but its last: the
// widest of column j over the run of consecutive lines that have a cell
// j before their last, plus the padding.
func columnWidths(cells [][]string) [][]int {
	widths := make([][]int, len(cells))
	for j := 0; ; j++ {
		found := false
		for i := 0; i < len(cells); {
			if len(cells[i])-1 <= j {
				i++
				continue
			}
			found = true
			end, w := i, 0
			for ; end < len(cells) && len(cells[end])-1 > j; end++ {
				w = max(w, visibleWidth(cells[end][j]))
			}
			for ; i < end; i++ {
				widths[i] = append(widths[i], w+tablePadding)
			}
		}
		if !found {
			return widths
		}
	}
}

// sgr matches an SGR escape sequence, as painter writes them.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// visibleWidth is how many characters of s a terminal shows: its runes
// but for SGR escape sequences.
func visibleWidth(s string) int { return utf8.RuneCountInString(sgr.ReplaceAllString(s, "")) }
