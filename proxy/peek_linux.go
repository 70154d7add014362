//go:build linux

package proxy

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// peek looks at the socket under c with a poll that does not wait: whether
// the peer has closed it (POLLRDHUP: its FIN arrived, even behind unread
// bytes), or it has bytes to read. It neither reads nor takes the
// connection's read lock, so it does not wait behind a reader blocked on c.
func peek(c net.Conn) sockState {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return sockUnknown
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return sockUnknown
	}
	st := sockUnknown
	cerr := rc.Control(func(fd uintptr) {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		n, err := unix.Poll(fds, 0)
		switch ev := fds[0].Revents; {
		case err != nil:
		case n == 0:
			st = sockQuiet
		case ev&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0:
			st = sockClosed
		case ev&unix.POLLIN != 0:
			st = sockData
		default:
			st = sockQuiet
		}
	})
	if cerr != nil {
		return sockClosed // the descriptor is closed
	}
	return st
}
