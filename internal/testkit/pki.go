package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"time"
)

// PKI is a certificate authority for tests: its certificate, and the
// server certificates it issues. Keys are ECDSA P-256 unless RSA is set
// (some servers' and drivers' TLS stacks want RSA).
type PKI struct {
	CA    *x509.Certificate
	CAPEM []byte
	RSA   bool
	key   crypto.Signer
}

// Issued is a certificate a PKI issued, as parsed and as PEM, with its
// key's PEM (PKCS#1 for RSA, PKCS#8 otherwise).
type Issued struct {
	Leaf            *x509.Certificate
	CertPEM, KeyPEM []byte
}

// template is a certificate named cn, valid from an hour ago for a day,
// with a random 128-bit serial: distinct certificates never share one, so
// no client mistakes two for one.
func template(cn string) (*x509.Certificate, error) {
	sn, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"sqlfork tests"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
	}, nil
}

// NewPKI makes a CA named cn, valid from an hour ago for a day.
func NewPKI(cn string, useRSA bool) (*PKI, error) {
	p := &PKI{RSA: useRSA}
	key, err := p.newKey()
	if err != nil {
		return nil, err
	}
	tmpl, err := template(cn + " test CA")
	if err != nil {
		return nil, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("make the test CA: %w", err)
	}
	if p.CA, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	p.key, p.CAPEM = key, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	return p, nil
}

// Issue makes a server certificate named cn for the given addresses and
// names, signed by the CA.
func (p *PKI) Issue(cn string, ips []net.IP, dnsNames []string) (*Issued, error) {
	key, err := p.newKey()
	if err != nil {
		return nil, err
	}
	tmpl, err := template(cn)
	if err != nil {
		return nil, err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	tmpl.IPAddresses, tmpl.DNSNames = ips, dnsNames
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CA, key.Public(), p.key)
	if err != nil {
		return nil, fmt.Errorf("issue a test certificate: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	keyPEM, err := keyPEM(key)
	if err != nil {
		return nil, err
	}
	return &Issued{Leaf: leaf, CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), KeyPEM: keyPEM}, nil
}

// Loopback is Issue for 127.0.0.1 and localhost.
func (p *PKI) Loopback(cn string) (*Issued, error) {
	return p.Issue(cn, []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
}

func (p *PKI) newKey() (crypto.Signer, error) {
	if p.RSA {
		return rsa.GenerateKey(rand.Reader, 2048)
	}
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func keyPEM(key crypto.Signer) ([]byte, error) {
	if k, ok := key.(*rsa.PrivateKey); ok {
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), nil
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
