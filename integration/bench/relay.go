package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
)

const relayReadyPrefix = "relay listening on "

// runRelay is the body of the `-relay LISTEN,UPSTREAM` mode: a plain TCP
// byte relay, the floor cost of any userspace hop between client and
// MariaDB. It prints the address it listens on and serves until killed.
func runRelay(spec string) error {
	listen, upstream, ok := strings.Cut(spec, ",")
	if !ok || listen == "" || upstream == "" {
		return fmt.Errorf("-relay wants LISTEN,UPSTREAM, got %q", spec)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	fmt.Printf("%s%s\n", relayReadyPrefix, ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		go relayConn(c, upstream)
	}
}

// relayConn copies bytes both ways between c and a fresh upstream
// connection, closing both as soon as either direction ends. io.Copy
// between two *net.TCPConn uses splice(2) on Linux.
func relayConn(c net.Conn, upstream string) {
	u, err := net.DialTimeout("tcp", upstream, 10*time.Second)
	if err != nil {
		c.Close()
		return
	}
	var once sync.Once
	closeBoth := func() { c.Close(); u.Close() }
	go func() {
		_, _ = io.Copy(u, c)
		once.Do(closeBoth)
	}()
	_, _ = io.Copy(c, u)
	once.Do(closeBoth)
}

// startRelay re-executes the harness binary in relay mode, as a separate
// process like the proxy, and returns it with the address it listens on.
func startRelay(upstream string) (*child, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", err
	}
	cmd := exec.Command(exe, "-relay", "127.0.0.1:0,"+upstream)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	c, err := startChild("relay", cmd)
	if err != nil {
		return nil, "", err
	}
	type res struct {
		line string
		err  error
	}
	ch := make(chan res, 1)
	go func() {
		br := bufio.NewReader(out)
		line, err := br.ReadString('\n')
		ch <- res{line, err}
		_, _ = io.Copy(io.Discard, br) // never let the child block on stdout
	}()
	select {
	case r := <-ch:
		if addr, ok := strings.CutPrefix(strings.TrimSpace(r.line), relayReadyPrefix); ok {
			return c, addr, nil
		}
		c.stop(time.Second)
		return nil, "", fmt.Errorf("relay did not start (read %q: %v)", r.line, r.err)
	case <-time.After(15 * time.Second):
		c.stop(time.Second)
		return nil, "", errors.New("relay did not report its address within 15s")
	}
}
