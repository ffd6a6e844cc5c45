package simweb

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
	"strings"
	"sync"
	"time"
)

// maxCachedLeaves bounds the leaf cache: a generated web of 100,000 hosts
// would otherwise keep 100,000 certificates alive. Re-issuing is cheap.
const maxCachedLeaves = 4096

// authority is the in-memory CA. One leaf key is shared by every leaf: the
// CA signature per host is what makes the chain valid, and skipping a key
// generation per host keeps a first handshake to a new name cheap.
type authority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	pem     []byte
	leafKey *ecdsa.PrivateKey

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
	serial int64
}

func newAuthority(now time.Time) (*authority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate ca key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "simweb test CA", Organization: []string{"cardcrawl simweb"}},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("create ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse ca certificate: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generate leaf key: %w", err)
	}
	return &authority{
		cert:    cert,
		key:     key,
		pem:     pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		leafKey: leafKey,
		leaves:  make(map[string]*tls.Certificate),
		serial:  1,
	}, nil
}

// leaf returns a certificate for name (a DNS name or an IP literal), issuing
// and caching it on first use.
func (a *authority) leaf(name string, now time.Time) (*tls.Certificate, error) {
	name = strings.ToLower(strings.TrimSuffix(name, "."))
	if name == "" {
		// Clients dialling an IP without SNI: cover loopback.
		name = "127.0.0.1"
	}
	return a.issue(name, name, now.Add(-time.Hour), now.Add(7*24*time.Hour))
}

// issue returns the certificate cached under key, or issues one for name
// (a DNS name or an IP literal) valid from notBefore to notAfter. The key
// tells deliberately wrong certificates from a host's good one.
func (a *authority) issue(key, name string, notBefore, notAfter time.Time) (*tls.Certificate, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c, ok := a.leaves[key]; ok {
		return c, nil
	}
	a.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(a.serial),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(name); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{name}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &a.leafKey.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("issue certificate for %q: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("parse certificate for %q: %w", name, err)
	}
	c := &tls.Certificate{
		Certificate: [][]byte{der, a.cert.Raw},
		PrivateKey:  a.leafKey,
		Leaf:        leaf,
	}
	if len(a.leaves) >= maxCachedLeaves {
		clear(a.leaves)
	}
	a.leaves[key] = c
	return c, nil
}
