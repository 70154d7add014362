package session

import (
	"fmt"

	"github.com/sqlfork/sqlfork-proxy/rewrite"
	"go.uber.org/zap"
)

// auditExecution records an execution of the prepared statement planned
// as p, when it writes the sandbox.
func (s *Session) auditExecution(p *Plan) {
	if p.audited != "" && s.sb != nil {
		s.audit(p.analysis, p.audited, true)
	}
}

// audit logs a write to the sandbox (one per statement run or prepared
// statement executed).
func (s *Session) audit(a *rewrite.Analysis, sql string, prepared bool) {
	var logical, phys []string
	for _, st := range a.Statements {
		for _, t := range st.Writes {
			logical = append(logical, t.String())
			if e, ok := s.sb.Resolve(s.m.names.Key(t)); ok {
				phys = append(phys, e.Phys.String())
			}
		}
	}
	s.log.Info("sandbox write", zap.String("audit", "write"), zap.String("sandbox", s.sb.Name), zap.String("user", s.user),
		zap.Uint64("thread_id", s.connID), zap.Strings("tables", logical), zap.Strings("physical", phys), zap.Int("bytes", len(sql)),
		zap.Bool("prepared", prepared))
}

// where names the session's binding for messages.
func (s *Session) where() string {
	if s.sb == nil {
		return "production (no sandbox)"
	}
	return "sandbox " + fmt.Sprintf("%q", s.sb.Name)
}
