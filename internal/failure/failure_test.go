package failure

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// declared finds every constant of type typ declared in table.go, so a
// class added there without a row in the table fails the test below.
func declared(t *testing.T, typ string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "table.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			id, ok := vs.Type.(*ast.Ident)
			if !ok || id.Name != typ {
				continue
			}
			for _, v := range vs.Values {
				lit, ok := v.(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s constant %v is not a literal", typ, vs.Names)
				}
				s, _ := strconv.Unquote(lit.Value)
				out = append(out, s)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no %s constants found in table.go", typ)
	}
	return out
}

// Every class has every meaning: a row, a known probe outcome and a text.
// (The booleans are enforced by the unkeyed rows: a row without them does
// not compile.)
func TestEveryClassHasEveryMeaning(t *testing.T) {
	for _, name := range declared(t, "Class") {
		c := Class(name)
		if c == None {
			if c.Known() {
				t.Errorf("success (\"\") must not be a failure class")
			}
			continue
		}
		m, ok := Of(c)
		if !ok {
			t.Errorf("class %q has no row in the table", c)
			continue
		}
		if !m.Probe.Known() {
			t.Errorf("class %q maps to probe outcome %q, which is not in the outcome table", c, m.Probe)
		}
		if strings.TrimSpace(m.Text) == "" || strings.Contains(m.Text, "\n") {
			t.Errorf("class %q needs a one-line text, got %q", c, m.Text)
		}
		if c.Text() != m.Text || c.Transient() != m.Transient || c.Retried() != m.Retried {
			t.Errorf("class %q: accessors disagree with the row", c)
		}
	}
	if got, want := len(Classes()), len(declared(t, "Class"))-1; got != want {
		t.Errorf("the table has %d rows for %d declared classes", got, want)
	}
}

func TestEveryOutcomeIsDescribed(t *testing.T) {
	names := declared(t, "Outcome")
	for _, name := range names {
		if o := Outcome(name); o.Text() == "" || o.Words() == "" {
			t.Errorf("outcome %q lacks a description or its words", o)
		}
	}
	if len(Outcomes()) != len(names) {
		t.Errorf("%d outcomes described, %d declared", len(Outcomes()), len(names))
	}
}

// The failure breakdown speaks the directories' words; each outcome has
// its own, so no two rows of a summary read alike.
func TestOutcomeWords(t *testing.T) {
	want := map[Outcome]string{
		OutcomeHTTP4xx:           "HTTP 4xx error",
		OutcomeConnect:           "could not connect",
		OutcomeHTTP5xx:           "HTTP 5xx error",
		OutcomeTimeout:           "no answer in 15 seconds",
		OutcomeNotMCP:            "answered, but not as an MCP server",
		OutcomeRateLimited:       "rate limited (HTTP 429)",
		OutcomeHandshakeRejected: "rejected the handshake",
		OutcomeOK:                "answered as an MCP server",
		OutcomeRequiresLogin:     "requires login (HTTP 401/403)",
		OutcomeBlocked:           "not checked: address refused",
		OutcomeCanceled:          "interrupted",
	}
	got := map[Outcome]string{}
	seen := map[string]Outcome{}
	for _, o := range Outcomes() {
		got[o] = o.Words()
		if other, dup := seen[o.Words()]; dup {
			t.Errorf("%s and %s share the words %q", o, other, o.Words())
		}
		seen[o.Words()] = o
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outcome words (-want +got):\n%s", diff)
	}
	if Outcome("nonsense").Words() != "" {
		t.Error("an unknown outcome has words")
	}
}

