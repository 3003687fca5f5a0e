// Package testcert makes a throwaway certificate authority and a server
// certificate it signed, for tests of TLS listeners on loopback: nothing here
// is fit for anything else.
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is a CA and a leaf it signed for 127.0.0.1, ::1 and localhost,
// written as PEM files to a test's temporary directory.
type Certs struct {
	// CertFile and KeyFile are the leaf's certificate and private key, as a
	// server's -tls-cert and -tls-key would name them; CAFile is the CA's
	// certificate.
	CertFile, KeyFile, CAFile string
	// Pool trusts the CA, for clients' RootCAs.
	Pool *x509.CertPool
	// Leaf is the server certificate, ready for tls.Config.Certificates.
	Leaf tls.Certificate
}

// New makes a CA and a leaf for 127.0.0.1, ::1 and localhost valid from an
// hour ago for a day, and writes them to t.TempDir().
func New(t testing.TB) Certs {
	t.Helper()
	return NewFor(t, 24*time.Hour, "localhost", "127.0.0.1", "::1")
}

// NewFor is New with a leaf for hosts (names or IP addresses; the first is
// its common name) valid from an hour ago for validFor.
func NewFor(t testing.TB, validFor time.Duration, hosts ...string) Certs {
	t.Helper()
	c, err := Write(t.TempDir(), validFor, hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Write makes a CA and a leaf for hosts valid from an hour ago for
// validFor, and writes them to dir: NewFor for a program that is not a test
// (the bench's TLS runs).
func Write(dir string, validFor time.Duration, hosts ...string) (Certs, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, fmt.Errorf("testcert: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "hostrelay test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return Certs{}, fmt.Errorf("testcert: CA: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return Certs{}, fmt.Errorf("testcert: CA: %w", err)
	}

	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, fmt.Errorf("testcert: %w", err)
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: hosts[0]},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		return Certs{}, fmt.Errorf("testcert: leaf: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(leafKey)
	if err != nil {
		return Certs{}, fmt.Errorf("testcert: leaf key: %w", err)
	}

	c := Certs{
		CertFile: filepath.Join(dir, "cert.pem"),
		KeyFile:  filepath.Join(dir, "key.pem"),
		CAFile:   filepath.Join(dir, "ca.pem"),
		Pool:     x509.NewCertPool(),
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	for path, b := range map[string][]byte{c.CertFile: certPEM, c.KeyFile: keyPEM,
		c.CAFile: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})} {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return Certs{}, fmt.Errorf("testcert: %w", err)
		}
	}
	c.Pool.AddCert(ca)
	if c.Leaf, err = tls.X509KeyPair(certPEM, keyPEM); err != nil {
		return Certs{}, fmt.Errorf("testcert: %w", err)
	}
	return c, nil
}

// ClientConfig trusts the CA and expects the server to be serverName.
func (c Certs) ClientConfig(serverName string) *tls.Config {
	return &tls.Config{RootCAs: c.Pool, ServerName: serverName, MinVersion: tls.VersionTLS12}
}
