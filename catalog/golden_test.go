package catalog

import (
	"encoding/json"
	"flag"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current output")

// specsDir holds the spec and SDK example documents (origins in its
// SOURCES.md), kept in the repository so the tests run from a plain clone.
const specsDir = "testdata/specs"

// goldenBase is the URL every example is pretended to be served from, so
// that relative URLs (cli-root-catalog.json has one) show their resolution.
const goldenBase = "https://example.com/.well-known/ai-catalog.json"

// goldenDoc is the recorded result of parsing one example document.
type goldenDoc struct {
	Source      string          `json:"source,omitempty"`
	Path        string          `json:"path,omitempty"` // JSON pointer of an inline nested catalog
	Error       string          `json:"error,omitempty"`
	SpecVersion string          `json:"specVersion,omitempty"`
	EntryCount  int             `json:"entryCount"`
	Host        json.RawMessage `json:"host,omitempty"`
	Entries     []sumEntry      `json:"entries"`
	Findings    finding.List    `json:"findings"`
	Nested      []goldenDoc     `json:"nested,omitempty"`
}

// parseGolden parses body and, like the crawler, its inline nested catalogs
// with the parent's base.
func parseGolden(body []byte, base *url.URL, depth int) goldenDoc {
	c, fl, err := Parse(body, base, Options{})
	g := goldenDoc{Findings: fl}
	if err != nil {
		g.Error = err.Error()
		return g
	}
	g.SpecVersion, g.EntryCount, g.Entries = c.SpecVersion, c.EntryCount, summarizeEntries(c.Entries)
	if c.Host != nil {
		g.Host = json.RawMessage(compact(c.Host))
	}
	for _, e := range c.Entries {
		if e.Essence == MediaTypeCatalog && e.Data != nil && depth < 4 {
			n := parseGolden(e.Data, base, depth+1)
			n.Path = e.DataPath()
			g.Nested = append(g.Nested, n)
		}
	}
	return g
}

func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(specsDir, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".json") {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		t.Fatalf("reading the shared examples (expected at %s): %v", specsDir, err)
	}
	// The ARD example shares the well-known path; it must parse as a catalog.
	files = append(files, filepath.Join(specsDir, "ard", "example-basic-ai-catalog.json"))
	if len(files) < 10 {
		t.Fatalf("found only %d example files under %s", len(files), specsDir)
	}
	return files
}

func goldenName(p string) string {
	rel, _ := filepath.Rel(specsDir, p)
	rel = strings.TrimPrefix(filepath.ToSlash(rel), "examples/")
	return strings.ReplaceAll(rel, "/", ".")
}

func TestGoldenExamples(t *testing.T) {
	base := mustURL(t, goldenBase)
	want := map[string]bool{}
	for _, p := range exampleFiles(t) {
		name := goldenName(p)
		want[name] = true
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			g := parseGolden(body, base, 0)
			g.Source = filepath.ToSlash(strings.TrimPrefix(p, "../../"))
			got, err := json.MarshalIndent(g, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			gp := filepath.Join("testdata", "golden", name)
			if *update {
				if err := os.WriteFile(gp, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			wantBytes, err := os.ReadFile(gp)
			if err != nil {
				t.Fatalf("%v (run go test ./catalog -update)", err)
			}
			if diff := cmp.Diff(string(wantBytes), string(got)); diff != "" {
				t.Errorf("%s differs from golden (-want +got), rerun with -update if intended:\n%s", gp, diff)
			}
		})
	}
	// A golden file without an example would silently stop being checked.
	golden, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, g := range golden {
		if n := filepath.Base(g); !want[n] {
			if *update {
				os.Remove(g)
				continue
			}
			t.Errorf("stale golden file %s has no example", g)
		}
	}
}

// TestGoldenExpectations pins the facts about the examples that matter most,
// so that a careless -update cannot bless a regression in them.
func TestGoldenExpectations(t *testing.T) {
	base := mustURL(t, goldenBase)
	read := func(name string) goldenDoc {
		t.Helper()
		body, err := os.ReadFile(filepath.Join(specsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		return parseGolden(body, base, 0)
	}
	codes := func(g goldenDoc) []string {
		var out []string
		for _, f := range g.Findings {
			out = append(out, f.Code+" "+f.Path)
		}
		return out
	}

	root := read("examples/sdk-fixtures/cli-root-catalog.json")
	if got := root.Entries[3].ResolvedURL; got != "https://example.com/.well-known/department-catalog.json" {
		t.Errorf("cli-root relative url resolved to %q", got)
	}
	if len(root.Nested) != 1 || len(root.Nested[0].Entries) != 2 {
		t.Errorf("cli-root inline catalog: %+v", root.Nested)
	}

	old := read("examples/spec-example-2026-04-634a09d-uses-mediaType.json")
	if len(old.Entries) != 2 || old.Entries[0].Type != "application/a2a-agent-card+json" {
		t.Errorf("mediaType example entries: %+v", old.Entries)
	}

	inv := read("examples/sdk-fixtures/go-invalid.json")
	wantInv := []string{
		"entry_url_and_data /entries/0",
		"entry_no_url_or_data /entries/1",
		"duplicate_identifier /entries/3",
		"duplicate_identifier /entries/5",
		"duplicate_identifier_unversioned /entries/7",
		"entry_missing_identifier /entries/9",
	}
	if diff := cmp.Diff(wantInv, codes(inv)); diff != "" {
		t.Errorf("go-invalid findings (-want +got):\n%s", diff)
	}
	if len(inv.Nested) != 1 || !strings.Contains(inv.Nested[0].Error, ErrUnsupportedVersion.Error()) {
		t.Errorf("go-invalid nested specVersion 12345: %+v", inv.Nested)
	}

	deep := read("examples/sdk-fixtures/go-nested_deep.json")
	depth := 0
	for g := deep; len(g.Nested) > 0; g = g.Nested[0] {
		depth++
	}
	if depth != 4 {
		t.Errorf("nested depth followed = %d, want the test's cap of 4", depth)
	}

	for _, name := range []string{"examples/spec-be6803f/entry-catalog-projection.json", "examples/spec-be6803f/signed-payload-release-only-manifest.json"} {
		if g := read(name); !strings.Contains(g.Error, ErrNotCatalog.Error()) {
			t.Errorf("%s: error %q, want not-a-catalog", name, g.Error)
		}
	}

	ard := read("ard/example-basic-ai-catalog.json")
	if len(ard.Findings) != 0 || len(ard.Entries) != 4 {
		t.Errorf("ARD example: %d entries, findings %v", len(ard.Entries), ard.Findings)
	}
}
