package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/cardcrawl/cardcrawl/internal/failure"
)

// The failure classes fetch produces, under their old names. Their meanings
// live in internal/failure, the one table; new code names failure.X. These
// stay untyped so the places that still hold classes as plain strings
// compare and assign them as before, and TestClassAliases keeps each equal
// to its failure constant.
const (
	ClassDNS            = "dns"
	ClassConnect        = "connect"
	ClassTLS            = "tls"
	ClassTimeout        = "timeout"
	ClassHTTP4xx        = "http_4xx"
	ClassHTTP404        = "http_404"
	ClassHTTP429        = "http_429"
	ClassHTTP5xx        = "http_5xx"
	ClassTooLarge       = "too_large"
	ClassRedirectLimit  = "redirect_limit"
	ClassBlockedAddress = "blocked_address"
	ClassBlockedScheme  = "blocked_scheme"
	ClassBlockedPort    = "blocked_port"
	ClassPlaceholderURL = "placeholder_url"
	ClassCanceled       = "canceled"
)

// ErrBodySizeLimit is returned when a response body is larger than the cap.
// It is named (as Prometheus' scraper does) so callers can errors.Is it.
var ErrBodySizeLimit = errors.New("response body exceeds size limit")

// Sentinel errors for requests refused by policy. Errors returned by this
// package wrap them, so errors.Is works through url.Error and friends.
var (
	// ErrBlockedAddress: the host is, or resolves to, an address we refuse to
	// connect to (loopback, private, link-local, metadata, ...), or is
	// "localhost".
	ErrBlockedAddress = errors.New("blocked address")
	// ErrBlockedScheme: the URL is not https.
	ErrBlockedScheme = errors.New("blocked scheme")
	// ErrBlockedPort: the URL names a port on the WHATWG Fetch standard's
	// bad-port list (BadPort).
	ErrBlockedPort = errors.New("blocked port")
	// ErrPlaceholderURL: the URL still contains a template placeholder such
	// as {tenant}, raw or percent-encoded.
	ErrPlaceholderURL = errors.New("placeholder in url")
	// ErrUserinfo: the URL carries user:password@, which we never send.
	ErrUserinfo = errors.New("userinfo in url")
	// ErrInvalidURL: the URL cannot be parsed or has no host.
	ErrInvalidURL = errors.New("invalid url")
	// ErrRedirectLimit: too many redirects, or a redirect where none was
	// allowed (Request.NoRedirects).
	ErrRedirectLimit = errors.New("redirect limit")
)

// StatusError is the error recorded for a response whose status code is a
// failure. Its text is short ("http 404") because the class says the rest.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return fmt.Sprintf("http %d", e.Code) }

// Class maps an error (from Get or HTTPClient) and/or a status code to
// exactly one failure class; failure.None means success (2xx or 304). It is
// the one mapping function of the program: an error wins over the status
// because a 200 whose body was too large, or a 302 we refused to follow, is
// a failure. What each class means is internal/failure's table.
func Class(err error, status int) failure.Class {
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			return statusClass(se.Code)
		}
		return errClass(err)
	}
	return statusClass(status)
}

func statusClass(status int) failure.Class {
	switch {
	case status == 0, status == 304, status >= 200 && status < 300:
		return failure.None
	case status == 404:
		return failure.HTTP404
	case status == 429:
		return failure.HTTP429
	case status >= 400 && status < 500:
		return failure.HTTP4xx
	case status >= 300 && status < 400:
		// A redirect handed back to the caller was not followed (no Location,
		// or following was refused), so the document was never reached.
		return failure.RedirectLimit
	default:
		// 1xx as a final answer and codes beyond 599 are server misbehaviour.
		return failure.HTTP5xx
	}
}

func errClass(err error) failure.Class {
	switch {
	case errors.Is(err, ErrPlaceholderURL):
		return failure.PlaceholderURL
	case errors.Is(err, ErrBlockedAddress):
		return failure.BlockedAddress
	case errors.Is(err, ErrBlockedPort):
		return failure.BlockedPort
	case errors.Is(err, ErrBlockedScheme), errors.Is(err, ErrUserinfo), errors.Is(err, ErrInvalidURL):
		// All three are URLs of a shape we do not fetch, refused before any
		// connection; the stored error text says which.
		return failure.BlockedScheme
	case errors.Is(err, ErrRedirectLimit):
		return failure.RedirectLimit
	case errors.Is(err, ErrBodySizeLimit):
		return failure.TooLarge
	case errors.Is(err, context.Canceled):
		return failure.Canceled
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return failure.DNS
	}
	if isTimeout(err) {
		return failure.Timeout
	}
	if isTLS(err) {
		return failure.TLS
	}
	return failure.Connect
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isTLS(err error) bool {
	var (
		rh      tls.RecordHeaderError
		verify  *tls.CertificateVerificationError
		alert   tls.AlertError
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		invalid x509.CertificateInvalidError
	)
	if errors.As(err, &rh) || errors.As(err, &verify) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &host) || errors.As(err, &invalid) {
		return true
	}
	// The handshake reports many failures only as text ("tls: ...").
	return strings.Contains(err.Error(), "tls: ")
}

// isDroppedConnection reports whether err means the connection was closed
// or reset before a response status line arrived. Only then is the request
// retried: nothing was answered, so sending it again cannot double an
// effect the server reported. Which classes may be retried at all is the
// failure table's decision (only connect); within it, a refused connect is
// final, as are timeouts, DNS, TLS verification and every status code.
func isDroppedConnection(err error) bool {
	if err == nil || !errClass(err).Retried() {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) {
		return true
	}
	// net/http reports some of these only as text, and its bundled HTTP/2
	// GOAWAY error type is unexported.
	msg := err.Error()
	for _, s := range []string{
		"server closed idle connection",
		"connection reset by peer",
		"transport connection broken",
		"GOAWAY",
		"client connection lost",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
