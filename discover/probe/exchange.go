package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// run is the state of one probe.
type run struct {
	p   *Prober
	res *Result
	url string
	id  int
	// modernRejection is set when a step after a 2025 handshake was refused
	// because the server only speaks 2026-07-28.
	modernRejection *reply
	// legacyDone is set once the legacy GET has run; a probe sends it at
	// most once.
	legacyDone *legacyAttempt
	// rateLimited is set once the host answered 429 after the handshake:
	// nothing more, not even the DELETE, is sent to it.
	rateLimited bool
}

func (r *run) nextID() int { r.id++; return r.id }

// Probe performs one probe of t. It never panics: an internal failure comes
// back as a not_mcp result whose reason says so.
func (p *Prober) Probe(ctx context.Context, t Target) (res Result) {
	res = Result{URL: t.URL, StartedAt: p.opts.Now(), Evidence: []Exchange{}}
	start := res.StartedAt
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("probe panicked", "url", t.URL, "panic", v)
			res.Outcome, res.Reason = OutcomeNotMCP, fmt.Sprintf("internal error while probing: %v", v)
		}
		if interrupted(ctx) && res.Outcome != OutcomeBlocked {
			// Whatever the last step concluded, it concluded it
			// while being torn down: nothing here may be stored as
			// what the server does.
			res.Outcome, res.Reason = OutcomeCanceled, "probe canceled before it finished; last step: "+res.Reason
		}
		res.LatencyMs = p.sinceMs(start)
	}()
	if reason := checkTarget(t.URL); reason != "" {
		res.Outcome, res.Reason = OutcomeBlocked, reason
		return res
	}
	r := &run{p: p, res: &res, url: t.URL}
	if normTransport(t.Transport) != TransportSSE {
		r.streamable(ctx)
		return res
	}
	// The card says legacy SSE: believe it first, but a card can be stale,
	// so a stream that is not there, or that opens and never names an
	// endpoint (a Streamable HTTP server's listening stream), gets one
	// Streamable HTTP try.
	r.legacy(ctx)
	if !fallsThrough(*r.legacyDone) {
		return res
	}
	legacy := res
	legacy.Evidence = nil
	r.resetFindings()
	r.streamable(ctx)
	if rank(legacy.Outcome) < rank(res.Outcome) {
		ev, trips := res.Evidence, res.RoundTrips
		res = legacy
		res.Evidence, res.RoundTrips = ev, trips
	}
	return res
}

// fallsThrough reports legacy attempts that say "no legacy stream here"
// rather than "the server refused us", after which another transport is
// worth a try. A silent open stream is one: mcp-go's Streamable HTTP server
// answers a sessionless GET with a listening stream that never sends an
// endpoint event. A GET that got no headers at all is not: the host is slow
// or gone, and a POST would wait as long again.
func fallsThrough(a legacyAttempt) bool {
	return a.outcome == OutcomeHTTP4xx || a.outcome == OutcomeNotMCP || a.silent
}

// rank orders outcomes from most to least informative, for reporting the
// better of two attempts.
func rank(outcome string) int {
	order := []string{OutcomeOK, OutcomeRequiresLogin, OutcomeRateLimited, OutcomeHandshakeRejected,
		OutcomeHTTP5xx, OutcomeTimeout, OutcomeConnect, OutcomeHTTP4xx, OutcomeNotMCP, OutcomeCanceled, OutcomeBlocked}
	if i := slices.Index(order, outcome); i >= 0 {
		return i
	}
	return len(order)
}

// resetFindings clears what an attempt learned, keeping the evidence.
func (r *run) resetFindings() {
	keep := *r.res
	*r.res = Result{URL: keep.URL, StartedAt: keep.StartedAt, Evidence: keep.Evidence, RoundTrips: keep.RoundTrips}
}

func normTransport(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "streamable-http", "streamable_http", "streamablehttp", "http":
		return TransportStreamable
	}
	return s
}

// fail sets a failed outcome.
func (r *run) fail(outcome, reason string) {
	r.res.Outcome, r.res.Reason = outcome, reason
}

