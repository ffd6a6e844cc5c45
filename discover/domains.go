package discover

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// ErrBadDomain is wrapped by NormalizeDomain's errors.
var ErrBadDomain = errors.New("not a domain name")

// NormalizeDomain turns what a user typed ("Example.COM", "https://example.com/",
// "bücher.example.") into the host the crawler asks for. A port is kept when
// given; paths, queries and a trailing dot are dropped. IP literals pass here
// and are judged later by the fetch guard, so a refusal is recorded as data.
func NormalizeDomain(raw string) (string, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", fmt.Errorf("empty: %w", ErrBadDomain)
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil || u.Host == "" {
			return "", fmt.Errorf("%q: %w", raw, ErrBadDomain)
		}
		s = u.Host
	} else if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	host, port := s, ""
	if h, p, err := net.SplitHostPort(s); err == nil {
		host, port = h, p
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || strings.ContainsAny(host, " \t@{}") {
		return "", fmt.Errorf("%q: %w", raw, ErrBadDomain)
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip == nil {
		ascii, err := idna.Lookup.ToASCII(host)
		if err != nil {
			return "", fmt.Errorf("%q: %w: %v", raw, ErrBadDomain, err)
		}
		host = ascii
		if len(host) > 253 {
			return "", fmt.Errorf("%q: %w: longer than 253 characters", raw, ErrBadDomain)
		}
		for _, label := range strings.Split(host, ".") {
			if label == "" || len(label) > 63 {
				return "", fmt.Errorf("%q: %w: empty or over-long label", raw, ErrBadDomain)
			}
		}
	} else if strings.Contains(host, ":") {
		host = "[" + strings.Trim(host, "[]") + "]"
	}
	if port != "" {
		return host + ":" + port, nil
	}
	return host, nil
}

// ReadDomains yields one domain per line of r as the lines arrive, so a
// list of any length (or one written to a pipe while the crawl runs) is
// never held whole. Blank lines and lines starting with '#' are skipped,
// and anything after whitespace or a comma on a line is ignored (so a
// CSV-ish "example.com,notes" still works when the first field is the
// name). A read error is yielded once, as the last value.
func ReadDomains(r io.Reader) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64*1024), 1024*1024)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if i := strings.IndexAny(line, " \t,"); i >= 0 {
				line = line[:i]
			}
			if !yield(line, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield("", fmt.Errorf("read domains: %w", err))
		}
	}
}
