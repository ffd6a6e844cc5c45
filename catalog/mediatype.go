package catalog

import (
	"bytes"
	"strings"
)

const (
	// MediaTypeCatalog is the media type of an AI Catalog, also used as the
	// `type` of entries that nest another catalog.
	MediaTypeCatalog = "application/ai-catalog+json"
	// MediaTypeServerCard is the `type` of entries that point at (or inline)
	// an MCP Server Card.
	MediaTypeServerCard = "application/mcp-server-card+json"
	// WellKnownPath is where a host may serve its AI Catalog (RFC 8615).
	WellKnownPath = "/.well-known/ai-catalog.json"
)

// Essence returns the media type without parameters, lower-cased and trimmed:
// "Application/MCP-Server-Card+JSON; v=1" → "application/mcp-server-card+json".
// It follows mime.ParseMediaType's reading of the part before ';' but never
// fails: garbage comes back trimmed and lower-cased, so that comparisons stay
// exact rather than falling back to substring matching.
func Essence(mediaType string) string {
	s, _, _ := strings.Cut(mediaType, ";")
	return strings.ToLower(strings.TrimSpace(s))
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// LooksLikeHTML reports whether a body that was supposed to be JSON is an HTML
// page (a soft 404): optional BOM and whitespace, then '<'. No JSON value can
// start with '<', so this never misreads a catalog.
func LooksLikeHTML(body []byte) bool {
	b := bytes.TrimPrefix(body, utf8BOM)
	b = bytes.TrimLeft(b, " \t\r\n\f")
	return len(b) > 0 && b[0] == '<'
}
