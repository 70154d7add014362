package ident

import (
	"slices"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/rewrite/collect"
	"github.com/sqlfork/sqlfork-proxy/rewrite/lexer"
)

// Scratch holds the reusable buffers of binding the names a parsed
// statement references to their places in its text, by counting.
type Scratch struct {
	// Toks and Chains are the statement's tokens and identifier chains.
	Toks   []lexer.Token
	Chains []Chain
	// tableNames are the lower-cased names of table references.
	tableNames map[string]bool
	// Names maps each lower-cased referenced name to its index in counts.
	Names map[string]int32
	// lens and firsts are bit sets of the names' lengths (mod 64) and
	// first bytes: a token matching neither needs no map lookup.
	lens   uint64
	firsts [4]uint64
	counts []nameCount
	refs   []collect.Ref
	occs   []occurrence
	wants  []keyed
	found  []keyed
	pairs  []Pairing
}

// nameCount is how often a referenced name must and does occur in the text.
type nameCount struct {
	name      string
	want, got int
}

// keyed is a reference or an occurrence under the key that pairs them.
type keyed struct {
	role   collect.RefKind
	schema string // lower case
	name   string // lower case
	idx    int    // into the collector's refs or the occurrences
}

// compareKeyed orders keyed by role, schema, then name.
func compareKeyed(x, y keyed) int {
	if x.role != y.role {
		return int(x.role) - int(y.role)
	}
	if c := strings.Compare(x.schema, y.schema); c != 0 {
		return c
	}
	return strings.Compare(x.name, y.name)
}

// Reset empties sc for a new statement, keeping its memory.
func (sc *Scratch) Reset() {
	if sc.tableNames == nil {
		sc.tableNames, sc.Names = map[string]bool{}, map[string]int32{}
	}
	clear(sc.tableNames)
	clear(sc.Names)
	sc.lens, sc.firsts = 0, [4]uint64{}
	sc.counts, sc.occs, sc.wants, sc.found = sc.counts[:0], sc.occs[:0], sc.wants[:0], sc.found[:0]
	clear(sc.refs) // drop references to the last input's strings
	sc.refs = sc.refs[:0]
}

// occurrence is one token spelled like a referenced name, with the role its
// place in a chain allows.
type occurrence struct {
	name  int32 // index into scratch.counts
	chain int
	part  int
	role  collect.RefKind
	// roleOK is false where the position cannot hold a table reference
	// (a database part, a column part).
	roleOK bool
	schema string // the database part before it, for table/qualifier roles
}

// NamesThatMatter are c's references to place (tables, qualifiers,
// DELETE/FOR UPDATE targets), each name counted in sc: a name used only
// as an alias is never renamed, so its qualifiers and targets need no
// place in the text.
func (sc *Scratch) NamesThatMatter(c *collect.Collector) []collect.Ref {
	for _, r := range c.Refs {
		if r.Kind == collect.RefTable {
			sc.tableNames[strings.ToLower(r.Name)] = true
		}
	}
	aliasOnly := func(r collect.Ref) bool {
		if r.Kind == collect.RefTable || r.Schema != "" || len(c.Aliases) == 0 {
			return false
		}
		n := strings.ToLower(r.Name)
		return c.Aliases[n] && !sc.tableNames[n]
	}
	refs := c.Refs
	for i, r := range c.Refs {
		if aliasOnly(r) { // copy only when something is dropped
			refs = append(sc.refs, c.Refs[:i]...)
			for _, r := range c.Refs[i:] {
				if !aliasOnly(r) {
					refs = append(refs, r)
				}
			}
			sc.refs = refs
			break
		}
	}
	for _, r := range refs {
		n := strings.ToLower(r.Name)
		i, ok := sc.Names[n]
		if !ok {
			i = int32(len(sc.counts))
			sc.Names[n] = i
			sc.counts = append(sc.counts, nameCount{name: n})
			sc.lens |= 1 << (len(n) & 63)
			if n != "" {
				sc.firsts[n[0]>>6] |= 1 << (n[0] & 63)
			}
		}
		sc.counts[i].want++
	}
	return refs
}

