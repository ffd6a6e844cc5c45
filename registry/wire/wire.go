// Package wire is the MCP Registry's v0.1 read API as it travels: the
// server.json document, the list and version responses around it, the
// official per-version metadata, paging metadata and problem bodies. The
// registry client reads these types, the registrytest double writes them
// as the real handlers do, and cardcrawl's own feed (export --format json,
// serve's /v0.1/servers) writes them too, so the shape is defined once.
//
// Field order is the order the types are written in. Server's is
// alphabetical by JSON name: that is how the feed first wrote it, and its
// bytes stay stable; readers of JSON do not depend on it.
package wire

import (
	"encoding/json"
	"time"

	"github.com/cardcrawl/cardcrawl/servercard"
)

// OfficialMetaKey is the response-level _meta key under which the official
// Registry (and subregistries copying it) put status and timestamps.
const OfficialMetaKey = "io.modelcontextprotocol.registry/official"

// The shapes server.json shares with the Server Card are the card's own
// types: the two formats are kept compatible on purpose (identity,
// documentation, remotes), and one definition keeps them from drifting.
type (
	Repository    = servercard.Repository
	Icon          = servercard.Icon
	Remote        = servercard.Remote
	Input         = servercard.Input
	KeyValueInput = servercard.KeyValueInput
)

// Server is a server.json document. description and version are required
// by its schema, so they are always written.
type Server struct {
	Schema      string          `json:"$schema,omitempty"`
	Description string          `json:"description"`
	Icons       []Icon          `json:"icons,omitempty"`
	Name        string          `json:"name"`
	Packages    []Package       `json:"packages,omitempty"`
	Remotes     []Remote        `json:"remotes,omitempty"`
	Repository  *Repository     `json:"repository,omitempty"`
	Title       string          `json:"title,omitempty"`
	Version     string          `json:"version"`
	WebsiteURL  string          `json:"websiteUrl,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Package is an installable distribution; cardcrawl stores it but compares
// only remotes, so its body stays raw.
type Package struct {
	RegistryType string          `json:"registryType,omitempty"`
	Identifier   string          `json:"identifier,omitempty"`
	Version      string          `json:"version,omitempty"`
	Transport    json.RawMessage `json:"transport,omitempty"`
}

// Official is the Registry's own metadata about one published version, in
// the field order the real handler writes it.
type Official struct {
	Status          string    `json:"status"` // active, deprecated, deleted
	StatusChangedAt time.Time `json:"statusChangedAt"`
	StatusMessage   string    `json:"statusMessage,omitempty"`
	PublishedAt     time.Time `json:"publishedAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
	IsLatest        bool      `json:"isLatest"`
}

// OfficialMeta is the response-level _meta the official Registry writes.
type OfficialMeta struct {
	Official Official `json:"io.modelcontextprotocol.registry/official"`
}

// ServerResponse is one entry of a list or versions response: the
// server.json (S: typed, or raw bytes as published) and the response-level
// _meta (M).
type ServerResponse[S, M any] struct {
	Server S `json:"server"`
	Meta   M `json:"_meta"`
}

// ServerList is the body of GET /v0.1/servers and of
// GET /v0.1/servers/{name}/versions.
type ServerList[E any] struct {
	Servers  []E      `json:"servers"`
	Metadata Metadata `json:"metadata"`
}

// Metadata is a list's paging metadata: nextCursor only when another page
// follows.
type Metadata struct {
	NextCursor string `json:"nextCursor,omitempty"`
	Count      int    `json:"count"`
}

// Problem is an RFC 9457 problem body, as the Registry answers errors.
type Problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}
