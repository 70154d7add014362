package testkit

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"
)

func TestPKI(t *testing.T) {
	for _, useRSA := range []bool{false, true} {
		p, err := NewPKI("kit", useRSA)
		if err != nil {
			t.Fatal(err)
		}
		a, err := p.Loopback("server")
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Loopback("server")
		if err != nil {
			t.Fatal(err)
		}
		if a.Leaf.SerialNumber.Cmp(b.Leaf.SerialNumber) == 0 {
			t.Error("two certificates share a serial number")
		}
		if _, err := tls.X509KeyPair(a.CertPEM, a.KeyPEM); err != nil {
			t.Errorf("rsa %v: the issued pair does not load: %v", useRSA, err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(p.CAPEM)
		for _, name := range []string{"127.0.0.1", "localhost"} {
			if _, err := a.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
				t.Errorf("rsa %v: %s does not verify: %v", useRSA, name, err)
			}
		}
		other, _ := p.Issue("x", []net.IP{net.ParseIP("10.0.0.1")}, nil)
		if _, err := other.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "localhost"}); err == nil {
			t.Error("a certificate for another address verifies for localhost")
		}
	}
}

func TestPacketPayload(t *testing.T) {
	if got := Packet(3, []byte("ab")); string(got) != "\x02\x00\x00\x03ab" {
		t.Errorf("Packet = %q", got)
	}
	a, b := Payload(64, 1), Payload(64, 2)
	if string(a) == string(b) || string(a) != string(Payload(64, 1)) || len(a) != 64 {
		t.Error("Payload is not deterministic per seed and distinct across seeds")
	}
}

func TestEventually(t *testing.T) {
	n := 0
	Eventually(t, "three polls", func() bool { n++; return n == 3 })
	ft := &fakeTB{TB: t}
	func() {
		defer func() { _ = recover() }()
		EventuallyWithin(ft, "never", 5*time.Millisecond, func() bool { return false })
	}()
	if !ft.failed {
		t.Error("a condition that never holds did not fail the test")
	}
}

func TestWantError(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
		fail bool
	}{
		{nil, "", false},
		{errors.New("bad max-rows"), "max-rows", false},
		{errors.New("bad max-rows"), "", true},
		{nil, "max-rows", true},
		{errors.New("bad lease"), "max-rows", true},
	} {
		ft := &fakeTB{TB: t}
		WantError(ft, "case", c.err, c.want)
		if ft.failed != c.fail {
			t.Errorf("WantError(%v, %q) failed %v, want %v", c.err, c.want, ft.failed, c.fail)
		}
	}
}

func TestWantMarked(t *testing.T) {
	mark, other := errors.New("not found"), errors.New("conflict")
	orig := errors.New("no such sandbox")
	marks := []error{mark, other}
	for _, c := range []struct {
		name string
		got  error
		want string
		mark error
		fail bool
	}{
		{"marked", fmt.Errorf("%w: %w", mark, orig), "not found: no such sandbox", mark, false},
		{"left as it is", orig, "no such sandbox", nil, false},
		{"wrong text", fmt.Errorf("%w: %w", mark, orig), "no such sandbox", mark, true},
		{"chain lost", fmt.Errorf("%w: %v", mark, orig), "not found: no such sandbox", mark, true},
		{"wrong mark", fmt.Errorf("%w: %w", other, orig), "conflict: no such sandbox", mark, true},
		{"unmarked", orig, "no such sandbox", mark, true},
		{"nil", nil, "no such sandbox", nil, true},
	} {
		ft := &fakeTB{TB: t}
		WantMarked(ft, c.got, orig, c.want, marks, c.mark)
		if ft.failed != c.fail {
			t.Errorf("%s: WantMarked failed %v, want %v", c.name, ft.failed, c.fail)
		}
	}
}

// fakeTB records Fatalf and Errorf instead of stopping the test.
type fakeTB struct {
	testing.TB
	failed bool
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Errorf(string, ...any) { f.failed = true }
func (f *fakeTB) Fatalf(string, ...any) {
	f.failed = true
	panic("fatal")
}