// Occurrences finds, in every chain of names in text, the parts spelled
// like a name that matters, counts them and notes each with its role.
func (sc *Scratch) Occurrences(text string) {
	toks := sc.Toks
	for ci, ch := range sc.Chains {
		for pi := 0; pi < ch.N; pi++ {
			ti := ch.Tok(pi)
			var buf [64]byte
			w, ok := LowerInto(&buf, lexer.IdentText(text, toks[ti]))
			if !ok {
				w = []byte(strings.ToLower(lexer.IdentText(text, toks[ti])))
			}
			if sc.lens&(1<<(len(w)&63)) == 0 || len(w) > 0 && sc.firsts[w[0]>>6]&(1<<(w[0]&63)) == 0 {
				continue // no referenced name has this length or first byte
			}
			ni, ok := sc.Names[string(w)]
			if !ok {
				continue
			}
			sc.counts[ni].got++
			o := occurrence{name: ni, chain: ci, part: pi}
			o.role, o.roleOK, o.schema = RoleAt(text, toks, ch, pi)
			sc.occs = append(sc.occs, o)
		}
	}
}

// Pairing is a reference of the collector's (ref) and the part of a
// chain that names it in the text.
type Pairing struct{ Ref, Chain, Part int }

// Pair pairs c's references with the occurrences found, when counting
// tells them apart: every name occurs as often as it is referenced, in a
// place its role allows, and references and occurrences of the same
// (role, schema, name) pair up in order.
func (sc *Scratch) Pair(c *collect.Collector) ([]Pairing, bool) {
	for _, nc := range sc.counts {
		if nc.got != nc.want {
			return nil, false
		}
	}
	if len(sc.occs) != len(c.Refs) {
		return nil, false
	}
	for _, o := range sc.occs {
		if !o.roleOK {
			return nil, false
		}
		n := sc.counts[o.name].name
		if o.role == collect.RefTable && o.schema == "" && (c.Aliases[n] || c.CTEs[n]) {
			// Could be the alias/CTE definition or a reference: only
			// the marker parse can tell which token is which.
			return nil, false
		}
	}
	// Pair references with occurrences of the same (role, schema, name),
	// in order: sort both by that key, stably, and match them one to one.
	for i, r := range c.Refs {
		role := r.Kind
		if role == collect.RefTarget {
			role = collect.RefTable
		}
		sc.wants = append(sc.wants, keyed{role: role, schema: strings.ToLower(r.Schema), name: strings.ToLower(r.Name), idx: i})
	}
	for i, o := range sc.occs {
		sc.found = append(sc.found, keyed{role: o.role, schema: strings.ToLower(o.schema), name: sc.counts[o.name].name, idx: i})
	}
	slices.SortStableFunc(sc.wants, compareKeyed)
	slices.SortStableFunc(sc.found, compareKeyed)
	for i, w := range sc.wants {
		if compareKeyed(w, sc.found[i]) != 0 {
			return nil, false
		}
	}
	sc.pairs = sc.pairs[:0]
	for i, w := range sc.wants {
		o := sc.occs[sc.found[i].idx]
		sc.pairs = append(sc.pairs, Pairing{Ref: w.idx, Chain: o.chain, Part: o.part})
	}
	return sc.pairs, true
}

// Empty reports whether no reference needs a place in the text.
func (sc *Scratch) Empty() bool { return len(sc.counts) == 0 }

// Definitions counts, for the names referenced, their alias and CTE
// definitions in text: occurrences too, with no reference of their own.
func (sc *Scratch) Definitions(text string, c *collect.Collector) {
	for i := range sc.counts {
		n := sc.counts[i].name
		if c.Aliases[n] {
			sc.counts[i].want += AliasDefs(text, sc.Toks, sc.Chains, n)
		}
		if c.CTEs[n] {
			sc.counts[i].want++
		}
	}
}
