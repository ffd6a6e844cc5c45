package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/registry/wire"
)

// ErrNotEnvelope means a body parsed as JSON but is not a v0.1 list response.
var ErrNotEnvelope = errors.New("not a v0.1 server list envelope")

// Page is one parsed page of GET /v0.1/servers (or /versions).
type Page struct {
	Entries    []Entry
	NextCursor string
	Count      int
	// Findings are about entries that were skipped, each naming the entry
	// by its index (and its name when it has one); Path is a JSON pointer
	// into the page. What is found about an entry that is kept is in its
	// Entry.Findings.
	Findings finding.List
}

// envelope is wire.ServerList read tolerantly: a missing servers or
// metadata member is told apart from an empty one.
type envelope struct {
	Servers  *[]json.RawMessage `json:"servers"`
	Metadata *wire.Metadata     `json:"metadata"`
}

// ParseListPage parses a v0.1 list response. A body that is not JSON or not
// the envelope is an error; an entry that cannot be used is a finding and is
// skipped, so one bad entry never costs the rest of the page.
func ParseListPage(body []byte) (Page, error) {
	raw, err := parseEnvelope(body)
	if err != nil {
		return Page{}, err
	}
	return raw.parse(), nil
}

// rawPage is a list response whose entries are not parsed yet: reading the
// envelope alone yields the next cursor, so the sync can ask for the next
// page while this one's entries are parsed and validated elsewhere.
type rawPage struct {
	servers    []json.RawMessage
	nextCursor string
	count      int
}

func parseEnvelope(body []byte) (rawPage, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return rawPage{}, fmt.Errorf("parse server list: %w", err)
	}
	if env.Servers == nil {
		return rawPage{}, fmt.Errorf("parse server list: %w (no \"servers\" array)", ErrNotEnvelope)
	}
	r := rawPage{servers: *env.Servers}
	if env.Metadata != nil {
		r.nextCursor = env.Metadata.NextCursor
		r.count = env.Metadata.Count
	}
	return r, nil
}

// parse reads every entry of the page.
func (r rawPage) parse() Page {
	p := Page{NextCursor: r.nextCursor, Count: r.count, Entries: make([]Entry, 0, len(r.servers))}
	for i, raw := range r.servers {
		e, ok := parseResponse(raw, i, "/servers/"+strconv.Itoa(i), &p.Findings)
		if ok {
			p.Entries = append(p.Entries, e)
		}
	}
	return p
}

// ParseDump parses an offline dump: either a v0.1 list envelope (its
// nextCursor is ignored) or a JSON array of bare server.json documents.
func ParseDump(body []byte) ([]Entry, finding.List, error) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var raws []json.RawMessage
		if err := json.Unmarshal(trimmed, &raws); err != nil {
			return nil, nil, fmt.Errorf("parse dump: %w", err)
		}
		var fl finding.List
		entries := make([]Entry, 0, len(raws))
		for i, raw := range raws {
			e, ok := parseServer(raw, i, "/"+strconv.Itoa(i), &fl)
			if ok {
				entries = append(entries, e)
			}
		}
		return entries, fl, nil
	}
	p, err := ParseListPage(body)
	if err != nil {
		return nil, nil, fmt.Errorf("parse dump: %w", err)
	}
	return p.Entries, p.Findings, nil
}

func isObject(raw json.RawMessage) bool {
	t := bytes.TrimLeft(raw, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

// parseResponse reads one ServerResponse {server, _meta}, the index-th
// entry of its page. An entry that cannot be kept is a finding in skipped
// that names it; what is found about a kept entry goes with it.
func parseResponse(raw json.RawMessage, index int, path string, skipped *finding.List) (Entry, bool) {
	if !isObject(raw) {
		skipped.Add(finding.Error, CodeEntryNotObject, path, entryLabel(index, "")+" is not a JSON object; skipped")
		return Entry{}, false
	}
	var r wire.ServerResponse[json.RawMessage, json.RawMessage]
	if err := json.Unmarshal(raw, &r); err != nil {
		skipped.Add(finding.Error, CodeEntryUnreadable, path, entryLabel(index, nameOf(raw))+": "+err.Error()+"; skipped")
		return Entry{}, false
	}
	e, ok := parseServer(r.Server, index, path+"/server", skipped)
	if !ok {
		return Entry{}, false
	}
	if len(r.Meta) > 0 && !bytes.Equal(r.Meta, []byte("null")) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.Meta); err == nil {
			e.Meta = buf.Bytes()
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.Meta, &m); err != nil {
			e.Findings.Add(finding.Warning, CodeMetaNotObject, path+"/_meta", "response _meta is not an object")
		} else if om, ok := m[OfficialMetaKey]; ok {
			var o Official
			if err := json.Unmarshal(om, &o); err != nil {
				e.Findings.Add(finding.Warning, CodeOfficialMetaUnreadable, path+"/_meta", "official metadata: "+err.Error())
			} else {
				e.Official = &o
			}
		}
	}
	return e, true
}

