package registry_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/registry"
)

// failingTransport answers every request with err, counting attempts.
type failingTransport struct {
	err      error
	attempts int
}

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.attempts++
	return nil, f.err
}

// TestClientRetriesOnlyWhatCanClear: the client itself never resends after
// a transport failure (the fetch client already made the program's one
// retry after a dropped connection); Transient still says, by the failure
// table, which failures may clear by the next sync: the network failing
// (refused, reset, DNS, timeout) does, a certificate or a refusal by the
// guard does not.
func TestClientRetriesOnlyWhatCanClear(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		attempts  int
		transient bool
		class     failure.Class
	}{
		{"blocked address", fmt.Errorf("dial: %w: 127.0.0.1", fetch.ErrBlockedAddress), 1, false, failure.BlockedAddress},
		{"blocked scheme", fmt.Errorf("%w: http", fetch.ErrBlockedScheme), 1, false, failure.BlockedScheme},
		{"blocked port", fmt.Errorf("%w: :25", fetch.ErrBlockedPort), 1, false, failure.BlockedPort},
		{"placeholder", fmt.Errorf("%w: {tenant}", fetch.ErrPlaceholderURL), 1, false, failure.PlaceholderURL},
		{"too large", fetch.ErrBodySizeLimit, 1, false, failure.TooLarge},
		{"tls", x509.UnknownAuthorityError{}, 1, false, failure.TLS},
		{"dns", &net.DNSError{Err: "no such host", Name: "registry.example", IsNotFound: true}, 1, true, failure.DNS},
		{"connect refused", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, 1, true, failure.Connect},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, 1, true, failure.Connect},
		{"timeout", fmt.Errorf("read: %w", context.DeadlineExceeded), 1, true, failure.Timeout},
		{"dropped connection", fmt.Errorf("after 2 attempts: %w", io.ErrUnexpectedEOF), 1, true, failure.Connect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ft := &failingTransport{err: tt.err}
			s := &sleeper{}
			c, err := registry.NewClient(registry.ClientOptions{BaseURL: "https://registry.example",
				HTTPClient: &http.Client{Transport: ft}, RequestsPerSecond: -1, MaxRetries: 2, Sleep: s.Sleep})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.ListServers(context.Background(), registry.ListQuery{})
			if err == nil {
				t.Fatal("no error")
			}
			if ft.attempts != tt.attempts {
				t.Errorf("%d attempts, want %d (waits %v)", ft.attempts, tt.attempts, s.Waits())
			}
			if got := registry.Transient(err); got != tt.transient {
				t.Errorf("Transient(%v) = %v, want %v", err, got, tt.transient)
			}
			if got := registry.ErrorClass(err); got != tt.class {
				t.Errorf("ErrorClass(%v) = %q, want %q", err, got, tt.class)
			}
		})
	}
}

// TestClientThroughGuardFailsFast: the program's fetch client refuses a
// loopback registry; that refusal is final, not retried for 15 seconds.
func TestClientThroughGuardFailsFast(t *testing.T) {
	e := newEnv(t)
	fc, err := fetch.New(fetch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.client(t, func(o *registry.ClientOptions) { o.HTTPClient = fc.HTTPClient(); o.MaxRetries = 4 })
	_, err = c.ListServers(context.Background(), registry.ListQuery{})
	if !errors.Is(err, fetch.ErrBlockedAddress) {
		t.Fatalf("err = %v, want a blocked address", err)
	}
	if w := e.sleeper.Waits(); len(w) != 0 {
		t.Errorf("waited %v before giving up", w)
	}
}

func TestNewClientRefusesNonHTTPS(t *testing.T) {
	for _, u := range []string{"http://registry.example", "ftp://registry.example", "registry.example", "https://"} {
		if _, err := registry.NewClient(registry.ClientOptions{BaseURL: u, HTTPClient: http.DefaultClient}); err == nil {
			t.Errorf("NewClient(%q) accepted it", u)
		} else if !strings.Contains(err.Error(), u) {
			t.Errorf("NewClient(%q): error %q does not name the url", u, err)
		}
	}
}
