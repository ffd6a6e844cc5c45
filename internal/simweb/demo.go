package simweb

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"strings"
)

//go:embed testdata/demo/*.txtar testdata/demo/domains.txt
var demoFS embed.FS

// Demo returns a Web (not started) loaded with the demo fixtures, and the
// domains to crawl, in story order: a catalog whose card lives on another
// host that insists on the card media type, an inline card, a nested catalog
// reached by a relative URL, an old `mediaType` catalog, real go-sdk and
// mcp-go servers (Streamable HTTP and legacy SSE), a server behind OAuth, a
// templated remote, an SSRF attempt and a plain-http remote, non-conformant
// cards, a redirect, a dropped connection, and the usual ways a domain fails.
func Demo(opts Options) (*Web, []string, error) {
	w, err := New(opts)
	if err != nil {
		return nil, nil, err
	}
	if err := w.addFixtureFS(demoFS, "testdata/demo", "demo"); err != nil {
		return nil, nil, err
	}
	b, err := demoFS.ReadFile("testdata/demo/domains.txt")
	if err != nil {
		return nil, nil, fmt.Errorf("simweb: demo domains: %w", err)
	}
	return w, parseDomainList(b), nil
}

// parseDomainList reads one domain per line, skipping blanks and # comments.
func parseDomainList(b []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}
