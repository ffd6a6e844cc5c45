package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// Sentinel errors returned (wrapped) by Parse; compare with errors.Is.
var (
	// ErrNotJSON: the body is empty, an HTML page, or malformed JSON.
	ErrNotJSON = errors.New("not json")
	// ErrNotCatalog: valid JSON, but not an object with an `entries` array
	// (for example a Server Card, `[]` or `{"foo":1}`).
	ErrNotCatalog = errors.New("not an ai catalog")
	// ErrUnsupportedVersion: specVersion has a major version above 1 or is not
	// a version at all.
	ErrUnsupportedVersion = errors.New("unsupported ai catalog version")
)

// DefaultMaxEntries is the number of entries read per document when
// Options.MaxEntries is not set. Real catalogs reach several hundred entries
// (the interim MCP Catalog at one gateway lists 811).
const DefaultMaxEntries = 1000

// Options tunes Parse. The zero value is ready to use.
type Options struct {
	// MaxEntries is how many elements of `entries` are read per document;
	// 0 or less means DefaultMaxEntries. Later elements are counted in
	// EntryCount but not read, and an entries_truncated finding is recorded.
	MaxEntries int
}

// Catalog is a parsed AI Catalog document.
type Catalog struct {
	SpecVersion string          // as written, or "1.0" when missing (with a finding)
	Host        json.RawMessage // verbatim, may be nil
	Entries     []Entry         // only valid entries, in document order
	EntryCount  int             // entries present in the document (before skipping/truncation)
	// Signed says the document has a signature of its own or an entry with
	// trust manifests: what the trust package reads.
	Signed bool
}

// Entry is one valid catalog entry. Raw and Data are verbatim JSON; they do not
// alias the body passed to Parse, but they and the strings share one private
// copy of the document, so holding any of them keeps that copy alive (use
// strings.Clone for a long-lived field of a large catalog).
type Entry struct {
	Index       int             // position in the document's entries array
	Identifier  string          // opaque; compare exactly
	Type        string          // as written (from `type`, or `mediaType` when `type` is absent)
	Essence     string          // Essence(Type)
	URL         string          // as written ("" when inline)
	ResolvedURL string          // URL resolved against base (RFC 3986); "" when inline or unresolvable
	Data        json.RawMessage // inline artifact, nil when by URL; a nested catalog here inherits the parent's base
	Version     string
	DisplayName string
	Description string
	// Digest is the entry's digest when it is one cardcrawl can check
	// (zero otherwise; a finding says why).
	Digest Digest
	Raw    json.RawMessage // the entry object verbatim (keeps trustManifests, digest, etc.)
}

// Path returns the JSON pointer of the entry in its document, "/entries/3".
func (e Entry) Path() string { return "/entries/" + strconv.Itoa(e.Index) }

// DataPath returns the JSON pointer of the entry's inline data, "/entries/3/data",
// for prefixing findings about a parsed inline artifact.
func (e Entry) DataPath() string { return e.Path() + "/data" }

// InlineKey is the key of the artifact an entry carries inline (PointerKey
// of its data in the document keyed doc).
func (e Entry) InlineKey(doc string) string { return PointerKey(doc, e.DataPath()) }

// StoredBase is the URL a stored catalog's entries resolve against when it
// is parsed again: where it was fetched from (baseURL, after redirects),
// else its own key, the URL it was asked for; nil when neither parses.
func StoredBase(baseURL, key string) *url.URL {
	for _, u := range []string{baseURL, key} {
		if b, err := url.Parse(u); u != "" && err == nil {
			return b
		}
	}
	return nil
}

// PointerKey is the key of the part of a document at a JSON pointer: the
// document's key with the pointer as the fragment,
// "https://a.example/ai-catalog.json#/entries/3/data", appended to the
// fragment when the document is itself a part of another.
func PointerKey(doc, ptr string) string {
	if strings.Contains(doc, "#") {
		return doc + ptr
	}
	return doc + "#" + ptr
}

