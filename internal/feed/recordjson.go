package feed

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/cardcrawl/cardcrawl/servercard"
)

// appendRecord appends r as encoding/json writes it (HTML not escaped, as
// newEncoder sets), without reflection: encoding the records was a sixth
// of a JSONL export's CPU. TestRecordJSONMatchesEncodingJSON fills every
// field of Record by reflection and compares the two, so a field added to
// Record and not here fails it.
func appendRecord(b []byte, r *Record) []byte {
	o := startObject(b)
	o.str("endpoint", r.Endpoint)
	o.str("endpointNormalized", r.EndpointNormalized)
	o.str("transport", r.Transport)
	o.boolean("templated", r.Templated)
	o.str("name", r.Name)
	o.strOmit("title", r.Title)
	o.str("version", r.Version)
	o.str("description", r.Description)
	o.strOmit("websiteUrl", r.WebsiteURL)
	o.repository("repository", r.Repository)
	o.strOmit("cardUrl", r.CardURL)
	o.str("cardKey", r.CardKey)
	o.boolean("cardInline", r.CardInline)
	o.str("cardSha256", r.CardSHA256)
	o.str("grade", r.Grade)
	o.strings("findings", r.Findings)
	o.listings("listedBy", r.ListedBy)
	o.str("firstSeen", r.FirstSeen)
	o.str("lastSeen", r.LastSeen)
	o.probe("probe", r.Probe)
	if d := r.ProbeDecision; d != nil {
		n := startObject(o.key("probeDecision").b)
		n.str("decision", d.Decision)
		n.str("reason", d.Reason)
		o.b = n.close()
	}
	o.strOmit("category", r.Category)
	o.strOmit("categorySource", r.CategorySource)
	o.strOmit("updatedAt", r.UpdatedAt)
	o.strings("sources", r.Sources)
	if g := r.Registry; g != nil {
		n := startObject(o.key("registry").b)
		n.str("registry", g.Registry)
		n.str("name", g.Name)
		n.str("version", g.Version)
		n.str("status", g.Status)
		n.strOmit("publishedAt", g.PublishedAt)
		n.strOmit("updatedAt", g.UpdatedAt)
		n.boolean("wouldRejectToday", g.WouldReject)
		n.strings("findings", g.Findings)
		o.b = n.close()
	}
	if c := r.Reconcile; c != nil {
		n := startObject(o.key("reconcile").b)
		n.str("registry", c.Registry)
		n.str("name", c.Name)
		n.str("version", c.Version)
		n.str("basis", c.Basis)
		n.strOmit("detail", c.Detail)
		n.raw("diffs", c.Diffs)
		n.str("computedAt", c.ComputedAt)
		o.b = n.close()
	}
	if s := r.Namespace; s != nil {
		n := startObject(o.key("namespace").b)
		n.str("namespace", s.Namespace)
		n.str("kind", s.Kind)
		n.strOmit("domain", s.Domain)
		n.str("method", s.Method)
		if len(s.Found) > 0 {
			n.raw("found", s.Found)
		}
		n.strOmit("checkedAt", s.CheckedAt)
		o.b = n.close()
	}
	if h := r.ProbeHistory; h != nil {
		n := startObject(o.key("probeHistory").b)
		n.integer("probes", h.Probes)
		n.str("firstProbedAt", h.FirstProbedAt)
		n.strOmit("lastOkAt", h.LastOKAt)
		array(&n, "byOutcome", h.ByOutcome, func(b []byte, c *OutcomeCount) []byte {
			m := startObject(b)
			m.str("outcome", c.Outcome)
			m.integer("count", c.Count)
			m.str("first", c.First)
			m.str("last", c.Last)
			return m.close()
		})
		o.b = n.close()
	}
	return o.close()
}

func (o *object) listings(k string, ls []Listing) {
	array(o, k, ls, func(b []byte, l *Listing) []byte {
		n := startObject(b)
		n.str("domain", l.Domain)
		n.str("catalogUrl", l.CatalogURL)
		n.str("identifier", l.Identifier)
		if len(l.Findings) > 0 {
			n.strings("findings", l.Findings)
		}
		return n.close()
	})
}

// array appends a slice member as encoding/json does (nil is null), each
// element by one.
func array[T any](o *object, k string, xs []T, one func(b []byte, x *T) []byte) {
	o.key(k)
	if xs == nil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = append(o.b, '[')
	for i := range xs {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = one(o.b, &xs[i])
	}
	o.b = append(o.b, ']')
}

// probe appends an omitempty *Probe member.
func (o *object) probe(k string, p *Probe) {
	if p == nil {
		return
	}
	n := startObject(o.key(k).b)
	n.str("outcome", p.Outcome)
	n.str("probedAt", p.ProbedAt)
	n.strOmit("transport", p.Transport)
	n.strOmit("protocolVersion", p.Protocol)
	n.strOmit("serverName", p.ServerName)
	n.strOmit("serverVersion", p.ServerVersion)
	if p.ToolCount != nil {
		n.integer("toolCount", *p.ToolCount)
	}
	if p.Partial {
		n.boolean("partial", true)
	}
	o.b = n.close()
}

// repository appends an omitempty *Repository member.
func (o *object) repository(k string, p *servercard.Repository) {
	if p == nil {
		return
	}
	n := startObject(o.key(k).b)
	n.strOmit("url", p.URL)
	n.strOmit("source", p.Source)
	n.strOmit("subfolder", p.Subfolder)
	n.strOmit("id", p.ID)
	o.b = n.close()
}

// object appends one JSON object's members.
type object struct {
	b    []byte
	more bool
}

func startObject(b []byte) object { return object{b: append(b, '{')} }

// key appends a member's key (this file's literals, which need no
// escaping); its value comes next.
func (o *object) key(k string) *object {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.more = true
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, '"', ':')
	return o
}

func (o object) close() []byte { return append(o.b, '}') }

func (o *object) str(k, v string) { o.key(k).b = appendJSONString(o.b, v) }

func (o *object) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *object) boolean(k string, v bool) { o.key(k).b = strconv.AppendBool(o.b, v) }

func (o *object) integer(k string, v int) { o.key(k).b = strconv.AppendInt(o.b, int64(v), 10) }

func (o *object) strings(k string, vs []string) {
	array(o, k, vs, func(b []byte, v *string) []byte { return appendJSONString(b, *v) })
}

// raw appends stored JSON compacted, as encoding/json does a RawMessage
// (nil is null); the feed only holds valid JSON here (rawOr).
func (o *object) raw(k string, v json.RawMessage) {
	o.key(k)
	if v == nil {
		o.b = append(o.b, "null"...)
		return
	}
	if !bytes.ContainsAny(v, " \t\r\n") {
		// Compact already, as the store writes JSON (and valid: rawOr).
		o.b = append(o.b, v...)
		return
	}
	buf := bytes.NewBuffer(o.b)
	if err := json.Compact(buf, v); err != nil {
		buf.WriteString("null")
	}
	o.b = buf.Bytes()
}

const hexDigits = "0123456789abcdef"

// appendJSONString quotes s as encoding/json does without HTML escaping:
// ", \ and control characters escaped (\b \f \n \r \t by name), invalid
// UTF-8 as U+FFFD, and U+2028 and U+2029 escaped for JavaScript's sake.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
