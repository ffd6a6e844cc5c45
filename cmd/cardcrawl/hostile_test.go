package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cardcrawl/cardcrawl/internal/simweb"
	"github.com/cardcrawl/cardcrawl/internal/termsafe"
	"github.com/cardcrawl/cardcrawl/store"
)

// hostile is what a hostile publisher puts in every string it controls: a
// screen clear, an OSC 8 link, a window title, a forged line, a TAB that
// would shift columns, DEL, a C1 control and bidi controls. JSON carries
// all of them; jsonString is how a fixture writes it.
const hostile = "x\x1b[2J\x1b]8;;https://evil.example/\x07link\x1b]8;;\x07\x1b]0;title\x07\r\nforged\ttab\x7f\u009b\u202eright\u2066\u200b"

// hostileMarker is where hostile starts to differ from its escaped form: an
// output that carries the escaped text shows hostile was printed (so the
// safety checks below are not vacuous).
const hostileMarker = `x\x1b[2J\x1b]8;;https://evil.example/\x07link`

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// assertTerminalSafe fails when out carries any character termsafe would
// escape, except the newlines that end lines, or a line starting with text
// that a raw CR or LF would have moved there.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: output is not UTF-8:\n%q", what, out)
	}
	for _, r := range out {
		if r != '\n' && termsafe.Unsafe(r) {
			t.Errorf("%s: raw %U reached stdout:\n%q", what, r, out)
			return
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "forged") {
			t.Errorf("%s: a raw line break forged the line %q", what, line)
		}
	}
}