// Parse parses an AI Catalog. base is the URL the document was finally served
// from, after redirects (for an inline nested catalog: its parent's base); nil
// leaves relative URLs unresolved, with a finding.
//
// The error is non-nil only when the bytes are not a usable catalog at all; it
// wraps ErrNotJSON, ErrNotCatalog or ErrUnsupportedVersion, the Catalog is then
// nil, and the findings say why. Everything short of that (bad entries, odd
// versions, duplicates) is a finding on a usable Catalog.
func Parse(body []byte, base *url.URL, opts Options) (*Catalog, finding.List, error) {
	var fl finding.List
	fail := func(code, path string, err error) (*Catalog, finding.List, error) {
		fl.Add(finding.Error, code, path, err.Error())
		return nil, fl, err
	}

	b := body
	if bytes.HasPrefix(b, utf8BOM) {
		b = b[len(utf8BOM):]
		fl.AddUTF8BOM()
	}
	start := skipWS(b, 0)
	switch {
	case start == len(b):
		return fail(CodeNotJSON, "", fmt.Errorf("%w: empty body", ErrNotJSON))
	case LooksLikeHTML(b):
		return fail(CodeNotJSON, "", fmt.Errorf("%w: the body is an html page", ErrNotJSON))
	}
	var dups finding.List
	n, err := scanJSON(b, func(path string) {
		dups.Add(finding.Warning, CodeDuplicateJSONKey, path, "member name repeats within its object (I-JSON forbids this); the last occurrence is used")
	})
	if err != nil {
		return fail(CodeNotJSON, "", fmt.Errorf("%w: %w", ErrNotJSON, err))
	}
	if b[start] != '{' {
		return fail(CodeNotCatalog, "", fmt.Errorf("%w: the top-level value is %s, not an object", ErrNotCatalog, jsonKind(b[start:])))
	}
	fl = append(fl, dups...)
	if n > dupKeyLimit {
		fl.Add(finding.Warning, CodeDuplicateJSONKey, "", fmt.Sprintf("%d more repeated member names not listed", n-dupKeyLimit))
	}
	// One copy, so that every RawMessage handed out can sub-slice it without
	// aliasing the caller's buffer.
	b = bytes.Clone(b)

	var specRaw, hostRaw, entriesRaw []byte
	signed := false
	var others []string
	eachMember(b, func(k, v []byte) {
		switch {
		case keyIs(k, "specVersion"):
			specRaw = v
		case keyIs(k, "host"):
			hostRaw = v
		case keyIs(k, "entries"):
			entriesRaw = v
		case keyIs(k, "signature"):
			signed = true
		default:
			if len(others) < 8 {
				s, _ := decodeString(k)
				others = append(others, s)
			}
		}
	})
	if specRaw != nil && isNull(specRaw) {
		specRaw = nil
	}

	var vf finding.List
	sv, err := specVersion(specRaw, &vf)
	if err != nil {
		fl = append(fl, vf...)
		return fail(CodeSpecVersionUnsupported, "/specVersion", err)
	}
	if entriesRaw == nil || isNull(entriesRaw) {
		return fail(CodeNotCatalog, "", fmt.Errorf("%w: no entries member%s", ErrNotCatalog, lookalike(specRaw != nil, others)))
	}
	if entriesRaw[0] != '[' {
		return fail(CodeNotCatalog, "/entries", fmt.Errorf("%w: entries is %s, not an array", ErrNotCatalog, jsonKind(entriesRaw)))
	}
	fl = append(fl, vf...)

	c := &Catalog{SpecVersion: sv, Signed: signed}
	if hostRaw != nil && !isNull(hostRaw) {
		c.Host = json.RawMessage(hostRaw)
		if hostRaw[0] != '{' {
			fl.Add(finding.Warning, CodeHostNotObject, "/host", "host is "+jsonKind(hostRaw)+", not an object")
		}
	}

	limit := opts.MaxEntries
	if limit <= 0 {
		limit = DefaultMaxEntries
	}
	// Collect the elements first so that Entries and the uniqueness maps are
	// sized once; growing them entry by entry dominated the cost of large
	// catalogs.
	var elems [][]byte
	eachElement(entriesRaw, func(i int, v []byte) bool {
		c.EntryCount++
		if i < limit {
			elems = append(elems, v)
		}
		return true
	})
	c.Entries = make([]Entry, 0, len(elems))
	p := entryParser{base: base, fl: &fl, ids: make(map[string]uint8, len(elems)), doc: string(b), docCap: cap(b)}
	for i, v := range elems {
		if e, ok := p.entry(i, v); ok {
			c.Entries = append(c.Entries, e)
		}
	}
	if len(c.Entries) == 0 {
		c.Entries = nil
	}
	c.Signed = c.Signed || p.signed
	if c.EntryCount > limit {
		fl.Add(finding.Warning, CodeEntriesTruncated, "/entries",
			fmt.Sprintf("the document has %d entries; only the first %d were read", c.EntryCount, limit))
	}
	return c, fl, nil
}

