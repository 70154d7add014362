package session

import (
	"context"
	"sync"
)

// gateTries bounds how often a statement is planned again because the
// sandbox's tables moved between its plan and its send.
const gateTries = 4

// gated is Run's gate step: p passes its sandbox's gate
// (registry.Sandbox.Enter) — leave, called once the statement's answer is
// relayed, lets a SANDBOX RESET waiting for it go on. A plan whose
// sandbox's tables moved since it was made (a reset took a fork it names)
// is made again through Run's plan, fork and before steps, and what
// planning made for it is kept for its undo.
func (s *Session) gated(ctx context.Context, in Input, p *Plan, replanned bool) (_ *Plan, _ bool, leave func(), err error) {
	for try := 0; ; try++ {
		sb := s.sb
		if sb == nil || p.version.sb != sb {
			return p, replanned, func() {}, nil
		}
		if leave, err = sb.Enter(ctx); err != nil {
			return p, replanned, nil, err
		}
		if p.version.ver == sb.SnapshotVersion() || try == gateTries {
			used, err := s.copiedUp(ctx, p)
			if err != nil {
				leave()
				s.abandon(ctx, p)
				return p, replanned, nil, err
			}
			var once sync.Once
			out := leave // leave is the result too: the closure must not call itself
			return p, replanned, func() { once.Do(func() { used(); out() }) }, nil
		}
		leave()
		np, rp, err := s.planned(ctx, in, p.counts)
		if err == nil && !np.Answered() {
			err = s.before(ctx, np)
		}
		if err != nil {
			s.abandon(ctx, p)
			return p, replanned, nil, err
		}
		np.undoOnError = append(p.undoOnError, np.undoOnError...)
		p, replanned = np, rp || replanned
	}
}