// hostileWeb serves a domain whose catalog lists a hostile card by URL and
// another inline, both pointing at a live MCP server that answers with a
// hostile name.
func hostileWeb(t *testing.T) (web *simweb.Web, ca string) {
	t.Helper()
	web, err := simweb.New(simweb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := jsonString(hostile)
	card := func(name string) string {
		return `{"$schema":"https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json","name":"` + name +
			`","version":"1.0` + h + `","description":"` + h + `","title":"` + h + `","websiteUrl":"javascript:alert(1)",` +
			`"remotes":[{"type":"streamable-http","url":"https://mcp.hostile.example/mcp"}]}`
	}
	// The MCP fixture line splits on white space, so the server's name
	// carries the non-space controls only.
	mcpName := strings.NewReplacer("\r", "", "\n", "", "\t", "").Replace(hostile)
	fixtures := "-- hostile.example/.well-known/ai-catalog.json --\n" +
		`{"specVersion":"1.0","entries":[{"identifier":"urn:air:hostile.example:mcp:a","type":"application/mcp-server-card+json","url":"https://cards.hostile.example/a"},` +
		`{"identifier":"b` + h + `","type":"application/mcp-server-card+json","data":` + card("com.ex"+h+"ample/inline") + `}]}` + "\n" +
		"-- cards.hostile.example/a --\n" + card("com.example/"+h) + "\n" +
		"-- mcp.hostile.example/mcp --\nSIMWEB-MCP go-sdk-stateful name=" + mcpName + " version=" + mcpName + " tools=1\n"
	if err := web.AddFixtures([]byte(fixtures)); err != nil {
		t.Fatal(err)
	}
	if err := web.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	ca = filepath.Join(t.TempDir(), "ca.pem")
	if err := web.WriteCA(ca); err != nil {
		t.Fatal(err)
	}
	return web, ca
}

// TestHostileStringsNeverReachTheTerminal seeds a database the way a hostile
// publisher would — cards, a live MCP server, Registry entries, a bad line
// in a domains file — and runs every command that prints a table or text:
// nothing that a terminal would act on reaches stdout, while --json keeps
// every value exact.
func TestHostileStringsNeverReachTheTerminal(t *testing.T) {
	web, ca := hostileWeb(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "h.db")
	net := []string{"--connect-to", web.ConnectTo(), "--ca-cert", ca}

	// crawl: a hostile line in the domains file is reported, not obeyed
	// (its own line breaks would make it several lines of the file).
	badLine := strings.NewReplacer("\r", "", "\n", "").Replace(hostile)
	code, stdout, stderr := run(t, "hostile.example\n"+badLine+"\n", append([]string{"crawl", "--db", db, "--domains", "-", "--probe", "always"}, net...)...)
	if code != exitOK {
		t.Fatalf("crawl exit %d: %s", code, stderr)
	}
	checkText(t, "crawl", stdout, hostileMarker)

	// registry sync: a dump with hostile names, versions and descriptions.
	dump := filepath.Join(dir, "dump.json")
	h := jsonString(hostile)
	entries := `[{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/` + h +
		`","description":"` + h + strings.Repeat("long ", 30) + `","version":"` + h + `"},` +
		`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"io.github.` + h +
		`/tool","description":"d","version":"2.0.0","repository":{"url":"https://github.com/` + h + `/tool","source":"github"}}]`
	if err := os.WriteFile(dump, []byte(entries), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "", "registry", "sync", "--db", db, "--from-file", dump)
	if code != exitOK {
		t.Fatalf("registry sync exit %d: %s", code, stderr)
	}
	checkText(t, "registry sync", stdout, hostileMarker)

	// probe: the live server's own name.
	code, stdout, stderr = run(t, "", append([]string{"probe", "--db", db, "--save", "https://mcp.hostile.example/mcp"}, net...)...)
	if code != exitOK {
		t.Fatalf("probe exit %d: %s", code, stderr)
	}
	mcpMarker := `x\x1b[2J\x1b]8;;https://evil.example/\x07link`
	checkText(t, "probe", stdout, mcpMarker)

	// Nothing this program writes today puts such text in a domain's
	// reason, but the output must not trust what the database holds (an
	// older version, another worker on a shared store may have written it).
	seedHostileDomain(t, db)

	for _, tc := range []struct {
		args   []string
		marker string // escaped text the table must show
		exact  func(t *testing.T, out string)
	}{
		{[]string{"servers"}, hostileMarker, wantJSONValue(hostile)},
		{[]string{"probes"}, mcpMarker, wantJSONValue(strings.NewReplacer("\r", "", "\n", "", "\t", "").Replace(hostile))},
		{[]string{"domains"}, hostileMarker, wantJSONValue(hostile)},
		{[]string{"diff"}, hostileMarker, wantJSONValue(hostile)},
		{[]string{"namespaces"}, `io.github.x\x1b[2J`, wantJSONValue("io.github." + hostile[:strings.Index(hostile, "/")])}, // a namespace ends at the first "/"
		{[]string{"registry", "entries"}, hostileMarker, wantJSONValue("com.example/" + hostile)},
	} {
		name := strings.Join(tc.args, " ")
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr := run(t, "", append(tc.args, "--db", db)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			checkText(t, name, stdout, tc.marker)
			code, stdout, stderr = run(t, "", append(tc.args, "--db", db, "--json")...)
			if code != exitOK {
				t.Fatalf("--json exit %d: %s", code, stderr)
			}
			assertTerminalSafe(t, name+" --json", stdout)
			tc.exact(t, stdout)
		})
	}
}

// checkText asserts a human output is terminal-safe and shows the hostile
// text escaped.
func checkText(t *testing.T, what, out, marker string) {
	t.Helper()
	assertTerminalSafe(t, what, out)
	if !strings.Contains(out, marker) {
		t.Errorf("%s: the hostile text is not shown escaped (want %q in):\n%s", what, marker, out)
	}
}

// wantJSONValue checks that some string in the JSON output is exactly want.
func wantJSONValue(want string) func(t *testing.T, out string) {
	return func(t *testing.T, out string) {
		t.Helper()
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("--json output does not parse: %v\n%s", err, out)
		}
		if !containsString(v, want) {
			t.Errorf("--json lost the exact value %q:\n%s", want, out)
		}
	}
}

func containsString(v any, want string) bool {
	switch x := v.(type) {
	case string:
		return x == want
	case []any:
		for _, e := range x {
			if containsString(e, want) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if k == want || containsString(e, want) {
				return true
			}
		}
	}
	return false
}

func seedHostileDomain(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Enqueue(ctx, []string{"reason.example"}, store.EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveDomain(ctx, store.DomainResult{Domain: "reason.example", Outcome: store.OutcomeFailed, Class: "tls",
		Reason: hostile, NextFetchAfter: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(fmt.Errorf("seed a domain: %w", err))
	}
}