// jsonKind names the JSON type of a raw value for messages.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// lookalike adds a hint to the not-a-catalog message when the object is
// recognisably something else, which is what an operator wants to know.
func lookalike(hasSpec bool, members []string) string {
	has := func(name string) bool {
		for _, m := range members {
			if m == name {
				return true
			}
		}
		return false
	}
	switch {
	case has("$schema") && (has("remotes") || has("name")):
		return " (it looks like an mcp server card)"
	case has("identifier") && (has("url") || has("data") || has("type")):
		return " (it looks like a single catalog entry)"
	case hasSpec:
		return " (specVersion is present)"
	}
	return ""
}

// specVersion checks the specVersion member (nil when absent) and returns the
// version to record. Findings go to fl; a non-nil error wraps
// ErrUnsupportedVersion.
func specVersion(raw []byte, fl *finding.List) (string, error) {
	const path = "/specVersion"
	if raw == nil {
		fl.Add(finding.Warning, CodeSpecVersionMissing, path, "specVersion is missing; assuming 1.0")
		return "1.0", nil
	}
	written := string(raw)
	exact := false
	switch raw[0] {
	case '"':
		s, _ := decodeString(raw)
		written = s
		if strings.EqualFold(strings.TrimSpace(s), "draft") {
			fl.Add(finding.Warning, CodeSpecVersionDraft, path, `specVersion "draft" comes from the interim MCP Catalog, a subset of AI Catalog 1.0; read as 1.0`)
			return s, nil
		}
		exact = versionRE(s)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
	default:
		return "", fmt.Errorf("%w: specVersion is %s", ErrUnsupportedVersion, jsonKind(raw))
	}
	major, minor, ok := parseVersion(strings.TrimSpace(written))
	if !ok {
		return "", fmt.Errorf("%w: specVersion %q is not a Major.Minor version", ErrUnsupportedVersion, written)
	}
	if major > 1 {
		return "", fmt.Errorf("%w: specVersion %q has major version %d; only 1 is supported", ErrUnsupportedVersion, written, major)
	}
	if !exact {
		fl.Add(finding.Warning, CodeSpecVersionMalformed, path, fmt.Sprintf("specVersion %s should be a \"Major.Minor\" string", written))
	}
	if major == 0 {
		fl.Add(finding.Warning, CodeSpecVersionMajorOlder, path, fmt.Sprintf("specVersion %s predates 1.0; read as 1.0", written))
	} else if minor > 0 {
		fl.Add(finding.Info, CodeSpecVersionMinorNewer, path, fmt.Sprintf("specVersion %s is a newer minor version; unknown members are ignored", written))
	}
	return written, nil
}

// versionRE reports whether s is exactly digits "." digits.
func versionRE(s string) bool {
	a, b, ok := strings.Cut(s, ".")
	return ok && allDigits(a) && allDigits(b)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseVersion accepts "M", "M.m" and "M.m.p" (digits only) and returns the
// major and minor numbers; anything else is not a version.
func parseVersion(s string) (major, minor int, ok bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 3 {
		return 0, 0, false
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		if !allDigits(p) || len(p) > 9 {
			return 0, 0, false
		}
		nums[i], _ = strconv.Atoi(p)
	}
	if len(nums) > 1 {
		minor = nums[1]
	}
	return nums[0], minor, true
}

// Bits of entryParser.ids: which kinds of kept entry an identifier has.
const (
	idUnversioned uint8 = 1 << iota
	idVersioned
)

type entryParser struct {
	base     *url.URL
	fl       *finding.List
	ids      map[string]uint8       // identifier → idUnversioned|idVersioned
	versions map[[2]string]struct{} // identifier, version of kept versioned entries
	doc      string                 // the document as one string; see str
	docCap   int                    // cap of the byte slice doc was made from
	idx      int                    // index of the entry being read
	signed   bool                   // an entry has trust manifests
}

// add records a finding about the entry being read. The pointer is built
// only here because most entries have no findings.
func (p *entryParser) add(sev finding.Severity, code, msg string) { p.addAt(sev, code, "", msg) }

// addAt records a finding about the member sub ("/digest") of the entry
// being read.
func (p *entryParser) addAt(sev finding.Severity, code, sub, msg string) {
	p.fl.Add(sev, code, Entry{Index: p.idx}.Path()+sub, msg)
}

// str decodes a JSON string token that is a sub-slice of the document. In the
// common unescaped case it returns a substring of p.doc rather than a fresh
// allocation: the offset of a sub-slice is the difference of the capacities.
func (p *entryParser) str(raw []byte) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		off := p.docCap - cap(raw)
		if off >= 0 && off+len(raw) <= len(p.doc) && p.doc[off] == '"' && utf8.ValidString(p.doc[off:off+len(raw)]) {
			return p.doc[off+1 : off+len(raw)-1], true
		}
	}
	return decodeString(raw)
}

