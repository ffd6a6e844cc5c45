// Package registry mirrors the official MCP Registry (and any subregistry
// implementing its v0.1 API) into the store: the server.json types, a polite
// v0.1 API client, an incremental and resumable sync, a dump-file import,
// and validation of each server.json against the dated schema it names.
//
// Reconciliation with crawled Server Cards lives in registry/reconcile and
// namespace verification in registry/namespace.
package registry

import (
	"encoding/json"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/servercard"
)

// DefaultBaseURL is the official MCP Registry.
const DefaultBaseURL = "https://registry.modelcontextprotocol.io"

// OfficialMetaKey is the response-level _meta key under which the official
// Registry (and subregistries copying it) put status and timestamps.
const OfficialMetaKey = "io.modelcontextprotocol.registry/official"

// Server is a server.json document (the fields cardcrawl reads; the raw
// document is always kept alongside, so nothing unknown is lost).
type Server struct {
	Schema      string          `json:"$schema,omitempty"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Version     string          `json:"version,omitempty"`
	WebsiteURL  string          `json:"websiteUrl,omitempty"`
	Repository  *Repository     `json:"repository,omitempty"`
	Icons       []Icon          `json:"icons,omitempty"`
	Packages    []Package       `json:"packages,omitempty"`
	Remotes     []Remote        `json:"remotes,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

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

// Package is an installable distribution; cardcrawl stores it but compares
// only remotes, so its body stays raw.
type Package struct {
	RegistryType string          `json:"registryType,omitempty"`
	Identifier   string          `json:"identifier,omitempty"`
	Version      string          `json:"version,omitempty"`
	Transport    json.RawMessage `json:"transport,omitempty"`
}

// Official is the Registry's own metadata about one published version.
type Official struct {
	Status          string    `json:"status,omitempty"` // active, deprecated, deleted
	StatusMessage   string    `json:"statusMessage,omitempty"`
	StatusChangedAt time.Time `json:"statusChangedAt,omitzero"`
	PublishedAt     time.Time `json:"publishedAt,omitzero"`
	UpdatedAt       time.Time `json:"updatedAt,omitzero"`
	IsLatest        bool      `json:"isLatest"`
}

// Entry is one server version as a registry lists it: the parsed server, its
// raw bytes, and the response-level metadata.
type Entry struct {
	Server   Server
	Raw      json.RawMessage // the server.json exactly as received (compacted)
	Meta     json.RawMessage // the response-level _meta object, or nil
	Official *Official       // nil when the listing carried no official metadata
	// Findings are what reading the entry found (a draft-era version
	// field, unreadable metadata); they are stored with its validation
	// findings.
	Findings finding.List
}