// The decisions the four old copies disagreed on, made once.
func TestDecisions(t *testing.T) {
	type row struct {
		Transient, Miss, Retried bool
		Probe                    Outcome
	}
	want := map[Class]row{
		DNS:               {true, false, false, OutcomeConnect},
		Connect:           {true, false, true, OutcomeConnect},
		TLS:               {false, false, false, OutcomeConnect},
		Timeout:           {true, false, false, OutcomeTimeout},
		HTTP404:           {false, true, false, OutcomeHTTP4xx},
		HTTP429:           {true, false, false, OutcomeRateLimited},
		HTTP5xx:           {true, false, false, OutcomeHTTP5xx},
		Soft404:           {false, true, false, OutcomeNotMCP},
		BlockedPort:       {false, false, false, OutcomeBlocked},
		StoredBodyMissing: {true, false, false, OutcomeNotMCP},
		NoResponse:        {false, false, false, OutcomeNotMCP},
		Canceled:          {true, false, false, OutcomeCanceled},
	}
	for c, w := range want {
		m, _ := Of(c)
		p, _ := c.ProbeOutcome()
		got := row{c.Transient(), Miss(c, 0), c.Retried(), p}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c, diff)
		}
		if m.Probe != p {
			t.Errorf("%s: ProbeOutcome disagrees with the row", c)
		}
	}
	var retried []Class
	for _, c := range Classes() {
		if c.Retried() {
			retried = append(retried, c)
		}
	}
	if diff := cmp.Diff([]Class{Connect}, retried); diff != "" {
		t.Errorf("only a dropped connection is retried (-want +got):\n%s", diff)
	}
}

func TestMissByStatus(t *testing.T) {
	tests := []struct {
		c      Class
		status int
		want   bool
	}{
		{HTTP404, 404, true},
		{HTTP4xx, 410, true},
		{HTTP4xx, 403, false},
		{Soft404, 200, true},
		{HTTP5xx, 503, false},
		{Timeout, 0, false},
		{None, 200, false},
		{Class("no_such_class"), 410, false},
	}
	for _, tt := range tests {
		if got := Miss(tt.c, tt.status); got != tt.want {
			t.Errorf("Miss(%q, %d) = %v, want %v", tt.c, tt.status, got, tt.want)
		}
	}
}

func TestUnknownClass(t *testing.T) {
	c := Class("no_such_class")
	if c.Known() || c.Transient() || c.Retried() || c.Text() != "" {
		t.Errorf("an unknown class must mean nothing")
	}
	if _, ok := c.ProbeOutcome(); ok {
		t.Errorf("an unknown class must have no probe outcome")
	}
}

var update = flag.Bool("update", false, "rewrite README's failure-class table from the table")

const readme = "../../README.md"

// README's failure-class table lists every class with the table's own
// words, so the documentation cannot drift from the code ('go test
// ./internal/failure -update' rewrites it).
func TestREADMEListsEveryClass(t *testing.T) {
	b, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		b = rewriteTable(t, b)
		if err := os.WriteFile(readme, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, section, ok := strings.Cut(string(b), "\n### Failure classes\n")
	if !ok {
		t.Fatal("README has no '### Failure classes' section")
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, " | ")
		rows[strings.Trim(strings.TrimPrefix(cells[0], "| "), "`")] = line
	}
	for _, c := range Classes() {
		want := markdownRow(c)
		got, ok := rows[string(c)]
		switch {
		case !ok:
			t.Errorf("README's failure classes lack %q; add:\n%s", c, want)
		case got != want:
			t.Errorf("README's row for %q is\n%s\nwant\n%s", c, got, want)
		}
		delete(rows, string(c))
	}
	for c := range rows {
		t.Errorf("README lists %q, which is not a class", c)
	}
}

// rewriteTable replaces the first table of README's failure-class section
// with MarkdownTable.
func rewriteTable(t *testing.T, b []byte) []byte {
	t.Helper()
	lines := strings.SplitAfter(string(b), "\n")
	start, end := -1, -1
	in := false
	for i, l := range lines {
		switch {
		case l == "### Failure classes\n":
			in = true
		case in && start < 0 && strings.HasPrefix(l, "|"):
			start = i
		case in && start >= 0 && !strings.HasPrefix(l, "|"):
			end = i
		}
		if end >= 0 {
			break
		}
	}
	if start < 0 || end < 0 {
		t.Fatal("README's failure-class section has no table to rewrite")
	}
	return []byte(strings.Join(lines[:start], "") + MarkdownTable() + strings.Join(lines[end:], ""))
}
