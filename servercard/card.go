package servercard

import (
	"encoding/json"
)

// SchemaURL is the only `$schema` value a v1 Server Card may carry. It names the
// vendored schema; it is never fetched.
const SchemaURL = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"

// Remote transport types a card may declare.
const (
	TransportStreamableHTTP = "streamable-http"
	// TransportSSE is the deprecated HTTP+SSE transport; still valid in a card.
	TransportSSE = "sse"
)

// Grade is the conformance verdict for one card document (see the package doc
// for the rules).
type Grade string

// The three grades, stored as these strings.
const (
	Conformant     Grade = "conformant"
	NearConformant Grade = "near_conformant"
	NonConformant  Grade = "non_conformant"
)

// Grades lists the grades, best first.
func Grades() []Grade { return []Grade{Conformant, NearConformant, NonConformant} }

// Card is an MCP Server Card (SEP-2127, schema v1). Unknown members are not
// kept here; callers keep the raw bytes for that.
type Card struct {
	Schema      string          `json:"$schema,omitempty"`
	Name        string          `json:"name,omitempty"`
	Version     string          `json:"version,omitempty"`
	Description string          `json:"description,omitempty"`
	Title       string          `json:"title,omitempty"`
	WebsiteURL  string          `json:"websiteUrl,omitempty"`
	Repository  *Repository     `json:"repository,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Remotes     []Remote        `json:"remotes,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Repository points at the server's source code.
type Repository struct {
	URL       string `json:"url,omitempty"`
	Source    string `json:"source,omitempty"`
	Subfolder string `json:"subfolder,omitempty"`
	// ID is the forge's stable repository id (detects a deleted and recreated repo).
	ID string `json:"id,omitempty"`
}

// Icon is one displayable icon.
type Icon struct {
	Src      string   `json:"src,omitempty"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Remote is one HTTP endpoint of the server. URL may be a template whose
// {placeholders} are described in Variables.
type Remote struct {
	Type                      string           `json:"type"`
	URL                       string           `json:"url"`
	Headers                   []KeyValueInput  `json:"headers,omitempty"`
	Variables                 map[string]Input `json:"variables,omitempty"`
	SupportedProtocolVersions []string         `json:"supportedProtocolVersions,omitempty"`
}

// Input describes a value a user supplies (or the card pre-sets) for a URL
// variable or a header.
type Input struct {
	Description string   `json:"description,omitempty"`
	Format      string   `json:"format,omitempty"`
	Default     string   `json:"default,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Value       string   `json:"value,omitempty"`
	IsRequired  bool     `json:"isRequired,omitempty"`
	IsSecret    bool     `json:"isSecret,omitempty"`
	Choices     []string `json:"choices,omitempty"`
}

// KeyValueInput is a named Input (an HTTP header) whose Value may reference
// {placeholders} from its own Variables.
type KeyValueInput struct {
	Name string `json:"name"`
	Input
	Variables map[string]Input `json:"variables,omitempty"`
}

// decodeCard fills a Card from a JSON object member by member, so that one
// badly typed member (say "version": 2) does not lose the rest of the card: the
// schema reports the bad member, and the crawler still gets the remotes.
func decodeCard(obj map[string]json.RawMessage) *Card {
	c := &Card{}
	str := func(key string, dst *string) {
		if raw, ok := obj[key]; ok {
			_ = json.Unmarshal(raw, dst)
		}
	}
	str("$schema", &c.Schema)
	str("name", &c.Name)
	str("version", &c.Version)
	str("description", &c.Description)
	str("title", &c.Title)
	str("websiteUrl", &c.WebsiteURL)
	if raw, ok := obj["repository"]; ok {
		var r Repository
		if decodeObject(raw, &r) {
			c.Repository = &r
		}
	}
	for _, raw := range rawArray(obj["icons"]) {
		var ic Icon
		if decodeObject(raw, &ic) {
			c.Icons = append(c.Icons, ic)
		}
	}
	for _, raw := range rawArray(obj["remotes"]) {
		if r, ok := decodeRemote(raw); ok {
			c.Remotes = append(c.Remotes, r)
		}
	}
	if raw, ok := obj["_meta"]; ok && len(raw) > 0 && raw[0] == '{' {
		c.Meta = append(json.RawMessage(nil), raw...)
	}
	return c
}

// decodeObject decodes raw into dst when raw is an object, falling back to
// field-by-field decoding when some member has the wrong type.
func decodeObject(raw json.RawMessage, dst any) bool {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return false
	}
	if json.Unmarshal(raw, dst) == nil {
		return true
	}
	// Retry with only the members that decode on their own.
	good := map[string]json.RawMessage{}
	for k, v := range fields {
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		probe := newLike(dst)
		if probe != nil && json.Unmarshal(one, probe) == nil {
			good[k] = v
		}
	}
	clean, _ := json.Marshal(good)
	_ = json.Unmarshal(clean, dst)
	return true
}

// newLike returns a fresh zero value of the same pointer type as dst, for the
// known decode targets only.
func newLike(dst any) any {
	switch dst.(type) {
	case *Repository:
		return new(Repository)
	case *Icon:
		return new(Icon)
	case *Remote:
		return new(Remote)
	}
	return nil
}

func decodeRemote(raw json.RawMessage) (Remote, bool) {
	var r Remote
	ok := decodeObject(raw, &r)
	return r, ok
}

func rawArray(raw json.RawMessage) []json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	return items
}
