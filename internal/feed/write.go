package feed

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/jsonstream"
	"github.com/cardcrawl/cardcrawl/store"
)

// Source is what the writers read: the store's feed, streamed.
type Source interface {
	EachFeedServer(ctx context.Context, q store.FeedQuery, fn func(*store.FeedServer) error) error
	EachFeedEntry(ctx context.Context, filter store.FeedFilter, want store.Facts, fn func(*store.FeedEntry) error) error
}

// WriteOptions change what a writer writes.
type WriteOptions struct {
	// Since, when set, asks for the delta feed: what changed after it,
	// tombstones included (formats with Delta only). A stored time
	// (store.FormatTime).
	Since string
	// Filter keeps the records it matches (every format).
	Filter store.FeedFilter
	// Catalog says who aggregates the AI Catalog (ai-catalog only).
	Catalog CatalogOptions
	// Skipped, when set, receives how many entries the AI Catalog left out
	// for want of a publisher identifier (see CatalogOptions).
	Skipped *int
}

// Format is one published shape of the feed. Adding a format is adding a
// row to Formats: the CLI's help and --format, export and serve read it.
type Format struct {
	Name        string
	ContentType string
	// Path is where serve publishes it.
	Path string
	// Help says what it is, for the CLI.
	Help string
	// Delta: the format can carry the delta feed (WriteOptions.Since).
	Delta bool
	write func(ctx context.Context, w io.Writer, src Source, opts WriteOptions) error
}

// Formats are the feed's formats, in the order help lists them.
var Formats = []Format{
	{Name: "jsonl", ContentType: "application/jsonl", Path: "/feed.jsonl", Delta: true,
		Help:  "one JSON record per server (endpoint, or card without remote); with --since, changes and tombstones",
		write: writeJSONL},
	{Name: "json", ContentType: "application/json", Path: "/feed.json",
		Help: "the Registry v0.1 list shape, one server.json entry per describing card (and with --source registry or all, per Registry entry of servers no card declares)", write: writeRegistryJSON},
	{Name: "csv", ContentType: "text/csv; charset=utf-8", Path: "/feed.csv",
		Help: "one row per server, formula cells neutralised", write: writeCSV},
	{Name: "ai-catalog", ContentType: "application/ai-catalog+json", Path: "/.well-known/ai-catalog.json",
		Help: "an AI Catalog of the discovered cards (with --source registry or all, also a card made of each Registry entry of servers no card declares)", write: writeAICatalog},
}

// FormatNames lists the formats' names.
func FormatNames() []string {
	out := make([]string, len(Formats))
	for i, f := range Formats {
		out[i] = f.Name
	}
	return out
}

// FormatNamed finds a format by name.
func FormatNamed(name string) (Format, bool) {
	for _, f := range Formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// ErrNoDelta: the format cannot carry the delta feed.
var ErrNoDelta = errors.New("this format has no delta form")

// Write streams the feed from src to w in this format.
func (f Format) Write(ctx context.Context, w io.Writer, src Source, opts WriteOptions) error {
	if opts.Since != "" && !f.Delta {
		return fmt.Errorf("%s: %w", f.Name, ErrNoDelta)
	}
	return f.write(ctx, w, src, opts)
}

// Write writes the feed in the named format.
func Write(ctx context.Context, w io.Writer, format string, src Source, opts WriteOptions) error {
	f, ok := FormatNamed(format)
	if !ok {
		return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(FormatNames(), ", "))
	}
	return f.Write(ctx, w, src, opts)
}

func newEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

func writeJSONL(ctx context.Context, w io.Writer, src Source, opts WriteOptions) error {
	enc := newEncoder(w)
	var line []byte
	q := store.FeedQuery{Since: opts.Since, FeedFilter: opts.Filter, Facts: recordFacts}
	if opts.Since == "" {
		// Every record is listed, and updatedAt is the delta's alone.
		q.Facts &^= store.FactChange
	}
	err := src.EachFeedServer(ctx, q, func(s *store.FeedServer) error {
		if s.Removed() {
			return enc.Encode(NewTombstone(s))
		}
		r := NewRecord(s)
		if opts.Since != "" {
			r.UpdatedAt = s.UpdatedAt
		}
		line = append(appendRecord(line[:0], &r), '\n')
		_, err := w.Write(line)
		return err
	})
	if err != nil {
		return fmt.Errorf("write jsonl: %w", err)
	}
	return nil
}

