package servercard

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// specDir holds the spec's example cards (origins in its SOURCES.md), kept
// in the repository so the tests run from a plain clone.
const specDir = "testdata/specs"

const schemaSHA256 = "2c772b51edb367f154771d84ddbae87ddba00a624422c8e46f218a9ac03bf042"

func newValidator(t testing.TB) *Validator {
	t.Helper()
	v, err := NewValidator()
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	return v
}

func TestSchemaVendored(t *testing.T) {
	sum := sha256.Sum256(schemaBytes)
	if got := hex.EncodeToString(sum[:]); got != schemaSHA256 {
		t.Errorf("embedded schema sha256 = %s, want %s (see schema/SOURCES.md)", got, schemaSHA256)
	}
	// Where the project's shared spec collection sits beside the checkout
	// (as in CI), the vendored copy must still equal it.
	shared, err := os.ReadFile("../../shared/specs/server-card/schema.json")
	if err != nil {
		t.Logf("shared spec collection not beside the checkout (%v); the hash check above stands alone", err)
		return
	}
	if string(shared) != string(schemaBytes) {
		t.Errorf("schema/server-card.schema.json differs from the shared schema.json")
	}
}

func TestRefuseLoader(t *testing.T) {
	if _, err := (refuseLoader{}).Load("https://example.com/schema.json"); err == nil {
		t.Error("refuseLoader loaded a URL; it must refuse everything")
	}
}

// golden is what a golden file records for one example document.
type golden struct {
	Grade    Grade        `json:"grade"`
	Shape    string       `json:"shape"`
	Findings finding.List `json:"findings"`
	Card     *Card        `json:"card"`
}

func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"examples/valid/*.json", "examples/invalid/*.json", "examples/historical-*.json"} {
		m, err := filepath.Glob(filepath.Join(specDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) < 8 {
		t.Fatalf("found %d example files under %s, want at least 8", len(files), specDir)
	}
	return files
}

func TestExamplesGolden(t *testing.T) {
	v := newValidator(t)
	for _, path := range exampleFiles(t) {
		rel, _ := filepath.Rel(filepath.Join(specDir, "examples"), path)
		name := strings.ReplaceAll(strings.TrimSuffix(rel, ".json"), string(filepath.Separator), "_")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res := v.Check(raw)
			// Independent of the golden files, so -update cannot bless a regression.
			valid := strings.Contains(rel, "valid"+string(filepath.Separator)) && !strings.Contains(rel, "invalid")
			if valid != (res.Grade == Conformant) {
				t.Errorf("grade = %s for %s; valid examples must be conformant and only they", res.Grade, rel)
			}
			got := golden{Grade: res.Grade, Shape: res.Shape, Findings: res.Findings, Card: res.Card}
			compareGolden(t, filepath.Join("testdata", "golden", name+".json"), got)
		})
	}
}

func compareGolden(t *testing.T, file string, got golden) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *update {
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read golden (run go test -update): %v", err)
	}
	if diff := cmp.Diff(string(want), string(data)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", file, diff)
	}
}

// outcome is the part of a Result the hand-written cases pin down.
type outcome struct {
	Grade   Grade
	Shape   string
	Codes   []string // sorted, unique
	HasCard bool
}

func summarize(r Result) outcome {
	var codes []string
	for _, f := range r.Findings {
		codes = append(codes, f.Code)
	}
	slices.Sort(codes)
	return outcome{Grade: r.Grade, Shape: r.Shape, Codes: slices.Compact(codes), HasCard: r.Card != nil}
}

const okHead = `"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/weather","version":"1.0.0","description":"Weather."`

