package fetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/failure"
)

func TestParseConnectTo(t *testing.T) {
	tests := []struct {
		in      string
		want    ConnectTo
		wantErr bool
	}{
		{in: "a.example:443:127.0.0.1:8443", want: ConnectTo{"a.example", "443", "127.0.0.1", "8443"}},
		{in: "A.Example:443:127.0.0.1:8443", want: ConnectTo{"a.example", "443", "127.0.0.1", "8443"}},
		{in: "::127.0.0.1:8443", want: ConnectTo{"", "", "127.0.0.1", "8443"}},
		{in: "a.example:::8443", want: ConnectTo{"a.example", "", "", "8443"}},
		{in: ":443:b.example:", want: ConnectTo{"", "443", "b.example", ""}},
		{in: "[2001:db8::1]:443:[::1]:8443", want: ConnectTo{"2001:db8::1", "443", "::1", "8443"}},
		{in: "a.example:443:[::1]:", want: ConnectTo{"a.example", "443", "::1", ""}},
		{in: ":::", want: ConnectTo{}},
		{in: "", wantErr: true},
		{in: "a.example:443:127.0.0.1", wantErr: true},
		{in: "a.example:443:127.0.0.1:8443:9", wantErr: true},
		{in: "a.example:https:127.0.0.1:8443", wantErr: true},
		{in: "a.example:443:127.0.0.1:70000", wantErr: true},
		{in: "a.example:443:127.0.0.1:0", wantErr: true},
		{in: "[::1:443:127.0.0.1:8443", wantErr: true},
		{in: "[::1]x:443:127.0.0.1:8443", wantErr: true},
		{in: "[]:443:127.0.0.1:8443", wantErr: true},
		{in: "a.example:443:::1:8443", wantErr: true}, // unbracketed IPv6
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseConnectTo(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseConnectTo(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseConnectTo(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestConnectToMatch(t *testing.T) {
	tests := []struct {
		c          ConnectTo
		host, port string
		want       bool
	}{
		{ConnectTo{"a.example", "443", "x", ""}, "a.example", "443", true},
		{ConnectTo{"a.example", "443", "x", ""}, "A.EXAMPLE", "443", true},
		{ConnectTo{"a.example", "443", "x", ""}, "a.example", "8443", false},
		{ConnectTo{"a.example", "443", "x", ""}, "b.example", "443", false},
		{ConnectTo{"", "443", "x", ""}, "b.example", "443", true},
		{ConnectTo{"a.example", "", "x", ""}, "a.example", "8443", true},
		{ConnectTo{}, "anything.example", "1", true},
	}
	for _, tt := range tests {
		if got := tt.c.match(tt.host, tt.port); got != tt.want {
			t.Errorf("%+v.match(%s, %s) = %v, want %v", tt.c, tt.host, tt.port, got, tt.want)
		}
	}
}

func TestClass(t *testing.T) {
	urlErr := func(err error) error { return &url.Error{Op: "Get", URL: "https://a.example/", Err: err} }
	tests := []struct {
		name   string
		err    error
		status int
		want   failure.Class
	}{
		{"ok", nil, 200, ""},
		{"no content", nil, 204, ""},
		{"not modified", nil, 304, ""},
		{"no response, no error", nil, 0, ""},
		{"404", nil, 404, ClassHTTP404},
		{"410 is 4xx", nil, 410, ClassHTTP4xx},
		{"401", nil, 401, ClassHTTP4xx},
		{"429", nil, 429, ClassHTTP429},
		{"500", nil, 500, ClassHTTP5xx},
		{"503", nil, 503, ClassHTTP5xx},
		{"unfollowed redirect", nil, 302, ClassRedirectLimit},
		{"status error", &StatusError{Code: 404}, 404, ClassHTTP404},
		{"status error wins over status", &StatusError{Code: 503}, 0, ClassHTTP5xx},
		{"error wins over 200", fmt.Errorf("%w: 2 bytes", ErrBodySizeLimit), 200, ClassTooLarge},
		{"redirect limit", urlErr(fmt.Errorf("%w: more than 3", ErrRedirectLimit)), 302, ClassRedirectLimit},
		{"blocked address", urlErr(fmt.Errorf("redirect: %w", ErrBlockedAddress)), 302, ClassBlockedAddress},
		{"blocked scheme", urlErr(ErrBlockedScheme), 0, ClassBlockedScheme},
		{"userinfo", ErrUserinfo, 0, ClassBlockedScheme},
		{"invalid url", ErrInvalidURL, 0, ClassBlockedScheme},
		{"placeholder", ErrPlaceholderURL, 0, ClassPlaceholderURL},
		{"bad port", fmt.Errorf("%w: https://a.example:25/", ErrBlockedPort), 0, failure.BlockedPort},
		{"canceled", urlErr(context.Canceled), 0, ClassCanceled},
		{"deadline", urlErr(context.DeadlineExceeded), 0, ClassTimeout},
		{"net timeout", urlErr(&net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}), 0, ClassTimeout},
		{"dns", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "x.example", IsNotFound: true}}), 0, ClassDNS},
		{"dns timeout is dns", &net.DNSError{Err: "i/o timeout", Name: "x.example", IsTimeout: true}, 0, ClassDNS},
		{"refused", urlErr(&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), 0, ClassConnect},
		{"dropped", urlErr(fmt.Errorf("after 2 attempts: %w", io.EOF)), 0, ClassConnect},
		{"unknown authority", urlErr(x509.UnknownAuthorityError{}), 0, ClassTLS},
		{"hostname", urlErr(x509.HostnameError{Host: "a.example", Certificate: &x509.Certificate{}}), 0, ClassTLS},
		{"tls text", urlErr(errors.New("tls: handshake failure")), 0, ClassTLS},
		{"unknown", errors.New("something else"), 0, ClassConnect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Class(tt.err, tt.status); got != tt.want {
				t.Errorf("Class(%v, %d) = %q, want %q", tt.err, tt.status, got, tt.want)
			}
		})
	}
}

