package feed

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cardcrawl/cardcrawl/servercard"
)

// Formats accepted by Write.
var Formats = []string{"json", "jsonl", "csv", "ai-catalog"}

// Write writes records in the named format.
func Write(w io.Writer, format string, records []Record) error {
	switch format {
	case "jsonl":
		return writeJSONL(w, records)
	case "json":
		return writeJSON(w, RegistryList(records))
	case "csv":
		return writeCSV(w, records)
	case "ai-catalog":
		return writeJSON(w, AICatalog(records))
	default:
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
	}
}

func writeJSONL(w io.Writer, records []Record) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("write jsonl: %w", err)
		}
	}
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// CSVHeader names the CSV columns, in order.
var CSVHeader = []string{"endpoint", "transport", "templated", "name", "title", "version", "grade", "card_url",
	"listed_by", "first_seen", "last_seen", "probe_outcome", "tool_count"}

func writeCSV(w io.Writer, records []Record) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	for _, r := range records {
		outcome, tools := "", ""
		if r.Probe != nil {
			outcome = r.Probe.Outcome
			if r.Probe.ToolCount != nil {
				tools = strconv.Itoa(*r.Probe.ToolCount)
			}
		}
		cardURL := r.CardURL
		if cardURL == "" {
			cardURL = r.CardKey
		}
		row := []string{r.Endpoint, r.Transport, strconv.FormatBool(r.Templated), r.Name, r.Title,
			r.Version, r.Grade, cardURL, strings.Join(r.Domains(), " "), r.FirstSeen, r.LastSeen, outcome, tools}
		for i := range row {
			row[i] = csvCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("write csv: %w", err)
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvCell neutralises a cell a spreadsheet would run as a formula: names,
// titles and versions come from cards, and "=HYPERLINK(…)" or "@SUM(…)" in
// one must stay text when the feed is opened in Excel, LibreOffice or Google
// Sheets. OWASP's rule: a cell starting with =, +, -, @, TAB or CR gets a
// leading single quote, which those programs show as text. csv.Writer still
// quotes what needs quoting. Every cell goes through here, the program's own
// included, so no column is forgotten when one is added.
func csvCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// RegistrySchema is the server.json schema the Registry-compatible feed claims.
const RegistrySchema = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

// MetaKey is the namespaced _meta key under which the feed says where each
// server was found.
const MetaKey = "io.github.cardcrawl/discovery"

// RegistryEntry is one server in the Registry v0.1 list shape.
type RegistryEntry struct {
	Server map[string]any `json:"server"`
	Meta   map[string]any `json:"_meta"`
}

// RegistryListing is the Registry v0.1 `GET /v0.1/servers` envelope.
type RegistryListing struct {
	Servers  []RegistryEntry `json:"servers"`
	Metadata map[string]any  `json:"metadata"`
}

// RegistryList groups endpoint records by the card that describes them, so
// each such card becomes one server.json-shaped entry carrying the remotes
// found for it, with the discovery facts under a namespaced _meta key. A card
// whose endpoints are all described by a better-graded card, or that has no
// name, has no entry of its own.
func RegistryList(records []Record) RegistryListing {
	type group struct {
		rec     Record
		remotes []servercard.Remote
		found   []Record
	}
	var order []string
	groups := map[string]*group{}
	for _, r := range records {
		g, ok := groups[r.CardKey]
		if !ok {
			g = &group{rec: r}
			groups[r.CardKey] = g
			order = append(order, r.CardKey)
		}
		g.found = append(g.found, r)
		if r.Endpoint == "" || r.card == nil {
			continue
		}
		for _, rm := range r.card.Remotes {
			if rm.URL == r.Endpoint {
				g.remotes = append(g.remotes, rm)
				break
			}
		}
	}
	out := RegistryListing{Servers: []RegistryEntry{}}
	for _, key := range order {
		g := groups[key]
		if g.rec.Name == "" {
			// A server.json must have a name; a nameless card stays in the
			// JSONL/CSV feed with its grade, but not in the Registry shape.
			continue
		}
		srv := map[string]any{"$schema": RegistrySchema, "name": g.rec.Name, "description": g.rec.Description,
			"version": g.rec.Version}
		if g.rec.Title != "" {
			srv["title"] = g.rec.Title
		}
		if g.rec.WebsiteURL != "" {
			srv["websiteUrl"] = g.rec.WebsiteURL
		}
		if g.rec.Repository != nil {
			srv["repository"] = g.rec.Repository
		}
		if g.rec.card != nil && len(g.rec.card.Icons) > 0 {
			srv["icons"] = g.rec.card.Icons
		}
		if len(g.remotes) > 0 {
			srv["remotes"] = g.remotes
		}
		found := make([]map[string]any, 0, len(g.found))
		for _, f := range g.found {
			m := map[string]any{"endpoint": f.Endpoint, "listedBy": f.ListedBy, "firstSeen": f.FirstSeen, "lastSeen": f.LastSeen}
			if f.Probe != nil {
				m["probe"] = f.Probe
			}
			found = append(found, m)
		}
		out.Servers = append(out.Servers, RegistryEntry{Server: srv, Meta: map[string]any{MetaKey: map[string]any{
			"cardUrl": g.rec.CardURL, "cardKey": g.rec.CardKey, "grade": g.rec.Grade, "findings": g.rec.Findings,
			"endpoints": found,
		}}})
	}
	out.Metadata = map[string]any{"count": len(out.Servers)}
	return out
}

// AICatalog publishes the discovered cards as an AI Catalog with their
// publishers' identifiers (see DirectoryCatalog; none are minted).
func AICatalog(records []Record) map[string]any {
	c, _ := DirectoryCatalog(records, CatalogOptions{})
	return c
}
