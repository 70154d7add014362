package sessiontest

import (
	"context"
	"strconv"
	"time"
)

// lockArgs reads sql as SELECT fn(literal, …): the literals, false when
// one is NULL.
func lockArgs(sql, fn string) ([]string, bool) {
	toks, err := tokenize(sql)
	if err != nil {
		return nil, false
	}
	p := &parser{toks: toks}
	if !p.word("SELECT", fn) {
		return nil, false
	}
	lits, ok := p.literalList()
	if !ok || !p.end() {
		return nil, false
	}
	args := make([]string, len(lits))
	for i, l := range lits {
		if l == nil {
			return nil, false
		}
		args[i] = *l
	}
	return args, true
}

// getLock is GET_LOCK(name, timeout): taken at once when free or held by
// c (locks nest), else waited for up to timeout seconds.
func (u *Upstream) getLock(ctx context.Context, c *FakeSide, sql string) (result, error) {
	args, ok := lockArgs(sql, "GET_LOCK")
	if !ok || len(args) != 2 {
		return result{}, &UnknownError{SQL: sql}
	}
	name := args[0]
	n, _ := strconv.Atoi(args[1])
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
		if l := u.locks[name]; l == nil || l.owner == c {
			if l == nil {
				l = &userLock{owner: c}
				u.locks[name] = l
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
	args, ok := lockArgs(sql, "IS_USED_LOCK")
	if !ok || len(args) != 1 {
		return result{}, &UnknownError{SQL: sql}
	}
	name := args[0]
	if l := u.locks[name]; l != nil && !l.owner.closed {
		return rowsResult(Row("1")), nil
	}
	return rowsResult(Row(nil)), nil
}

// releaseLock is RELEASE_LOCK(name): 1 when c held it, 0 when another
// connection does, NULL when nobody does.
func (u *Upstream) releaseLock(c *FakeSide, sql string) (result, error) {
	args, ok := lockArgs(sql, "RELEASE_LOCK")
	if !ok || len(args) != 1 {
		return result{}, &UnknownError{SQL: sql}
	}
	name := args[0]
	l := u.locks[name]
	switch {
	case l == nil:
		return rowsResult(Row(nil)), nil
	case l.owner != c:
		return rowsResult(Row("0")), nil
	}
	if l.count--; l.count == 0 {
		delete(u.locks, name)
		close(u.lockFreed)
		u.lockFreed = make(chan struct{})
	}
	return rowsResult(Row("1")), nil
}
