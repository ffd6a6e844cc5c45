package servercard

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Diff is one field that differs between two cards. Field is a path such as
// "title", "repository.url", "remotes[https://example.com/mcp].type" or
// "remotes[https://example.com/mcp].headers[x-api-key].isSecret". When a keyed
// element (remote, header, variable, icon) exists on one side only, Field
// names the element and Old or New is its compact JSON, the other side "".
type Diff struct {
	Field string `json:"field"`
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Compare returns the differences from a to b in a stable order: scalar fields
// in schema order, then repository, icons (keyed by src), remotes (keyed by
// normalised URL, so "https://X.example/mcp/" and "https://x.example/mcp" are
// the same remote; a second remote with the same key gets "#2"), headers
// (keyed by lower-cased name) and variables (keyed by name). A nil card
// compares as an empty one. Slices of strings (sizes, choices,
// supportedProtocolVersions) are compared as sets and shown as JSON arrays.
// Spelling-only differences of a remote URL that normalise to the same key are
// not reported: they reach the same endpoint.
func Compare(a, b *Card) []Diff {
	if a == nil {
		a = &Card{}
	}
	if b == nil {
		b = &Card{}
	}
	var d differ
	d.str("$schema", a.Schema, b.Schema)
	d.str("name", a.Name, b.Name)
	d.str("version", a.Version, b.Version)
	d.str("description", a.Description, b.Description)
	d.str("title", a.Title, b.Title)
	d.str("websiteUrl", a.WebsiteURL, b.WebsiteURL)
	d.repository(a.Repository, b.Repository)
	d.icons(a.Icons, b.Icons)
	d.remotes(a.Remotes, b.Remotes)
	d.str("_meta", canonicalJSON(a.Meta), canonicalJSON(b.Meta))
	return d.out
}

type differ struct{ out []Diff }

func (d *differ) str(field, a, b string) {
	if a != b {
		d.out = append(d.out, Diff{Field: field, Old: a, New: b})
	}
}

func (d *differ) set(field string, a, b []string) {
	if !sameSet(a, b) {
		d.out = append(d.out, Diff{Field: field, Old: jsonList(a), New: jsonList(b)})
	}
}

func (d *differ) bool(field string, a, b bool) {
	if a != b {
		d.out = append(d.out, Diff{Field: field, Old: strconv.FormatBool(a), New: strconv.FormatBool(b)})
	}
}

func (d *differ) repository(a, b *Repository) {
	var za, zb Repository
	if a != nil {
		za = *a
	}
	if b != nil {
		zb = *b
	}
	d.str("repository.url", za.URL, zb.URL)
	d.str("repository.source", za.Source, zb.Source)
	d.str("repository.subfolder", za.Subfolder, zb.Subfolder)
	d.str("repository.id", za.ID, zb.ID)
}

func (d *differ) icons(a, b []Icon) {
	ka, ma := keyed(a, func(i Icon) string { return i.Src })
	kb, mb := keyed(b, func(i Icon) string { return i.Src })
	for _, k := range unionKeys(ka, kb) {
		x, inA := ma[k]
		y, inB := mb[k]
		f := "icons[" + k + "]"
		if !inA || !inB {
			d.presence(f, inA, inB, x, y)
			continue
		}
		d.str(f+".mimeType", x.MimeType, y.MimeType)
		d.set(f+".sizes", x.Sizes, y.Sizes)
		d.str(f+".theme", x.Theme, y.Theme)
	}
}

func (d *differ) remotes(a, b []Remote) {
	ka, ma := keyed(a, remoteKey)
	kb, mb := keyed(b, remoteKey)
	for _, k := range unionKeys(ka, kb) {
		x, inA := ma[k]
		y, inB := mb[k]
		f := "remotes[" + k + "]"
		if !inA || !inB {
			d.presence(f, inA, inB, x, y)
			continue
		}
		d.str(f+".type", x.Type, y.Type)
		d.set(f+".supportedProtocolVersions", x.SupportedProtocolVersions, y.SupportedProtocolVersions)
		d.headers(f, x.Headers, y.Headers)
		d.inputs(f+".variables", x.Variables, y.Variables)
	}
}

func (d *differ) headers(prefix string, a, b []KeyValueInput) {
	name := func(h KeyValueInput) string { return strings.ToLower(h.Name) }
	ka, ma := keyed(a, name)
	kb, mb := keyed(b, name)
	for _, k := range unionKeys(ka, kb) {
		x, inA := ma[k]
		y, inB := mb[k]
		f := prefix + ".headers[" + k + "]"
		if !inA || !inB {
			d.presence(f, inA, inB, x, y)
			continue
		}
		d.input(f, x.Input, y.Input)
		d.inputs(f+".variables", x.Variables, y.Variables)
	}
}

func (d *differ) inputs(prefix string, a, b map[string]Input) {
	ka, kb := sortedKeys(a), sortedKeys(b)
	for _, k := range unionKeys(ka, kb) {
		x, inA := a[k]
		y, inB := b[k]
		f := prefix + "[" + k + "]"
		if !inA || !inB {
			d.presence(f, inA, inB, x, y)
			continue
		}
		d.input(f, x, y)
	}
}

func (d *differ) input(f string, a, b Input) {
	d.str(f+".description", a.Description, b.Description)
	d.str(f+".format", a.Format, b.Format)
	d.str(f+".default", a.Default, b.Default)
	d.str(f+".placeholder", a.Placeholder, b.Placeholder)
	d.str(f+".value", a.Value, b.Value)
	d.bool(f+".isRequired", a.IsRequired, b.IsRequired)
	d.bool(f+".isSecret", a.IsSecret, b.IsSecret)
	d.set(f+".choices", a.Choices, b.Choices)
}

func (d *differ) presence(field string, inA, inB bool, a, b any) {
	diff := Diff{Field: field}
	if inA {
		diff.Old = CompactJSON(a)
	}
	if inB {
		diff.New = CompactJSON(b)
	}
	d.out = append(d.out, diff)
}

// remoteKey is the dedup key of a remote: its normalised URL, or the trimmed
// raw URL when it cannot be normalised.
func remoteKey(r Remote) string {
	k, _ := NormalizeURL(r.URL)
	return k
}

// keyed indexes items by key in first-seen order; a repeated key gets a "#n"
// suffix so that no element is silently dropped from the comparison.
func keyed[T any](items []T, key func(T) string) ([]string, map[string]T) {
	order := make([]string, 0, len(items))
	m := make(map[string]T, len(items))
	count := map[string]int{}
	for _, it := range items {
		k := key(it)
		count[k]++
		if n := count[k]; n > 1 {
			k += "#" + strconv.Itoa(n)
		}
		order = append(order, k)
		m[k] = it
	}
	return order, m
}

// unionKeys lists a's keys in order, then b's keys that a lacks.
func unionKeys(a, b []string) []string {
	out := slices.Clone(a)
	for _, k := range b {
		if !slices.Contains(a, k) {
			out = append(out, k)
		}
	}
	return out
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(slices.Compact(x), slices.Compact(y))
}

func jsonList(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return CompactJSON(s)
}

// CompactJSON is v as compact JSON with HTML left unescaped, as the feed's
// writers encode it; "" when v does not encode.
func CompactJSON(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// canonicalJSON re-encodes raw with sorted keys so that _meta written in a
// different member order does not count as a change.
func canonicalJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	return CompactJSON(v)
}