// entry reads element i of the entries array; ok is false when the entry
// was skipped (the reason is recorded).
func (p *entryParser) entry(i int, v []byte) (Entry, bool) {
	e := Entry{Index: i, Raw: json.RawMessage(v)}
	p.idx = i
	skip := func(code, msg string) (Entry, bool) {
		p.add(finding.Error, code, msg)
		return Entry{}, false
	}
	if v[0] != '{' {
		return skip(CodeEntryNotObject, "entry is "+jsonKind(v)+", not an object; skipped")
	}

	var idRaw, typeRaw, mtRaw, urlRaw, dataRaw, verRaw, nameRaw, descRaw, digestRaw []byte
	eachMember(v, func(k, val []byte) {
		if isNull(val) {
			return
		}
		switch {
		case keyIs(k, "identifier"):
			idRaw = val
		case keyIs(k, "type"):
			typeRaw = val
		case keyIs(k, "mediaType"):
			mtRaw = val
		case keyIs(k, "url"):
			urlRaw = val
		case keyIs(k, "data"):
			dataRaw = val
		case keyIs(k, "version"):
			verRaw = val
		case keyIs(k, "displayName"):
			nameRaw = val
		case keyIs(k, "description"):
			descRaw = val
		case keyIs(k, "digest"):
			digestRaw = val
		case keyIs(k, "trustManifests"):
			p.signed = true
		}
	})

	if idRaw == nil {
		return skip(CodeEntryMissingIdentifier, "entry has no identifier; skipped")
	}
	id, ok := p.str(idRaw)
	if !ok || strings.TrimSpace(id) == "" {
		return skip(CodeEntryInvalidIdentifier, "identifier is "+describe(idRaw, ok)+", not a non-empty string; skipped")
	}
	e.Identifier = id

	switch {
	case typeRaw != nil:
		t, ok := p.str(typeRaw)
		if !ok || strings.TrimSpace(t) == "" {
			return skip(CodeEntryInvalidType, "type is "+describe(typeRaw, ok)+", not a non-empty string; skipped")
		}
		e.Type = t
		if mtRaw != nil {
			if mt, ok := p.str(mtRaw); ok && Essence(mt) != Essence(t) {
				p.add(finding.Warning, "entry_type_conflict", fmt.Sprintf("type %q and legacy mediaType %q disagree; using type", t, mt))
			}
		}
	case mtRaw != nil:
		t, ok := p.str(mtRaw)
		if !ok || strings.TrimSpace(t) == "" {
			return skip(CodeEntryInvalidType, "mediaType is "+describe(mtRaw, ok)+", not a non-empty string; skipped")
		}
		e.Type = t
		p.add(finding.Info, "entry_legacy_media_type", "type given as mediaType, its name before AI Catalog 1.0")
	default:
		return skip(CodeEntryMissingType, "entry has neither type nor mediaType; skipped")
	}
	e.Essence = Essence(e.Type)

	switch {
	case urlRaw != nil && dataRaw != nil:
		return skip(CodeEntryURLAndData, "entry has both url and data; exactly one is allowed; skipped")
	case urlRaw == nil && dataRaw == nil:
		return skip(CodeEntryNoURLOrData, "entry has neither url nor data; skipped")
	case dataRaw != nil:
		e.Data = json.RawMessage(dataRaw)
	default:
		u, ok := p.str(urlRaw)
		if !ok || strings.TrimSpace(u) == "" {
			return skip(CodeEntryInvalidURL, "url is "+describe(urlRaw, ok)+", not a non-empty string; skipped")
		}
		e.URL = u
		e.ResolvedURL = p.resolve(u)
	}

	e.Version = p.optional("version", verRaw)
	e.DisplayName = p.optional("displayName", nameRaw)
	e.Description = p.optional("description", descRaw)
	if d := p.optional("digest", digestRaw); d != "" {
		var code, msg string
		if e.Digest, code, msg = parseDigest(d); code != "" {
			sev := finding.Warning
			if code == CodeDigestUnsupported {
				sev = finding.Info // a stronger hash cardcrawl does not know is no fault of the catalog
			}
			p.addAt(sev, code, "/digest", msg)
		}
	}

	if !p.unique(e) {
		return Entry{}, false
	}
	return e, true
}

