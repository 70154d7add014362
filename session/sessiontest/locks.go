package sessiontest

import (
	"context"
	"strconv"
	"time"
)

// getLock is GET_LOCK(name, timeout): taken at once when free or held by
// c (locks nest), else waited for up to timeout seconds.
func (u *Upstream) getLock(ctx context.Context, c *FakeSide, sql string) (result, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return result{}, &UnknownError{SQL: sql}
	}
	p := &parser{toks: toks}
	if !p.word("SELECT", "GET_LOCK") || !p.punct("(") {
		return result{}, &UnknownError{SQL: sql}
	}
	name, ok1 := p.literal()
	ok2 := p.punct(",")
	secs, ok3 := p.literal()
	if !ok1 || !ok2 || !ok3 || name == nil || secs == nil || !p.punct(")") || !p.end() {
		return result{}, &UnknownError{SQL: sql}
	}
	n, _ := strconv.Atoi(*secs)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		u.mu.Lock()
		if c.closed {
			u.mu.Unlock()
			return result{}, ErrBroken
		}
		if l := u.locks[*name]; l == nil || l.owner == c {
			if l == nil {
				l = &userLock{owner: c}
				u.locks[*name] = l
			}
			l.count++
			u.mu.Unlock()
			return rowsResult(Row("1")), nil
		}
		freed := u.lockFreed
		u.mu.Unlock()
		if n <= 0 {
			return rowsResult(Row("0")), nil
		}
		if timer == nil {
			timer = time.NewTimer(time.Duration(n) * time.Second)
		}
		select {
		case <-freed:
		case <-timer.C:
			return rowsResult(Row("0")), nil
		case <-ctx.Done():
			return result{}, ctx.Err()
		}
	}
}

// usedLock is IS_USED_LOCK(name): the holder's connection number (1 here)
// when a connection holds it, NULL when none does.
func (u *Upstream) usedLock(sql string) (result, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return result{}, &UnknownError{SQL: sql}
	}
	p := &parser{toks: toks}
	if !p.word("SELECT", "IS_USED_LOCK") || !p.punct("(") {
		return result{}, &UnknownError{SQL: sql}
	}
	name, ok := p.literal()
	if !ok || name == nil || !p.punct(")") || !p.end() {
		return result{}, &UnknownError{SQL: sql}
	}
	if l := u.locks[*name]; l != nil && !l.owner.closed {
		return rowsResult(Row("1")), nil
	}
	return rowsResult(Row(nil)), nil
}

// releaseLock is RELEASE_LOCK(name): 1 when c held it, 0 when another
// connection does, NULL when nobody does.
func (u *Upstream) releaseLock(c *FakeSide, sql string) (result, error) {
	toks, err := tokenize(sql)
	if err != nil {
		return result{}, &UnknownError{SQL: sql}
	}
	p := &parser{toks: toks}
	if !p.word("SELECT", "RELEASE_LOCK") || !p.punct("(") {
		return result{}, &UnknownError{SQL: sql}
	}
	name, ok := p.literal()
	if !ok || name == nil || !p.punct(")") || !p.end() {
		return result{}, &UnknownError{SQL: sql}
	}
	l := u.locks[*name]
	switch {
	case l == nil:
		return rowsResult(Row(nil)), nil
	case l.owner != c:
		return rowsResult(Row("0")), nil
	}
	if l.count--; l.count == 0 {
		delete(u.locks, *name)
		close(u.lockFreed)
		u.lockFreed = make(chan struct{})
	}
	return rowsResult(Row("1")), nil
}