func TestCheck(t *testing.T) {
	v := newValidator(t)
	tests := []struct {
		name string
		in   string
		want outcome
	}{
		{
			name: "github-like: non-semver version, trailing slash remote",
			in: `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
				"name":"io.github.github/github-mcp-server","version":"github-mcp-server/remote-7835a232b0c1",
				"description":"GitHub's official MCP Server","title":"GitHub",
				"websiteUrl":"https://github.com/github/github-mcp-server",
				"repository":{"url":"https://github.com/github/github-mcp-server","source":"github","id":"942771284"},
				"remotes":[{"type":"streamable-http","url":"https://api.githubcopilot.example/mcp/"}]}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true},
		},
		{
			name: "railway-like server.json with serverUrl",
			in: `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
				"name":"com.example/railway","version":"0.1.0","description":"Deploy things.",
				"serverUrl":"https://mcp.example.com/mcp",
				"remotes":[{"type":"streamable-http","url":"https://mcp.example.com/mcp"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeServerJSON, HasCard: true,
				Codes: []string{CodeNonstandardField, CodeSchemaServerJSON}},
		},
		{
			name: "sentry-like legacy",
			in:   `{"name":"Sentry","url":"https://mcp.example.com/mcp","provider":"Sentry","authentication":{"type":"oauth2","authorization_server":"https://example.com"}}`,
			want: outcome{Grade: NonConformant, Shape: ShapeLegacy, HasCard: true,
				Codes: []string{CodeLegacyShape, CodeNoRemotes, CodeNonstandardField, CodeSchemaMissing, "schema_pattern", "schema_required"}},
		},
		{
			name: "legacy name and endpoint",
			in:   `{"name":"x","endpoint":"https://mcp.example.com/"}`,
			want: outcome{Grade: NonConformant, Shape: ShapeLegacy, HasCard: true,
				Codes: []string{CodeLegacyShape, CodeNoRemotes, CodeNonstandardField, "schema_min_length", CodeSchemaMissing, "schema_pattern", "schema_required"}},
		},
		{
			name: "SEP-1649 serverInfo",
			in:   `{"serverInfo":{"name":"x","version":"1"},"transports":[{"type":"streamable-http","endpoint":"/mcp"}]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeLegacy, HasCard: true,
				Codes: []string{CodeLegacyShape, CodeNoRemotes, CodeNonstandardField, CodeSchemaMissing, "schema_required"}},
		},
		{
			name: "empty object",
			in:   `{}`,
			want: outcome{Grade: NonConformant, Shape: ShapeUnknown, HasCard: true,
				Codes: []string{CodeNoRemotes, CodeSchemaMissing, "schema_required"}},
		},
		{
			name: "array",
			in:   `[]`,
			want: outcome{Grade: NonConformant, Shape: ShapeUnknown, Codes: []string{CodeNotObject}},
		},
		{
			name: "null",
			in:   `null`,
			want: outcome{Grade: NonConformant, Shape: ShapeUnknown, Codes: []string{CodeNotObject}},
		},
		{
			name: "invalid json",
			in:   `{"name":`,
			want: outcome{Grade: NonConformant, Shape: ShapeUnknown, Codes: []string{CodeInvalidJSON}},
		},
		{
			name: "html soft 404",
			in:   `<!doctype html><title>Not found</title>`,
			want: outcome{Grade: NonConformant, Shape: ShapeUnknown, Codes: []string{CodeInvalidJSON}},
		},
		{
			name: "empty bytes",
			in:   ``,
			want: outcome{Grade: NonConformant, Shape: ShapeUnknown, Codes: []string{CodeInvalidJSON}},
		},
		{
			name: "BOM is skipped",
			in:   "\xef\xbb\xbf{" + okHead + `,"remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeUTF8BOM}},
		},
		{
			name: "no remotes is conformant but warned",
			in:   `{` + okHead + `}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoRemotes}},
		},
		{
			name: "missing schema with usable remote",
			in:   `{"name":"com.example/a","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"https://example.com/mcp"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeSchemaMissing}},
		},
		{
			name: "missing schema without remotes",
			in:   `{"name":"com.example/a","version":"1.0.0","description":"d"}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoRemotes, CodeSchemaMissing}},
		},
		{
			name: "date-versioned card schema",
			in: `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-11-25/server-card.schema.json","name":"com.example/a","version":"1.0.0","description":"d",
				"remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeSchemaWrong}},
		},
		{
			name: "schema not a string",
			in:   `{"$schema":42,"name":"com.example/a","version":"1.0.0","description":"d","remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeSchemaWrong}},
		},
		{
			name: "version range is near with remote",
			in:   `{` + strings.Replace(okHead, `"1.0.0"`, `"^1.2.3"`, 1) + `,"remotes":[{"type":"streamable-http","url":"https://example.com/mcp"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeVersionRange}},
		},
		{
			name: "version latest without remote is non-conformant",
			in:   `{` + strings.Replace(okHead, `"1.0.0"`, `"latest"`, 1) + `}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoRemotes, CodeVersionRange}},
		},
		{
			name: "long description and title are fixable",
			in: `{` + strings.Replace(okHead, `"Weather."`, `"`+strings.Repeat("d", 101)+`"`, 1) + `,"title":"` + strings.Repeat("t", 101) + `",
				"remotes":[{"type":"streamable-http","url":"https://example.com/mcp"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeCard, HasCard: true, Codes: []string{"schema_max_length"}},
		},
		{
			name: "missing name is not fixable",
			in:   `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","version":"1","description":"d","remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{"schema_required"}},
		},
		{
			name: "bad remote next to a good one",
			in:   `{` + okHead + `,"remotes":[{"type":"sse","url":"https://example.com/sse"},{"type":"stdio","url":"https://example.com/x"}]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{"schema_enum"}},
		},
		{
			name: "only remote has a relative url",
			in:   `{` + okHead + `,"remotes":[{"type":"streamable-http","url":"/mcp"}]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoUsableRemote, "schema_pattern"}},
		},
		{
			name: "remote not an object",
			in:   `{` + okHead + `,"remotes":["https://example.com/mcp"]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoUsableRemote, "schema_type"}},
		},
		{
			name: "remotes warnings: plain http, userinfo, template, duplicate",
			in: `{` + okHead + `,"remotes":[
				{"type":"streamable-http","url":"http://example.com/mcp"},
				{"type":"streamable-http","url":"https://user@example.com/mcp"},
				{"type":"streamable-http","url":"https://{tenant}.example.com/mcp","variables":{"tenant":{"isRequired":true}}},
				{"type":"streamable-http","url":"https://{region}.example.org/mcp"},
				{"type":"streamable-http","url":"https://EXAMPLE.COM:443/mcp/"},
				{"type":"streamable-http","url":"https://example.com/mcp"},
				{"type":"sse","url":"https://example.com/mcp"}]}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true, Codes: []string{
				CodeRemoteDuplicate, CodeRemotePlainHTTP, CodeRemoteTemplateUndefined, CodeRemoteTemplated, CodeRemoteUserinfo}},
		},
		{
			name: "upper-case scheme fails the schema pattern",
			in:   `{` + okHead + `,"remotes":[{"type":"streamable-http","url":"HTTPS://example.com/mcp"}]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoUsableRemote, "schema_pattern"}},
		},
		{
			name: "leaked secrets",
			in: `{` + okHead + `,"remotes":[{"type":"streamable-http","url":"https://example.com/mcp",
				"headers":[
					{"name":"Authorization","isSecret":true,"value":"Bearer sk-live-123"},
					{"name":"X-Ok","isSecret":true,"value":"Bearer {token}","variables":{"token":{"isSecret":true}}},
					{"name":"X-Nested","value":"{k}","variables":{"k":{"isSecret":true,"value":"hunter2"}}}],
				"variables":{"key":{"isSecret":true,"value":"abc"}}}]}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeSecretHeaderValue, CodeSecretVariableValue}},
		},
		{
			name: "microlink-like: packages and tools, no remotes",
			in:   `{` + okHead + `,"packages":[{"registryType":"npm","identifier":"x"}],"tools":[{"name":"t"}],"documentationUrl":"https://example.com/docs"}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeNoRemotes, CodeNonstandardField}},
		},
		{
			name: "relative website url and a data: image icon are warnings only",
			in:   `{` + okHead + `,"websiteUrl":"example.com","icons":[{"src":"data:image/png;base64,AAAA"}],"remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: Conformant, Shape: ShapeCard, HasCard: true, Codes: []string{CodeIconNotHTTPS, CodeInvalidURI}},
		},
		{
			name: "bad icon and repository are fixable",
			in:   `{` + okHead + `,"icons":[{"theme":"blue"}],"repository":{"url":"https://example.com/r"},"remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: NearConformant, Shape: ShapeCard, HasCard: true, Codes: []string{"schema_enum", "schema_required"}},
		},
		{
			name: "version has wrong type",
			in:   `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/a","version":2,"description":"d","remotes":[{"type":"sse","url":"https://example.com/sse"}]}`,
			want: outcome{Grade: NonConformant, Shape: ShapeCard, HasCard: true, Codes: []string{"schema_type"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := v.Check([]byte(tt.in))
			if diff := cmp.Diff(tt.want, summarize(res)); diff != "" {
				t.Errorf("Check mismatch (-want +got):\n%s\nfindings: %+v", diff, res.Findings)
			}
		})
	}
}

func TestCheckKeepsRemotesOfBrokenCard(t *testing.T) {
	v := newValidator(t)
	res := v.Check([]byte(`{"name":5,"version":2,"remotes":[{"type":"sse","url":"https://example.com/sse","headers":"nope"},{"type":7,"url":"https://example.com/b"}]}`))
	want := []Remote{{Type: "sse", URL: "https://example.com/sse"}, {URL: "https://example.com/b"}}
	if res.Card == nil {
		t.Fatal("Card is nil for a JSON object")
	}
	if diff := cmp.Diff(want, res.Card.Remotes); diff != "" {
		t.Errorf("remotes mismatch (-want +got):\n%s", diff)
	}
}

func TestFindingPaths(t *testing.T) {
	v := newValidator(t)
	res := v.Check([]byte(`{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","version":"1","description":"","remotes":[{"url":"https://example.com/mcp","type":"http"}]}`))
	var got []finding.Finding
	for _, f := range res.Findings {
		f.Message = ""
		got = append(got, f)
	}
	want := []finding.Finding{
		{Severity: finding.Error, Code: "schema_min_length", Path: "/description"},
		{Severity: finding.Error, Code: "schema_required", Path: "/name"},
		{Severity: finding.Error, Code: "schema_enum", Path: "/remotes/0/type"},
		{Severity: finding.Warning, Code: CodeNoUsableRemote, Path: "/remotes"},
	}
	sortFindings := func(fs []finding.Finding) {
		slices.SortFunc(fs, func(a, b finding.Finding) int { return strings.Compare(a.Path+a.Code, b.Path+b.Code) })
	}
	sortFindings(got)
	sortFindings(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings mismatch (-want +got):\n%s", diff)
	}
}

func TestIsVersionRange(t *testing.T) {
	tests := map[string]bool{
		"^1.2.3": true, "~1.2.3": true, ">=1.2.3": true, "<2": true, "=1.0.0": true, "1.x": true, "1.*": true,
		"1.2.*": true, "*": true, "x": true, "latest": true, "Latest": true, "1.2 || 1.3": true, "1.2.3 - 2.0.0": true,
		"1.0.0": false, "2.1.0-alpha": false, "github-mcp-server/remote-7835a232": false, "v1.0": false,
		"0.4.18": false, "1.0.0-rc.1+build.5": false, "x86-1": false, "2025-06-18": false,
	}
	for in, want := range tests {
		if got := IsVersionRange(in); got != want {
			t.Errorf("IsVersionRange(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestCheckConcurrent(t *testing.T) {
	v := newValidator(t)
	raw := []byte(typicalCard)
	want := summarize(v.Check(raw))
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := summarize(v.Check(raw)); !cmp.Equal(want, got) {
					errs <- cmp.Diff(want, got)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("concurrent Check differs (-want +got):\n%s", e)
	}
}

const typicalCard = `{
  "$schema": "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json",
  "name": "io.modelcontextprotocol.anonymous/brave-search",
  "version": "1.0.2",
  "description": "MCP server for Brave Search API integration",
  "title": "Brave Search",
  "websiteUrl": "https://anonymous.modelcontextprotocol.io/examples",
  "repository": { "url": "https://github.com/modelcontextprotocol/servers", "source": "github", "subfolder": "src/everything" },
  "icons": [{ "src": "https://example.com/icons/weather-icon-48.png", "sizes": ["48x48"], "mimeType": "image/png", "theme": "light" }],
  "remotes": [
    { "type": "streamable-http", "url": "https://mcp.anonymous.modelcontextprotocol.io/http",
      "supportedProtocolVersions": ["2025-03-12", "2025-06-15"],
      "headers": [
        { "name": "X-API-Key", "description": "API key for authentication", "isRequired": true, "isSecret": true },
        { "name": "X-Region", "description": "Service region", "default": "us-east-1", "choices": ["us-east-1","eu-west-1","ap-southeast-1"] } ] },
    { "type": "sse", "url": "https://mcp.anonymous.modelcontextprotocol.io/sse", "supportedProtocolVersions": ["2025-03-12", "2025-06-15"] }
  ],
  "_meta": { }
}`

func TestTypicalCardConformant(t *testing.T) {
	res := newValidator(t).Check([]byte(typicalCard))
	if res.Grade != Conformant || len(res.Findings) != 0 {
		t.Errorf("typical card: grade %s, findings %+v; want conformant with none", res.Grade, res.Findings)
	}
}

func BenchmarkCheck(b *testing.B) {
	v := newValidator(b)
	raw := []byte(typicalCard)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if res := v.Check(raw); res.Grade != Conformant {
			b.Fatalf("grade %s", res.Grade)
		}
	}
}

func FuzzCheck(f *testing.F) {
	f.Add([]byte(typicalCard))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"remotes":[{"type":"sse","url":"{x}"}]}`))
	v := newValidator(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		res := v.Check(raw)
		var probe any
		isObj := json.Unmarshal(raw, &probe) == nil
		if _, ok := probe.(map[string]any); ok && isObj && res.Card == nil {
			t.Errorf("Card is nil for a JSON object: %q", raw)
		}
		if res.Grade == "" || res.Shape == "" {
			t.Errorf("empty grade or shape: %+v", res)
		}
		for _, fd := range res.Findings {
			if fd.Code == CodeInternalError {
				t.Errorf("internal error on %q: %s", raw, fd.Message)
			}
		}
	})
}

func TestRemoteNonPublicAddress(t *testing.T) {
	v := newValidator(t)
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"https://169.254.169.254/latest/meta-data/mcp", true},
		{"https://10.0.0.5/mcp", true},
		{"https://[::1]/mcp", true},
		{"https://[::ffff:127.0.0.1]/mcp", true},
		{"https://100.64.1.1/mcp", true},
		{"https://93.184.216.34/mcp", false},
		{"https://mcp.example.com/mcp", false},
	} {
		card := `{"$schema":"` + SchemaURL + `","name":"com.example/x","version":"1.0.0","description":"d","remotes":[{"type":"streamable-http","url":"` + tt.url + `"}]}`
		res := v.Check([]byte(card))
		got := false
		for _, f := range res.Findings {
			got = got || f.Code == CodeRemoteNonPublicAddress
		}
		if got != tt.want {
			t.Errorf("%s: finding %v, want %v (%v)", tt.url, got, tt.want, res.Findings)
		}
	}
}

// A card that earns more findings than a document keeps is graded on all
// of them and keeps MaxPerDocument, its errors first.
func TestCheckBoundsFindings(t *testing.T) {
	v := newValidator(t)
	var remotes []string
	for i := range 600 {
		remotes = append(remotes, fmt.Sprintf(`{"type":"ftp","url":"http://r%d.example.com/mcp"}`, i))
	}
	res := v.Check([]byte(`{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"com.example/x",` +
		`"version":"1.0.0","description":"d","remotes":[` + strings.Join(remotes, ",") + `]}`))
	if n := len(res.Findings); n != finding.MaxPerDocument || !res.Findings.Has(finding.CodeTruncated) || !res.Findings.HasError() {
		t.Errorf("%d findings, truncated %v, errors %v; want %d with %s and errors", n, res.Findings.Has(finding.CodeTruncated),
			res.Findings.HasError(), finding.MaxPerDocument, finding.CodeTruncated)
	}
	if res.Grade != NonConformant {
		t.Errorf("grade %s, want %s", res.Grade, NonConformant)
	}
}