// httpFailure classifies the answers that end a probe the same way at every
// step: no response, 429, 401/403, 5xx and unfollowed redirects. It reports
// whether it decided the outcome.
func (r *run) httpFailure(ctx context.Context, step string, rep reply) bool {
	switch {
	case rep.status == 0:
		r.fail(outcomeOf(rep.class), fmt.Sprintf("%s: %s", step, describeErr(rep)))
	case rep.status == http.StatusTooManyRequests:
		reason := step + " answered 429 Too Many Requests"
		if ra := rep.header.Get("Retry-After"); ra != "" {
			reason += "; Retry-After " + textcut.Cut(ra, 64)
		}
		r.fail(OutcomeRateLimited, reason)
	case rep.status == http.StatusUnauthorized || rep.status == http.StatusForbidden:
		r.fail(OutcomeRequiresLogin, fmt.Sprintf("%s answered %d %s", step, rep.status, http.StatusText(rep.status)))
		r.auth(ctx, rep)
	case rep.status >= 500:
		r.fail(OutcomeHTTP5xx, fmt.Sprintf("%s answered %d %s", step, rep.status, http.StatusText(rep.status)))
	case rep.status >= 300 && rep.status < 400:
		r.fail(OutcomeNotMCP, fmt.Sprintf("%s answered %d redirect to %q, not followed", step, rep.status, textcut.Cut(rep.header.Get("Location"), 200)))
	default:
		return false
	}
	return true
}

func describeErr(rep reply) string {
	if rep.err == nil {
		return rep.class
	}
	return rep.class + ": " + textcut.Cut(rep.err.Error(), 300)
}

