package catalog

import (
	"mime"
	"strings"
	"testing"
)

// FuzzEssence checks the media-type reader used for entry types and
// Content-Type headers: it is idempotent, drops every parameter, and agrees
// with mime.ParseMediaType (which the probe uses on Content-Type) whenever
// that one reads a type, so the two never classify one header differently.
func FuzzEssence(f *testing.F) {
	for _, s := range []string{
		// Entry types of the AI Catalog examples (testdata/specs) and the
		// Content-Types real servers send.
		MediaTypeCatalog, MediaTypeServerCard, "application/a2a-agent-card+json", "application/vnd.oai.openapi+json;version=3.1",
		`text/markdown; profile="urn:air:agent-skills"`, "application/json; charset=utf-8", "text/event-stream",
		"Application/MCP-Server-Card+JSON; v=1",
		// Hostile: empty, parameters only, spaces of every kind, quoted
		// semicolons, invalid UTF-8, characters whose case maps oddly.
		"", ";", " ; ; ", "\u00a0application/json\u2003", `application/json; a="x;y"`, "appl\xffication/json",
		"APPLİCATION/JSON", "application/json\x00", "\tTEXT/HTML ;", "a/b;c=d;c=e", "K/ſ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		e := Essence(in)
		if Essence(e) != e {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, e, Essence(e))
		}
		if strings.Contains(e, ";") || strings.TrimSpace(e) != e {
			t.Fatalf("Essence(%q) = %q keeps a parameter or spaces", in, e)
		}
		if head, _, found := strings.Cut(in, ";"); !found {
			if got := Essence(in + "; charset=utf-8"); got != e {
				t.Fatalf("a parameter changes the essence of %q: %q, then %q", in, e, got)
			}
		} else if Essence(head) != e {
			t.Fatalf("Essence(%q) = %q differs from its part before ';', %q", in, e, Essence(head))
		}
		if mt, _, err := mime.ParseMediaType(in); mt != "" && mt != e {
			t.Fatalf("Essence(%q) = %q, mime.ParseMediaType reads %q (%v)", in, e, mt, err)
		}
	})
}
