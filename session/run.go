package session

import (
	"context"
	"time"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// Input is one statement of the client's, as the proxy hands it to Run.
type Input struct {
	// Text is the client's text (COM_QUERY, COM_STMT_PREPARE); Prepare
	// says it is to be prepared (COM_STMT_PREPARE), not run.
	Text    string
	Prepare bool
	// Prepared is, for an execution of a prepared statement
	// (COM_STMT_EXECUTE), the plan its statement was prepared with.
	Prepared *Plan
	// Params are the execution's parameter values, when the proxy read
	// them (nil otherwise): a lazy fork still filling has the rows they
	// pin copied up (filling.go).
	Params []wire.Param
	// Part: the statement is one part of an input Split cut, which is not
	// recorded for a replay.
	Part bool
}

// Exchange is the client's and the upstream's side of one statement: the
// proxy's, which moves packets. Run calls it in the statement's order;
// nothing else does.
type Exchange interface {
	// Refuse answers err (a refusal, or the server's error) to the client
	// in place of the statement's answer. p is the plan when there is one
	// (nil when planning failed). It returns an error only when the
	// connection broke (err itself, when it is a broken connection's).
	Refuse(p *Plan, err error) error
	// Answer writes the session's own answer, p.Reply, to the client.
	Answer(p *Plan) error
	// Send sends p upstream: p.SQL, or the execution of a prepared
	// statement, prepared again as p.SQL first when replanned. Its error
	// is for the client (the server's) or a broken connection's.
	Send(ctx context.Context, p *Plan, replanned bool) error
	// Relay relays the upstream's answer to the client, names told back by
	// rl (nil: none to tell back), and says what the answer held: Failed,
	// Code, OKs, Payload, Prepared and Unreplayable (Run sets the rest).
	Relay(ctx context.Context, p *Plan, rl *Relabel) (*Outcome, error)
}

// Run takes one statement through its steps, in order, and owns the undo
// of a failed step:
//
//	plan    refresh the session's binding for the text (a transparent session's sandbox, the
//	        registry sync, a sandbox discarded elsewhere), then decide, which changes nothing: its
//	        text's plan, or an execution's made anew when it no longer holds
//	answer  the session's own answer, when the plan is one, made (a SANDBOX statement runs here): done
//	fork    in a sandbox, fork what it writes and rewrite it to the forks (forkPlanned)
//	before  end and restart or replay the transaction past a fork
//	gate    pass the sandbox's gate (gated): a SANDBOX RESET waits for the statements past it; a plan a
//	        reset made stale meanwhile is made again (plan, fork, before)
//	send    x.Send; when it fails the statement never ran, and what planning made for it goes (abandon)
//	relay   x.Relay, the plan telling names back
//	after   record it for a replay, track the transaction, read settings back
//
// A failed plan, answer, fork, before or send is answered with x.Refuse. ok is
// false when the client got an error for the statement (which ends a
// multi-statement input); err is an error the client did not get: the
// connection broke, or bookkeeping after the answer failed.
func (s *Session) Run(ctx context.Context, in Input, x Exchange) (ok bool, err error) {
	start := time.Now()
	counts := s.takeCounts(in)
	var p *Plan
	defer func() { s.carryCounts(p, counts) }()
	p, replanned, err := s.planned(ctx, in, counts)
	if in.Prepared == nil && s.m != nil {
		s.m.observer().Planned(time.Since(start))
	}
	if err != nil {
		// A text refused has no plan; an execution keeps its statement's.
		return false, x.Refuse(in.Prepared, err)
	}
	if p.Answered() {
		if err := s.answered(ctx, p); err != nil {
			return false, x.Refuse(in.Prepared, err)
		}
		return true, x.Answer(p)
	}
	if err := s.before(ctx, p); err != nil {
		return false, x.Refuse(p, err)
	}
	p, replanned, leave, err := s.gated(ctx, in, p, replanned)
	if err != nil {
		return false, x.Refuse(p, err)
	}
	if err := x.Send(ctx, p, replanned); err != nil {
		leave()
		s.abandon(ctx, p)
		return false, x.Refuse(p, err)
	}
	o, err := x.Relay(ctx, p, s.relabel(p))
	leave()
	if err != nil {
		return false, err
	}
	o.Prepare, o.Execution, o.Part = in.Prepare, in.Prepared != nil, in.Part
	if err := s.after(ctx, p, o); err != nil {
		return false, err
	}
	return !o.Failed, nil
}

// planned is in's plan through Run's plan and fork steps (no fork for
// the session's own answer); counts, when set, are ROW_COUNT() and
// FOUND_ROWS() for its first statement (insertid.go).
func (s *Session) planned(ctx context.Context, in Input, counts *lastCounts) (p *Plan, replanned bool, err error) {
	p, replanned, err = s.planInput(ctx, in)
	if err == nil && !p.Answered() {
		p.counts = counts
		err = s.fork(ctx, in, p)
	}
	if err == nil && in.Prepared != nil && !p.Answered() {
		err = s.fillForExecution(ctx, p, in.Params)
	}
	return p, replanned, err
}

// answered is Run's answer step: the session's own answer made (a SANDBOX
// statement run, SHOW PROCESSLIST or WARNINGS read), p.Reply.
func (s *Session) answered(ctx context.Context, p *Plan) error {
	if p.answer == nil {
		return nil
	}
	r, err := p.answer(ctx)
	if err != nil {
		return err
	}
	p.Reply, p.answer = r, nil
	if len(r.Warnings) > 0 {
		s.refused = r.Warnings // what SHOW WARNINGS lists next
	}
	return nil
}

// planInput is in's plan as decided: its text's, or for an execution its
// prepared statement's, made anew (replanned) when it no longer holds.
func (s *Session) planInput(ctx context.Context, in Input) (p *Plan, replanned bool, err error) {
	if in.Prepared != nil {
		np, err := s.revalidate(ctx, in.Prepared)
		if err != nil || np == nil {
			return in.Prepared, false, err
		}
		return np, true, nil
	}
	p, err = s.planText(ctx, in.Text, in.Prepare)
	return p, false, err
}

// fork is Run's fork step (forkPlanned). A text's refusal then is read as
// planning's are (refusedText); a text planned whole has the SQL PREPAREs
// it holds noted.
func (s *Session) fork(ctx context.Context, in Input, p *Plan) error {
	f := p.fork
	err := s.forkPlanned(ctx, p)
	switch {
	case in.Prepared != nil:
		return err
	case err == nil:
		s.notePrepares(p.analysis)
		return nil
	case f == nil:
		return err
	}
	return s.refusedText(ctx, in.Text, f.opts, in.Prepare, err)
}
