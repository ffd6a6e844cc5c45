package feed

import (
	"bytes"

	"github.com/cardcrawl/cardcrawl/registry/wire"
	"github.com/cardcrawl/cardcrawl/servercard"
)

// appendRegistryEntry appends a Registry-shaped entry (a card's, or the
// Registry's own server.json) as encoding/json writes it (HTML not
// escaped), without reflection for the parts every entry has: encoding the
// entries was a third of a Registry JSON export's CPU. A remote with
// headers, variables or protocol versions, and packages, are rare and go
// through encoding/json. TestRegistryEntryJSONMatchesEncodingJSON fills
// every field by reflection.
func appendRegistryEntry(b []byte, e *RegistryEntry) []byte {
	return appendRegistryEntryParts(b, e, nil)
}

// appendRegistryEntryParts is appendRegistryEntry, with a card entry's
// icons and remotes copied as stored when parts holds them.
func appendRegistryEntryParts(b []byte, e *RegistryEntry, parts *storedParts) []byte {
	top := startObject(b)
	s := &e.Server
	o := startObject(top.key("server").b)
	o.strOmit("$schema", s.Schema)
	o.str("description", s.Description)
	if parts != nil && parts.icons != "" {
		o.key("icons")
		o.b = append(o.b, parts.icons...)
	} else if len(s.Icons) > 0 {
		array(&o, "icons", s.Icons, func(b []byte, ic *servercard.Icon) []byte {
			n := startObject(b)
			n.strOmit("src", ic.Src)
			n.strOmit("mimeType", ic.MimeType)
			if len(ic.Sizes) > 0 {
				n.strings("sizes", ic.Sizes)
			}
			n.strOmit("theme", ic.Theme)
			return n.close()
		})
	}
	o.str("name", s.Name)
	if len(s.Packages) > 0 {
		o.value("packages", s.Packages)
	}
	if parts != nil && len(parts.remotes) > 0 {
		array(&o, "remotes", parts.remotes, func(b []byte, rm *string) []byte { return append(b, *rm...) })
	} else if len(s.Remotes) > 0 {
		array(&o, "remotes", s.Remotes, appendRemote)
	}
	o.repository("repository", s.Repository)
	o.strOmit("title", s.Title)
	o.str("version", s.Version)
	o.strOmit("websiteUrl", s.WebsiteURL)
	if len(s.Meta) > 0 {
		o.raw("_meta", s.Meta)
	}
	top.b = o.close()

	d := &e.Meta.Discovery
	m := startObject(top.key("_meta").b)
	n := startObject(m.key("io.github.cardcrawl/discovery").b)
	n.str("cardKey", d.CardKey)
	n.str("cardUrl", d.CardURL)
	array(&n, "endpoints", d.Endpoints, func(b []byte, f *FoundEndpoint) []byte {
		x := startObject(b)
		x.str("endpoint", f.Endpoint)
		x.str("firstSeen", f.FirstSeen)
		x.str("lastSeen", f.LastSeen)
		x.listings("listedBy", f.ListedBy)
		x.probe("probe", f.Probe)
		return x.close()
	})
	n.strings("findings", d.Findings)
	n.str("grade", d.Grade)
	if r := d.Removed; r != nil {
		x := startObject(n.key("removed").b)
		x.str("at", r.At)
		x.str("reason", r.Reason)
		n.b = x.close()
	}
	n.strOmit("updatedAt", d.UpdatedAt)
	if len(d.Sources) > 0 {
		n.strings("sources", d.Sources)
	}
	n.strOmit("registry", d.Registry)
	if v := d.RegistryVersion; v != nil {
		x := startObject(n.key("registryVersion").b)
		x.str("status", v.Status)
		x.boolean("isLatest", v.IsLatest)
		x.strOmit("publishedAt", v.PublishedAt)
		n.b = x.close()
	}
	m.b = n.close()
	top.b = m.close()
	return top.close()
}

func appendRemote(b []byte, r *wire.Remote) []byte {
	if len(r.Headers) > 0 || len(r.Variables) > 0 || len(r.SupportedProtocolVersions) > 0 {
		return appendEncoded(b, r)
	}
	o := startObject(b)
	o.str("type", r.Type)
	o.str("url", r.URL)
	return o.close()
}

// value appends a member encoded by encoding/json.
func (o *object) value(k string, v any) { o.key(k).b = appendEncoded(o.b, v) }

// appendEncoded appends v as newEncoder writes it, without its newline.
func appendEncoded(b []byte, v any) []byte {
	buf := bytes.NewBuffer(b)
	if err := newEncoder(buf).Encode(v); err != nil {
		buf.WriteString("null\n")
	}
	out := buf.Bytes()
	return out[:len(out)-1]
}

// appendServerList appends an API list answer as encoding/json writes it
// compact: the entries by appendRegistryEntry, the metadata by
// encoding/json.
func appendServerList(b []byte, l *wire.ServerList[RegistryEntry]) []byte {
	o := startObject(b)
	array(&o, "servers", l.Servers, appendRegistryEntry)
	o.value("metadata", l.Metadata)
	return o.close()
}
