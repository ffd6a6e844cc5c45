package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// discoverResult is the part of a 2026-07-28 DiscoverResult the probe keeps.
type discoverResult struct {
	SupportedVersions []string                   `json:"supportedVersions"`
	Capabilities      json.RawMessage            `json:"capabilities"`
	Instructions      string                     `json:"instructions"`
	TTLMs             *float64                   `json:"ttlMs"`
	CacheScope        string                     `json:"cacheScope"`
	Meta              map[string]json.RawMessage `json:"_meta"`
}

// modernMeta is the per-request _meta a 2026-07-28 request carries in place
// of the old handshake.
func (r *run) modernMeta() map[string]any {
	return map[string]any{
		metaProtocolVersion:    ModernProtocolVersion,
		metaClientInfo:         map[string]any{"name": r.p.opts.ClientName, "version": r.p.opts.ClientVersion},
		metaClientCapabilities: map[string]any{},
	}
}

// modern handles a server that refused the 2025 handshake as a modern one
// does (a modern error to initialize, or go-sdk's plain-text refusal of the
// step after it): it asks server/discover, then lists tools the 2026-07-28
// way.
func (r *run) modern(ctx context.Context, rejected reply) {
	res := r.res
	id := r.nextID()
	hdr := http.Header{}
	hdr.Set(headerProtocolVersion, ModernProtocolVersion)
	dh := hdr.Clone()
	dh.Set(headerMethod, "server/discover")
	rep := r.p.do(ctx, res, call{step: "server/discover", method: http.MethodPost, url: r.url,
		body: mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "server/discover",
			"params": map[string]any{"_meta": r.modernMeta()}}),
		header: dh, id: id, accept: acceptBoth})
	if r.httpFailure(ctx, "server/discover", rep) {
		return
	}
	if rep.status >= 400 || (rep.msg != nil && rep.msg.Error != nil) {
		r.fail(OutcomeHandshakeRejected, fmt.Sprintf("%s answered %s; server/discover answered %s",
			rejected.step, replySummary(rejected), replySummary(rep)))
		return
	}
	if rep.class != "" {
		r.fail(outcomeOf(rep.class), "server/discover: "+describeErr(rep))
		return
	}
	var dr discoverResult
	if err := json.Unmarshal(rep.msg.Result, &dr); err != nil || dr.SupportedVersions == nil {
		r.fail(OutcomeNotMCP, "server/discover result lacks supportedVersions")
		return
	}
	info := &DiscoverInfo{
		SupportedVersions: capStrings(dr.SupportedVersions, 20, 32),
		Capabilities:      compactJSON(dr.Capabilities),
		CacheScope:        textcut.Cut(dr.CacheScope, 32),
		Instructions:      dr.Instructions != "",
	}
	if dr.TTLMs != nil {
		// The spec reads negative as zero.
		ttl := max(int64(*dr.TTLMs), 0)
		info.TTLMs = &ttl
	}
	res.Discover = info
	res.Outcome, res.Partial = OutcomeOK, false
	res.Reason = "server/discover succeeded (2026-07-28 server)"
	res.Transport, res.Era = TransportStreamable, EraModern
	res.ProtocolVersion = ModernProtocolVersion
	if !slices.Contains(dr.SupportedVersions, ModernProtocolVersion) && len(dr.SupportedVersions) > 0 {
		res.ProtocolVersion = textcut.Cut(dr.SupportedVersions[0], 64)
	}
	res.Capabilities = info.Capabilities
	r.serverInfoFromMeta(dr.Meta)
	if !hasCapability(res.Capabilities, "tools") {
		zero := 0
		res.ToolCount = &zero
		res.Reason = "server/discover succeeded; the server declares no tools capability"
		return
	}
	r.listTools(ctx, hdr, true, false)
}

// serverInfoFromMeta reads io.modelcontextprotocol/serverInfo from a result's _meta.
func (r *run) serverInfoFromMeta(meta map[string]json.RawMessage) {
	raw, ok := meta[metaServerInfo]
	if !ok {
		return
	}
	var si struct {
		Name, Version, Title string
	}
	if json.Unmarshal(raw, &si) != nil {
		return
	}
	r.res.ServerName = textcut.Cut(si.Name, 200)
	r.res.ServerVersion = textcut.Cut(si.Version, 100)
	r.res.ServerTitle = textcut.Cut(si.Title, 200)
}

// capStrings bounds a server-supplied list.
func capStrings(in []string, n, each int) []string {
	if len(in) == 0 {
		return nil
	}
	out := make([]string, 0, min(len(in), n))
	for _, s := range in {
		if len(out) == n {
			break
		}
		out = append(out, textcut.Cut(s, each))
	}
	return out
}
