package proxy

import (
	"maps"
	"slices"
	"testing"

	"github.com/sqlfork/sqlfork-proxy/wire"
)

// TestUserThreads: the process list and KILL find a proxy user's live
// sessions only, and a session handed over by COM_CHANGE_USER (setUser)
// under its new user.
func TestUserThreads(t *testing.T) {
	s := &Server{conns: map[*connState]struct{}{}}
	add := func(user string, id uint32) *connState {
		c := &connState{}
		c.attach(&backend{greeting: &wire.Greeting{ConnID: id}}, user, id|1<<31)
		s.conns[c] = struct{}{}
		return c
	}
	add("alice", 10)
	add("alice", 11)
	handed := add("alice", 12)
	add("bob", 20)
	s.conns[&connState{user: "alice"}] = struct{}{} // logging in: no upstream yet
	ids := func(user string) []uint32 { return slices.Sorted(maps.Keys(s.Threads(user))) }
	if got := ids("alice"); !slices.Equal(got, []uint32{10, 11, 12}) {
		t.Fatalf("alice: %v", got)
	}
	handed.setUser("bob")
	if got, bob := ids("alice"), ids("bob"); !slices.Equal(got, []uint32{10, 11}) || !slices.Equal(bob, []uint32{12, 20}) {
		t.Fatalf("after COM_CHANGE_USER: alice %v, bob %v", got, bob)
	}
	if up, ok := s.KillTarget("alice", 12); ok {
		t.Fatalf("alice can still kill the connection she handed to bob (upstream %d)", up)
	}
	if up, ok := s.KillTarget("bob", 12|1<<31); !ok || up != 12 {
		t.Fatalf("bob cannot kill his connection by its greeting id: %d %v", up, ok)
	}
	if got := ids("carol"); len(got) != 0 {
		t.Fatalf("carol: %v", got)
	}
}
