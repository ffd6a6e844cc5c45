package fetch

import (
	"crypto/x509"
	"fmt"
	"os"
)

// LoadCertPool returns the system roots plus the certificates in pemFiles
// (--ca-cert), so an operator can add a private CA without losing the
// public ones. A file without any PEM certificate is an error, not a
// silently ignored flag.
func LoadCertPool(pemFiles ...string) (*x509.CertPool, error) {
	pool, err := x509.SystemCertPool()
	if err != nil || pool == nil {
		pool = x509.NewCertPool()
	}
	for _, f := range pemFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("ca cert: %w", err)
		}
		if !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("ca cert %s: no pem certificates found", f)
		}
	}
	return pool, nil
}
