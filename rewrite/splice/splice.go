// Package splice puts replacements into a client's text and maps offsets
// between the text the client sent and the text the proxy sends.
package splice

import (
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/refusal"
	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Rename is one name replaced in the text.
type Rename struct {
	From, To string
}

// Splice is one replacement: the client's text[Start:End] became the sent
// text[SentStart:SentEnd].
type Splice struct {
	Start, End, SentStart, SentEnd int
}

// Sent is the offset in the text sent of the offset off of the client's
// text (see Original); an offset inside a replaced span maps to the start
// of its replacement.
func Sent(splices []Splice, off int) int {
	shift := 0
	for _, sp := range splices {
		switch {
		case off <= sp.Start:
			return off + shift
		case off < sp.End:
			return sp.SentStart
		}
		shift = sp.SentEnd - sp.End
	}
	return off + shift
}

// Original is the offset in the client's text of the offset off of the
// text sent (after splices); an offset inside a replacement is its start.
func Original(splices []Splice, off int) int {
	shift := 0
	for _, sp := range splices {
		switch {
		case off < sp.SentStart:
			return off - shift
		case off < sp.SentEnd:
			return sp.Start
		}
		shift = sp.SentEnd - sp.End
	}
	return off - shift
}

// Replacement is text to put in place of src[Start:End].
type Replacement struct {
	Start, End int
	Text       string
	// Renames are the names replaced inside Text, a PREPARE's or EXECUTE
	// IMMEDIATE's literal rewritten (its rewrite.Result.Renames): the server
	// labels the columns of the statement it holds, and quotes it in its
	// errors, with those.
	Renames []Rename
}

// Overlapping refuses replacements that overlap (two rewrites of one
// place): the engine's own mistake, never to reach the text sent.
// It sorts reps by position, as Apply does (insertion sort: lists are
// short).
func Overlapping(reps []Replacement) error {
	for i := 1; i < len(reps); i++ {
		for j := i; j > 0 && reps[j].Start < reps[j-1].Start; j-- {
			reps[j], reps[j-1] = reps[j-1], reps[j]
		}
	}
	for i := 1; i < len(reps); i++ {
		if reps[i].Start < reps[i-1].End {
			return refusal.Refuse(wire.ErUnknown, "the proxy would rewrite one part of this statement twice, so it cannot confine it "+
				"to the sandbox; simplify the statement")
		}
	}
	return nil
}

// Apply splices reps, sorted by position, into src: the text to send, the
// names replaced and where the text changed.
func Apply(src string, reps []Replacement) (string, []Rename, []Splice) {
	for i := 1; i < len(reps); i++ {
		for j := i; j > 0 && reps[j].Start < reps[j-1].Start; j-- {
			reps[j], reps[j-1] = reps[j-1], reps[j]
		}
	}
	var b strings.Builder
	b.Grow(len(src) + 32*len(reps))
	last := 0
	renames := make([]Rename, 0, len(reps))
	splices := make([]Splice, 0, len(reps))
	for _, rp := range reps {
		b.WriteString(src[last:rp.Start])
		at := b.Len()
		b.WriteString(rp.Text)
		last = rp.End
		splices = append(splices, Splice{Start: rp.Start, End: rp.End, SentStart: at, SentEnd: b.Len()})
		if from := src[rp.Start:rp.End]; from != "" && from[0] != '\'' && from[0] != '"' { // not a PREPARE literal
			renames = append(renames, Rename{From: from, To: rp.Text})
		}
		renames = append(renames, rp.Renames...)
	}
	b.WriteString(src[last:])
	return b.String(), renames, splices
}
