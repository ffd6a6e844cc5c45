package registry

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// ErrNotEnvelope means a body parsed as JSON but is not a v0.1 list response.
var ErrNotEnvelope = errors.New("not a v0.1 server list envelope")

// Page is one parsed page of GET /v0.1/servers (or /versions).
type Page struct {
	Entries    []Entry
	NextCursor string
	Count      int
	// Findings are about entries that were skipped or partly unreadable;
	// Path is a JSON pointer into the page.
	Findings finding.List
}

type envelope struct {
	Servers  *[]json.RawMessage `json:"servers"`
	Metadata *struct {
		NextCursor string `json:"nextCursor"`
		Count      int    `json:"count"`
	} `json:"metadata"`
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
		path := "/servers/" + strconv.Itoa(i)
		e, ok := parseResponse(raw, path, &p.Findings)
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
			e, ok := parseServer(raw, "/"+strconv.Itoa(i), &fl)
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

// parseResponse reads one ServerResponse {server, _meta}.
func parseResponse(raw json.RawMessage, path string, fl *finding.List) (Entry, bool) {
	if !isObject(raw) {
		fl.Add(finding.Error, "entry_not_object", path, "list entry is not a JSON object; skipped")
		return Entry{}, false
	}
	var r struct {
		Server json.RawMessage `json:"server"`
		Meta   json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		fl.Add(finding.Error, "entry_unreadable", path, "list entry: "+err.Error()+"; skipped")
		return Entry{}, false
	}
	e, ok := parseServer(r.Server, path+"/server", fl)
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
			fl.Add(finding.Warning, "meta_not_object", path+"/_meta", "response _meta is not an object")
		} else if om, ok := m[OfficialMetaKey]; ok {
			var o Official
			if err := json.Unmarshal(om, &o); err != nil {
				fl.Add(finding.Warning, "official_meta_unreadable", path+"/_meta", "official metadata: "+err.Error())
			} else {
				e.Official = &o
			}
		}
	}
	return e, true
}

// parseServer reads one server.json. Name and version are the store's key,
// so an entry without them cannot be kept.
func parseServer(raw json.RawMessage, path string, fl *finding.List) (Entry, bool) {
	if !isObject(raw) {
		fl.Add(finding.Error, "server_not_object", path, "server is missing or not a JSON object; skipped")
		return Entry{}, false
	}
	var s Server
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
		fl.Add(finding.Warning, "server_fields_unreadable", path, "server.json: "+err.Error())
	}
	if s.Name == "" || s.Version == "" {
		fl.Add(finding.Error, "server_missing_key", path, "server.json lacks a name or version; skipped")
		return Entry{}, false
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		fl.Add(finding.Error, "entry_unreadable", path, err.Error())
		return Entry{}, false
	}
	return Entry{Server: s, Raw: buf.Bytes()}, true
}
