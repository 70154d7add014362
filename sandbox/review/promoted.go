package review

import (
	"context"

	"go.uber.org/zap"

	"github.com/sqlfork/sqlfork-proxy/sideconn"
)

// markPromoted records a committed promote in the sandbox's registry row:
// when it ran, and whether it was clean — the sandbox's diff is empty
// after it (everything it changed before the promote started is
// production's). A promote FOR some tables, one that left conflicts
// (THEIRS) or a table it could not rebase leaves changes, so the sandbox
// still has unpromoted changes (registry.Info.Changes).
func (p *promotion) markPromoted(ctx context.Context) {
	if p.outcome != "committed" {
		return
	}
	clean := false
	if r, err := p.m.Diff(ctx, p.sb, true, nil); err != nil {
		p.m.log.Warn("read the diff after a promote", zap.String("sandbox", p.sb.Name), zap.Error(err))
	} else {
		clean = len(r.Rows) == 0
	}
	err := p.m.reg.WithConn(ctx, func(c sideconn.Conn) error { return p.m.reg.RecordPromote(ctx, c, p.sb, p.started, clean) })
	if err != nil {
		p.m.log.Warn("record a promote in the sandbox's registry row", zap.String("sandbox", p.sb.Name), zap.Error(err))
	}
}