// entryLabel names an entry in a message: its index, and its name when it
// has one.
func entryLabel(index int, name string) string {
	if name == "" {
		return fmt.Sprintf("entry %d", index)
	}
	return fmt.Sprintf("entry %d (%q)", index, name)
}

// nameOf digs a server name out of a list entry or a server.json for a
// message, "" when there is none.
func nameOf(raw json.RawMessage) string {
	var doc struct {
		Name   any `json:"name"`
		Server struct {
			Name any `json:"name"`
		} `json:"server"`
	}
	_ = json.Unmarshal(raw, &doc)
	if s, ok := doc.Name.(string); ok {
		return s
	}
	s, _ := doc.Server.Name.(string)
	return s
}

// draftVersion is where server.json kept its version before the 2025-07-09
// schema was published: "version_detail": {"version": "1.0.2"}. Real
// repositories still commit that shape (often with the 2025-07-09 $schema).
type draftVersion struct {
	VersionDetail *struct {
		Version any `json:"version"`
	} `json:"version_detail"`
}

// parseServer reads one server.json, the index-th entry of its page or
// dump. Name and version are the store's key, so an entry without them
// cannot be kept; a draft-era version_detail.version stands in for a
// missing version, with a finding that says so.
func parseServer(raw json.RawMessage, index int, path string, skipped *finding.List) (Entry, bool) {
	if !isObject(raw) {
		skipped.Add(finding.Error, CodeServerNotObject, path, entryLabel(index, "")+": server is missing or not a JSON object; skipped")
		return Entry{}, false
	}
	var (
		s  Server
		fl finding.List
	)
	if err := json.Unmarshal(raw, &s); err != nil {
		// A field of the wrong type must not hide the rest: fall back to
		// the key fields only and let validation report the details.
		var key struct {
			Schema  any `json:"$schema"`
			Name    any `json:"name"`
			Version any `json:"version"`
		}
		_ = json.Unmarshal(raw, &key)
		s = Server{}
		s.Schema, _ = key.Schema.(string)
		s.Name, _ = key.Name.(string)
		s.Version, _ = key.Version.(string)
		fl.Add(finding.Warning, CodeServerFieldsUnreadable, path, "server.json: "+err.Error())
	}
	if s.Version == "" {
		var d draftVersion
		if json.Unmarshal(raw, &d) == nil && d.VersionDetail != nil {
			if v, ok := d.VersionDetail.Version.(string); ok && v != "" {
				s.Version = v
				fl.Add(finding.Error, CodeVersionInVersionDetail, path+"/version_detail/version",
					fmt.Sprintf("the version %q is in version_detail.version, the draft layout from before the 2025-07-09 schema; "+
						"every published schema and the Registry want it as the top-level version, so the Registry would reject this", v))
			}
		}
	}
	switch {
	case s.Name == "" && s.Version == "":
		skipped.Add(finding.Error, CodeServerMissingKey, path, entryLabel(index, "")+": server.json has neither a name nor a version; skipped")
		return Entry{}, false
	case s.Name == "":
		skipped.Add(finding.Error, CodeServerMissingKey, path, fmt.Sprintf("%s: server.json (version %q) has no name; skipped", entryLabel(index, ""), s.Version))
		return Entry{}, false
	case s.Version == "":
		skipped.Add(finding.Error, CodeServerMissingKey, path, entryLabel(index, s.Name)+": server.json has no version (nor a draft-era version_detail.version); skipped")
		return Entry{}, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		skipped.Add(finding.Error, CodeEntryUnreadable, path, entryLabel(index, s.Name)+": "+err.Error()+"; skipped")
		return Entry{}, false
	}
	return Entry{Server: s, Raw: buf.Bytes(), Findings: fl}, true
}
