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

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/registry/wire"
)

// DefaultBaseURL is the official MCP Registry.
const DefaultBaseURL = "https://registry.modelcontextprotocol.io"

// OfficialMetaKey is the response-level _meta key under which the official
// Registry (and subregistries copying it) put status and timestamps.
const OfficialMetaKey = wire.OfficialMetaKey

// The Registry's wire types are defined once, in registry/wire.
type (
	Server        = wire.Server
	Repository    = wire.Repository
	Icon          = wire.Icon
	Remote        = wire.Remote
	Input         = wire.Input
	KeyValueInput = wire.KeyValueInput
	Package       = wire.Package
	Official      = wire.Official
)

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