// describe says what a value that should have been a string actually is.
func describe(raw []byte, isString bool) string {
	if isString {
		return "an empty string"
	}
	return jsonKind(raw)
}

// optional decodes an optional string member, recording a warning (not
// skipping the entry) when it has the wrong type.
func (p *entryParser) optional(name string, raw []byte) string {
	if raw == nil {
		return ""
	}
	s, ok := p.str(raw)
	if !ok {
		p.add(finding.Warning, "entry_invalid_field", name+" is "+jsonKind(raw)+", not a string; ignored")
	}
	return s
}

// resolve applies RFC 3986 reference resolution against the base. Absolute
// URLs are normalised the same way (dot segments removed), so that ResolvedURL
// is comparable across entries whatever their form.
func (p *entryParser) resolve(raw string) string {
	// Leading and trailing spaces are a common copy-paste slip that browsers
	// forgive too (the WHATWG URL parser strips them).
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		p.add(finding.Warning, "entry_url_unresolvable", fmt.Sprintf("url %q does not parse: %v", raw, err))
		return ""
	}
	if u.IsAbs() {
		if !strings.Contains(u.Path, "/.") {
			return u.String() // nothing for resolution to change; skip its copy
		}
		return (&url.URL{}).ResolveReference(u).String()
	}
	if p.base == nil || !p.base.IsAbs() {
		p.add(finding.Warning, "entry_url_unresolvable", fmt.Sprintf("url %q is relative and there is no base url to resolve it against", raw))
		return ""
	}
	r := p.base.ResolveReference(u).String()
	p.add(finding.Info, "entry_url_relative", fmt.Sprintf("url %q is relative; resolved to %s", raw, r))
	return r
}

// unique enforces the spec's rule: identifier+version unique when version is
// present, identifier alone unique when it is absent. It records e as seen
// and reports whether e is kept.
func (p *entryParser) unique(e Entry) bool {
	seen := p.ids[e.Identifier]
	if e.Version == "" {
		if seen&idUnversioned != 0 {
			p.add(finding.Error, "duplicate_identifier", fmt.Sprintf("identifier %q repeats an earlier entry without a version; skipped", e.Identifier))
			return false
		}
		if seen&idVersioned != 0 {
			p.add(finding.Warning, "duplicate_identifier_unversioned", fmt.Sprintf("identifier %q appears in earlier entries with a version, but not here", e.Identifier))
		}
		p.ids[e.Identifier] = seen | idUnversioned
		return true
	}
	key := [2]string{e.Identifier, e.Version}
	if seen&idVersioned != 0 {
		if _, dup := p.versions[key]; dup {
			p.add(finding.Error, "duplicate_identifier", fmt.Sprintf("identifier %q with version %q repeats an earlier entry; skipped", e.Identifier, e.Version))
			return false
		}
	}
	if seen&idUnversioned != 0 {
		p.add(finding.Warning, "duplicate_identifier_unversioned", fmt.Sprintf("identifier %q appears in an earlier entry without a version", e.Identifier))
	}
	if p.versions == nil {
		p.versions = make(map[[2]string]struct{}, len(p.ids))
	}
	p.versions[key] = struct{}{}
	p.ids[e.Identifier] = seen | idVersioned
	return true
}