func TestIsDroppedConnection(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"eof", &url.Error{Op: "Get", Err: io.EOF}, true},
		{"unexpected eof", io.ErrUnexpectedEOF, true},
		{"reset", &net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{"idle closed", errors.New("http: server closed idle connection"), true},
		{"goaway", errors.New("http2: server sent GOAWAY and closed the connection"), true},
		{"timeout", context.DeadlineExceeded, false},
		{"net timeout", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}, false},
		{"canceled", context.Canceled, false},
		{"refused", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, false},
		{"reset while dialing", &net.OpError{Op: "dial", Err: syscall.ECONNRESET}, false},
		{"dns", &net.DNSError{Err: "no such host"}, false},
		{"blocked", ErrBlockedAddress, false},
		{"blocked port", ErrBlockedPort, false},
		{"tls verify", x509.UnknownAuthorityError{}, false},
		{"status", &StatusError{Code: 503}, false},
	}
	for _, tt := range tests {
		if got := isDroppedConnection(tt.err); got != tt.want {
			t.Errorf("%s: isDroppedConnection(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

func TestParseMaxAge(t *testing.T) {
	ptr := func(n int) *int { return &n }
	tests := []struct {
		in   []string
		want *int
	}{
		{nil, nil},
		{[]string{"public"}, nil},
		{[]string{"public, max-age=3600"}, ptr(3600)},
		{[]string{"Max-Age=60"}, ptr(60)},
		{[]string{`max-age="120"`}, ptr(120)},
		{[]string{"max-age=60, max-age=10"}, ptr(60)},
		{[]string{"public", "max-age=30"}, ptr(30)},
		{[]string{"max-age=-1"}, ptr(0)},
		{[]string{"max-age=abc"}, ptr(0)},
		{[]string{"max-age="}, ptr(0)},
		{[]string{"max-age=99999999999999999999"}, ptr(maxAgeCap)},
		{[]string{"max-age=3600, no-cache"}, ptr(0)},
		{[]string{"no-store"}, ptr(0)},
		{[]string{"s-maxage=100"}, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, parseMaxAge(tt.in)); diff != "" {
			t.Errorf("parseMaxAge(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestLoadCertPoolErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, file, wantText string
	}{
		{"missing file", filepath.Join(dir, "nope.pem"), "no such file"},
		{"no certificates", empty, "no pem certificates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pool, err := LoadCertPool(tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.wantText) {
				t.Fatalf("LoadCertPool(%s) = %v, %v; want error containing %q", tt.file, pool, err, tt.wantText)
			}
		})
	}
	if _, err := LoadCertPool(); err != nil {
		t.Errorf("LoadCertPool() with no files = %v, want system roots", err)
	}
}

// The old class names are the failure table's spellings.
func TestClassAliases(t *testing.T) {
	for alias, c := range map[string]failure.Class{
		ClassDNS: failure.DNS, ClassConnect: failure.Connect, ClassTLS: failure.TLS, ClassTimeout: failure.Timeout,
		ClassHTTP4xx: failure.HTTP4xx, ClassHTTP404: failure.HTTP404, ClassHTTP429: failure.HTTP429,
		ClassHTTP5xx: failure.HTTP5xx, ClassTooLarge: failure.TooLarge, ClassRedirectLimit: failure.RedirectLimit,
		ClassBlockedAddress: failure.BlockedAddress, ClassBlockedScheme: failure.BlockedScheme,
		ClassBlockedPort: failure.BlockedPort, ClassPlaceholderURL: failure.PlaceholderURL, ClassCanceled: failure.Canceled,
	} {
		if alias != string(c) || !c.Known() {
			t.Errorf("fetch alias %q names failure class %q", alias, c)
		}
	}
}