// initResult is the part of an InitializeResult the probe keeps.
type initResult struct {
	ProtocolVersion *string         `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      *struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Title   string `json:"title"`
	} `json:"serverInfo"`
}

func (r *run) initializeBody(id int) []byte {
	return mustJSON(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "initialize",
		"params": map[string]any{
			"protocolVersion": ProtocolVersion,
			"capabilities":    map[string]any{},
			"clientInfo":      map[string]any{"name": r.p.opts.ClientName, "version": r.p.opts.ClientVersion},
		},
	})
}

// streamable runs the Streamable HTTP ladder from initialize.
func (r *run) streamable(ctx context.Context) {
	for attempt := 0; attempt < 2; attempt++ {
		sid, version, ok := r.initialize(ctx, attempt > 0)
		if !ok {
			return
		}
		expired := r.afterInitialize(ctx, sid, version, attempt == 0)
		if rej := r.modernRejection; rej != nil {
			// Some modern-only servers (go-sdk) answer initialize with an
			// older version and refuse everything after it.
			r.resetFindings()
			r.modern(ctx, *rej)
			return
		}
		if !expired {
			return
		}
		// The session expired under us: the spec says start a new one, once.
	}
}

// initialize sends initialize and classifies the answer. On success it
// returns the session id (maybe empty) and the negotiated version.
func (r *run) initialize(ctx context.Context, again bool) (sid, version string, ok bool) {
	id := r.nextID()
	rep := r.p.do(ctx, r.res, call{step: "initialize", method: http.MethodPost, url: r.url,
		body: r.initializeBody(id), id: id, accept: acceptBoth})
	if again {
		// Any failure now follows a handshake that worked: partial, not failed.
		if rep.status < 200 || rep.status > 299 || rep.msg == nil || rep.msg.Error != nil {
			r.res.Partial = true
			r.res.Reason = "session expired and the new initialize failed: " + replySummary(rep)
			return "", "", false
		}
	}
	if r.httpFailure(ctx, "initialize", rep) {
		return "", "", false
	}
	if rep.status >= 400 {
		// Only a modern error means a 2026-07-28 server, and only an error
		// answering our request means the handshake itself was refused; a
		// generic error (id null, -32000 "no session" and the like) is the
		// path's answer to any POST, so it says no more than the status.
		if rep.errMsg != nil && rep.errMsg.Error.isModern() {
			r.modern(ctx, rep)
			return "", "", false
		}
		if rep.errMsg != nil && rep.errMsg.hasID(id) {
			r.fail(OutcomeHandshakeRejected, "initialize answered "+replySummary(rep))
			return "", "", false
		}
		switch rep.status {
		case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed:
			r.legacyAfterPOST(ctx, rep)
		default:
			reason := fmt.Sprintf("initialize answered %d %s", rep.status, http.StatusText(rep.status))
			if rep.errMsg != nil {
				reason = "initialize answered " + replySummary(rep)
			}
			r.fail(OutcomeHTTP4xx, reason)
		}
		return "", "", false
	}
	if rep.class != "" {
		r.fail(outcomeOf(rep.class), "initialize: "+describeErr(rep))
		return "", "", false
	}
	if e := rep.msg.Error; e != nil {
		if e.isModern() {
			r.modern(ctx, rep)
		} else {
			r.fail(OutcomeHandshakeRejected, "initialize answered "+replySummary(rep))
		}
		return "", "", false
	}
	var ir initResult
	if err := json.Unmarshal(rep.msg.Result, &ir); err != nil || ir.ProtocolVersion == nil || ir.ServerInfo == nil {
		r.fail(OutcomeNotMCP, "initialize result lacks protocolVersion or serverInfo")
		return "", "", false
	}
	res := r.res
	res.Outcome, res.Partial = OutcomeOK, false
	res.Reason = "initialize succeeded"
	res.Transport, res.Era = TransportStreamable, Era2025
	res.ProtocolVersion = textcut.Cut(*ir.ProtocolVersion, 64)
	res.ServerName = textcut.Cut(ir.ServerInfo.Name, 200)
	res.ServerVersion = textcut.Cut(ir.ServerInfo.Version, 100)
	res.ServerTitle = textcut.Cut(ir.ServerInfo.Title, 200)
	res.Capabilities = compactJSON(ir.Capabilities)
	sid = rep.header.Get(headerSessionID)
	res.SessionID = sid != ""
	return sid, *ir.ProtocolVersion, true
}

// replySummary renders a failed reply for a reason line.
func replySummary(rep reply) string {
	var b strings.Builder
	if rep.status != 0 {
		fmt.Fprintf(&b, "%d", rep.status)
	}
	e := (*rpcError)(nil)
	if rep.msg != nil {
		e = rep.msg.Error
	} else if rep.errMsg != nil {
		e = rep.errMsg.Error
	}
	if e != nil {
		fmt.Fprintf(&b, " JSON-RPC error %d %q", e.Code, textcut.Cut(e.Message, 200))
		if s := e.supported(); len(s) > 0 {
			fmt.Fprintf(&b, " (supported: %s)", strings.Join(s, ", "))
		}
	} else if rep.class != "" {
		b.WriteString(" " + describeErr(rep))
	}
	return strings.TrimSpace(b.String())
}

// afterInitialize sends notifications/initialized, lists tools and ends the
// session. It reports true when the session expired and a new handshake
// should be tried (only when mayRetry).
func (r *run) afterInitialize(ctx context.Context, sid, version string, mayRetry bool) (expired bool) {
	hdr := http.Header{}
	hdr.Set(headerProtocolVersion, version)
	if sid != "" {
		hdr.Set(headerSessionID, sid)
	}
	defer func() {
		switch {
		case sid == "" || expired || ctx.Err() != nil:
		case r.rateLimited:
			// The host just asked us to back off; the session will
			// expire on its own.
			r.res.Reason += "; session DELETE skipped after 429"
		default:
			r.deleteSession(ctx, hdr)
		}
	}()
	rep := r.p.do(ctx, r.res, call{step: "notifications/initialized", method: http.MethodPost, url: r.url,
		body: []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), header: hdr, accept: acceptBoth})
	if rep.status < 200 || rep.status > 299 {
		if rep.status == http.StatusNotFound && sid != "" && mayRetry {
			return true
		}
		if modernRejection(rep) {
			r.modernRejection = &rep
			return false
		}
		r.partial("notifications/initialized", rep)
		return false
	}
	if !hasCapability(r.res.Capabilities, "tools") {
		zero := 0
		r.res.ToolCount = &zero
		r.res.Reason = "initialize succeeded; the server declares no tools capability"
		return false
	}
	return r.listTools(ctx, hdr, false, sid != "" && mayRetry)
}

// versionList finds "supported versions: 2026-07-28, …" in a plain-text
// error body, the form go-sdk uses.
var versionList = regexp.MustCompile(`(?i)supported(?: protocol)? versions?\W*((?:\d{4}-\d{2}-\d{2}[\s,]*)+)`)
var dateRE = regexp.MustCompile(`\d{4}-\d{2}-\d{2}`)

// modernRejection reports a 400 that says the server speaks only modern
// versions: a modern JSON-RPC error, or a plain-text version list naming
// one. It copies the versions into the evidence.
func modernRejection(rep reply) bool {
	if rep.status != http.StatusBadRequest {
		return false
	}
	if rep.errMsg != nil {
		return rep.errMsg.Error.isModern()
	}
	m := versionList.FindSubmatch(rep.body)
	if m == nil {
		return false
	}
	vs := dateRE.FindAllString(string(m[1]), 20)
	if rep.ex != nil {
		rep.ex.SupportedVersions = vs
	}
	for _, v := range vs {
		if v >= ModernProtocolVersion {
			return true
		}
	}
	return false
}

// partial records a failure after a successful handshake.
func (r *run) partial(step string, rep reply) {
	r.res.Partial = true
	r.res.Reason = fmt.Sprintf("handshake succeeded, then %s failed: %s", step, replySummary(rep))
	if rep.status == http.StatusTooManyRequests {
		r.rateLimited = true
		if ra := rep.header.Get("Retry-After"); ra != "" {
			r.res.Reason += "; Retry-After " + textcut.Cut(ra, 64)
		}
	}
}

// deleteSession ends the session politely; 2xx, 404 and 405 are all fine and
// nothing about it changes the outcome.
func (r *run) deleteSession(ctx context.Context, hdr http.Header) {
	r.p.do(ctx, r.res, call{step: "delete", method: http.MethodDelete, url: r.url, header: hdr})
}

// toolsPage is the part of a ListToolsResult the probe keeps.
type toolsPage struct {
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	NextCursor json.RawMessage            `json:"nextCursor"`
	Meta       map[string]json.RawMessage `json:"_meta"`
}

// listTools pages through tools/list. It reports true when a 404 says the
// session expired and the caller may start over.
func (r *run) listTools(ctx context.Context, hdr http.Header, modern, mayRetry bool) (expired bool) {
	var (
		cursor *string
		seen   = map[string]bool{}
		count  int
		names  []string
	)
	res := r.res
	finish := func(truncated bool) {
		c := count
		res.ToolCount, res.ToolNames, res.ToolsTruncated = &c, names, truncated
	}
	for page := 0; page < r.p.opts.MaxToolPages; page++ {
		id := r.nextID()
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = *cursor
		}
		h := hdr
		if modern {
			params["_meta"] = r.modernMeta()
			h = hdr.Clone()
			h.Set(headerMethod, "tools/list")
		}
		rep := r.p.do(ctx, res, call{step: "tools/list", method: http.MethodPost, url: r.url,
			body:   mustJSON(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}),
			header: h, id: id, accept: acceptBoth})
		if rep.status == http.StatusNotFound && mayRetry && rep.errMsg == nil {
			return true
		}
		if rep.status < 200 || rep.status > 299 || rep.msg == nil {
			if !modern && modernRejection(rep) {
				r.modernRejection = &rep
				return false
			}
			r.partial("tools/list", rep)
			return false
		}
		if e := rep.msg.Error; e != nil {
			if e.Code == codeMethodNotFound && page == 0 {
				finish(false)
				res.Reason = "handshake succeeded; tools/list is not implemented"
				return false
			}
			r.partial("tools/list", rep)
			return false
		}
		var tp toolsPage
		if err := json.Unmarshal(rep.msg.Result, &tp); err != nil || tp.Tools == nil {
			rep.class, rep.err = classNotJSONRPC, fmt.Errorf("tools/list result has no tools array")
			r.partial("tools/list", rep)
			return false
		}
		if modern && res.ServerName == "" {
			r.serverInfoFromMeta(tp.Meta)
		}
		count += len(tp.Tools)
		for _, t := range tp.Tools {
			if len(names) >= r.p.opts.MaxToolNames {
				break
			}
			names = append(names, textcut.Cut(t.Name, 128))
		}
		next, more := parseCursor(tp.NextCursor, modern)
		if !more {
			finish(false)
			return false
		}
		if seen[next] {
			finish(true)
			res.Reason = "tools/list repeated a cursor; stopped"
			return false
		}
		seen[next] = true
		cursor = &next
	}
	finish(true)
	res.Reason = fmt.Sprintf("tools/list stopped after %d pages", r.p.opts.MaxToolPages)
	return false
}

// parseCursor reads nextCursor: absent or null ends the listing; under
// 2026-07-28 an empty string is a real cursor, before it a common way to say
// "no more".
func parseCursor(raw json.RawMessage, modern bool) (string, bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	if s == "" && !modern {
		return "", false
	}
	return s, true
}

// hasCapability reports whether the capabilities object has key; unknown or
// unparsable capabilities count as yes, so the probe still asks.
func hasCapability(caps json.RawMessage, key string) bool {
	if len(caps) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(caps, &m) != nil {
		return true
	}
	_, ok := m[key]
	return ok
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("probe: marshal request: %v", err)) // only fixed shapes are marshalled
	}
	return b
}

// compactJSON keeps a raw object small and canonical, dropping non-objects.
func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || len(raw) > 64<<10 {
		return nil
	}
	var v map[string]any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return mustJSON(v)
}