// recordFacts are the parts of a stored record a Record carries: all but
// the card's remote and icons, which the Registry shape alone prints.
const recordFacts = store.FactRegistry | store.FactProbeHistory | store.FactReconcile | store.FactNamespace |
	store.FactServer | store.FactCardText | store.FactFindings | store.FactProbe | store.FactDecision |
	store.FactCategory | store.FactChange

// CSVHeader names the CSV columns, in order.
var CSVHeader = []string{"endpoint", "transport", "templated", "name", "title", "version", "grade", "card_url",
	"listed_by", "first_seen", "last_seen", "probe_outcome", "tool_count", "sources", "registry_name",
	"registry_version", "registry_status", "namespace_method", "listing_findings"}

func writeCSV(ctx context.Context, w io.Writer, src Source, opts WriteOptions) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	// The columns print the server, its latest probe, the Registry entry
	// and the namespace method only.
	q := store.FeedQuery{FeedFilter: opts.Filter,
		Facts: store.FactServer | store.FactProbe | store.FactRegistry | store.FactNamespace}
	err := src.EachFeedServer(ctx, q, func(s *store.FeedServer) error {
		return cw.Write(csvRow(NewRecord(s)))
	})
	if err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	cw.Flush()
	return cw.Error()
}

func csvRow(r Record) []string {
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
		r.Version, r.Grade, cardURL, strings.Join(r.Domains(), " "), r.FirstSeen, r.LastSeen, outcome, tools,
		strings.Join(r.Sources, " "), "", "", "", "", listingFindings(r.ListedBy)}
	if e := r.Registry; e != nil {
		row[14], row[15], row[16] = e.Name, e.Version, e.Status
	}
	if n := r.Namespace; n != nil {
		row[17] = n.Method
	}
	for i := range row {
		row[i] = csvCell(row[i])
	}
	return row
}

// listingFindings is the CSV's one cell for what the listings' catalogs
// found of their entries: every listing's codes, written as the store
// writes one listing's.
func listingFindings(ls []Listing) string {
	var codes []string
	for _, l := range ls {
		codes = append(codes, l.Findings...)
	}
	return store.CodesText(codes)
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

// writeMember writes `"name": value` at the envelope's first level, value
// indented as encoding/json would.
func writeMember(w io.Writer, name string, v any, last bool) error {
	var buf bytes.Buffer
	enc := newEncoder(&buf)
	enc.SetIndent("  ", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1)
	sep := ",\n"
	if last {
		sep = "\n}\n"
	}
	_, err := fmt.Fprintf(w, "  %q: %s%s", name, buf.Bytes(), sep)
	return err
}

func writeRegistryJSON(ctx context.Context, w io.Writer, src Source, opts WriteOptions) error {
	if _, err := io.WriteString(w, "{\n  \"servers\": "); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	arr := jsonstream.New(w, "  ")
	var raw []byte
	var parts storedParts
	err := src.EachFeedEntry(ctx, opts.Filter, registryEntryParts, func(e *store.FeedEntry) error {
		entry, ok := newRegistryEntry(e, false, &parts)
		if !ok {
			return nil
		}
		raw = appendRegistryEntryParts(raw[:0], &entry, &parts)
		return arr.AddRaw(raw)
	})
	if err == nil {
		err = arr.Close()
	}
	if err == nil {
		_, err = io.WriteString(w, ",\n")
	}
	if err == nil {
		err = writeMember(w, "metadata", metadata{Count: arr.Len()}, true)
	}
	if err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// metadata is the export's list metadata: the count only.
type metadata struct {
	Count int `json:"count"`
}
