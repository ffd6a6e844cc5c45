package simweb

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/registry/registrytest"
)

//go:embed testdata/demo/*.txtar testdata/demo/domains.txt testdata/demo/registry.json
var demoFS embed.FS

// DemoRegistryURL is where the demo web serves a Registry v0.1 double whose
// entries agree, disagree and overlap with the demo's cards.
const DemoRegistryURL = "https://registry.example"

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
	if err := addSignedDemo(w); err != nil {
		return nil, nil, err
	}
	if err := addRegistry(w, demoFS, "testdata/demo/registry.json", DemoRegistryURL); err != nil {
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

// addRegistry mounts a Registry double at base, loaded with file (a v0.1
// list response).
func addRegistry(w *Web, fsys fs.FS, file, base string) error {
	raw, err := fs.ReadFile(fsys, file)
	if err != nil {
		return fmt.Errorf("simweb: registry: %w", err)
	}
	var list struct {
		Servers []struct {
			Server json.RawMessage `json:"server"`
			Meta   struct {
				Official registrytest.Official `json:"io.modelcontextprotocol.registry/official"`
			} `json:"_meta"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("simweb: registry %s: %w", file, err)
	}
	reg := registrytest.New(time.Now)
	for _, e := range list.Servers {
		if err := reg.Load(e.Server, e.Meta.Official); err != nil {
			return fmt.Errorf("simweb: registry %s: %w", file, err)
		}
	}
	w.Handle(strings.TrimPrefix(base, "https://"), reg)
	return nil
}
