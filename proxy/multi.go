package proxy

import (
	"encoding/binary"
	"strings"

	"github.com/sqlfork/sqlfork-proxy/wire"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	sandbox "github.com/sqlfork/sqlfork-proxy/session"
)

// sandboxPieces splits a multi-statement COM_QUERY that holds SANDBOX
// statements; nil means the input is not one.
func (s *session) sandboxPieces(sql string) []string {
	if s.caps&wire.CapMultiStatements == 0 || !strings.Contains(strings.ToUpper(sql), "SANDBOX") {
		return nil
	}
	pieces := rewrite.SplitStatements(sql, s.options())
	if len(pieces) < 2 {
		return nil
	}
	for _, p := range pieces {
		if rewrite.IsSandboxStatement(p) {
			return pieces
		}
	}
	return nil
}

// multiStatement runs a multi-statement input holding SANDBOX statements:
// each SANDBOX statement is answered by the proxy, each run of other
// statements goes upstream as one multi-statement, and the answers are
// joined into one response (SERVER_MORE_RESULTS_EXISTS between them).
// As on the server, the first error ends the input.
func (s *session) multiStatement(pieces []string) error {
	// Not recorded for a replay, whatever part of it runs.
	defer func() {
		if s.status&wire.StatusInTrans != 0 {
			s.tx.broken = true
		}
	}()
	var groups [][]string
	for _, p := range pieces {
		if rewrite.IsSandboxStatement(p) || len(groups) == 0 || rewrite.IsSandboxStatement(groups[len(groups)-1][0]) {
			groups = append(groups, []string{p})
			continue
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], p)
	}
	// The pieces were cut with the settings the input starts with; a
	// statement that changes how text is read must be the last one.
	for _, g := range groups[:len(groups)-1] {
		if !rewrite.IsSandboxStatement(g[0]) && s.sbx.ChangesLexing(strings.Join(g, ";\n"), s.options()) {
			return s.writeErr(clientError(s.sbx.LexingChangeRefused()))
		}
	}
	for i, g := range groups {
		more := i < len(groups)-1
		sql := strings.Join(g, ";\n")
		plan, err := s.sbx.Plan(s.ctx(), sql, s.options(), false)
		if err != nil {
			s.srv.countGuardrail(err)
			return s.writeErr(clientError(err))
		}
		if plan.Reply != nil {
			if err := s.writeReplyNoFlush(plan.Reply, more); err != nil {
				return err
			}
			continue
		}
		if plan.ProcessList != nil {
			if ok, err := s.processList(plan.ProcessList, more); err != nil {
				return err
			} else if !ok {
				break // an error ends the input
			}
			continue
		}
		if refused, err := s.beforeStatement(plan); err != nil {
			return err
		} else if refused != nil {
			s.sbx.Abandon(s.ctx(), plan)
			return s.writeErr(refused)
		}
		ok, err := s.runResequenced(plan, more)
		if err != nil {
			return err
		}
		if err := s.afterStatement(plan); err != nil {
			return err
		}
		if !ok {
			break // an error ends the input
		}
	}
	return s.flushClient()
}

func (s *session) flushClient() error {
	if err := s.cw.Flush(); err != nil {
		return &linkError{side: sideClient, write: true, err: err}
	}
	return nil
}

// runResequenced sends plan's text upstream and copies the answer to the
// client packet by packet with the client's sequence numbers, marking the
// last result "more results follow" when more is set. ok is false when the
// answer ended in an error.
func (s *session) runResequenced(plan *sandbox.Plan, more bool) (bool, error) {
	if _, err := wire.WritePacket(s.be.w, 0, append([]byte{wire.ComQuery}, plan.SQL...)); err != nil {
		return false, &linkError{side: sideUpstream, write: true, err: err}
	}
	if err := s.be.w.Flush(); err != nil {
		return false, &linkError{side: sideUpstream, write: true, err: err}
	}
	read := func() ([]byte, error) {
		p, _, err := wire.ReadPacket(s.be.r, nil, maxStatement)
		if err != nil {
			return nil, &linkError{side: sideUpstream, err: noEOF(err)}
		}
		return p, nil
	}
	// Past the max-rows guardrail the rest of the answer is read and
	// dropped (cut), and it ends with error 1226 in place of its last packet.
	var rows int64
	cut := false
	write := func(p []byte) error {
		if cut {
			return nil
		}
		s.h = packetHead{length: len(p), seq: s.seq}
		s.h.n = copy(s.h.prefix[:], p)
		var err error
		if s.seq, err = wire.WritePacket(s.cw, s.seq, p); err != nil {
			return &linkError{side: sideClient, write: true, err: err}
		}
		return nil
	}
	last := func(ok bool, p []byte) (bool, error) {
		if cut {
			cut = false
			s.srv.m.GuardrailRefusals.WithLabelValues(sandbox.GuardMaxRows).Inc()
			return false, write(wire.AppendErr(nil, clientError(s.sbx.RowCapError(s.rowCap))))
		}
		return ok, write(p)
	}
	// setMore adds SERVER_MORE_RESULTS_EXISTS to a final OK or EOF.
	setMore := func(p []byte, at int) {
		st := binary.LittleEndian.Uint16(p[at:])
		s.status = st
		if more && st&wire.StatusMoreResults == 0 {
			binary.LittleEndian.PutUint16(p[at:], st|wire.StatusMoreResults)
		}
	}
	for {
		p, err := read()
		if err != nil {
			return false, err
		}
		switch {
		case len(p) > 0 && p[0] == wire.ErrHeader:
			e := wire.ParseErr(p)
			e.Message = s.sbx.Unmap(e.Message)
			return last(false, wire.AppendErr(nil, e))
		case len(p) > 0 && p[0] == wire.OKHeader:
			st, ok := wire.OKStatus(p)
			if !ok {
				return false, s.malformed("OK packet")
			}
			if st&wire.StatusMoreResults == 0 {
				_, n1, _ := wire.LenEnc(p[1:])
				_, n2, _ := wire.LenEnc(p[1+n1:])
				setMore(p, 1+n1+n2)
				return last(true, p)
			}
			if err := write(p); err != nil {
				return false, err
			}
			continue
		case len(p) > 0 && p[0] == wire.LocalInfileHeader:
			return false, &linkError{side: sideUpstream, err: mysql.ErrMalformPacket}
		}
		cols, _, ok := wire.LenEnc(p)
		if !ok || cols == 0 {
			return false, s.malformed("column count")
		}
		rows = 0
		if err := write(p); err != nil {
			return false, err
		}
		for i := uint64(0); i <= cols; i++ { // definitions and their EOF
			p, err := read()
			if err != nil {
				return false, err
			}
			if err := write(p); err != nil {
				return false, err
			}
		}
		for {
			p, err := read()
			if err != nil {
				return false, err
			}
			if len(p) > 0 && p[0] == wire.ErrHeader {
				return last(false, p)
			}
			if len(p) > 0 && p[0] == wire.EOFHeader && len(p) < wire.MaxEOFLength {
				st, _ := wire.EOFStatus(p)
				if st&wire.StatusMoreResults == 0 {
					setMore(p, 3)
					return last(true, p)
				}
				if err := write(p); err != nil {
					return false, err
				}
				break
			}
			if rows++; s.rowCap > 0 && rows > s.rowCap {
				cut = true
			}
			if err := write(p); err != nil {
				return false, err
			}
		}
	}
}
