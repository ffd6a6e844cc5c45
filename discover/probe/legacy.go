package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// legacyEventBytes bounds what is read while waiting for the endpoint event:
// it is the first event a legacy server sends, so a little slack suffices.
const legacyEventBytes = 256 << 10

// legacyAfterPOST runs the spec's fallback after initialize got 400, 404 or
// 405 without a modern error, and keeps the more telling of the two failures.
// When the legacy GET already ran in this probe (the card said sse), its
// answer is reused: asking the same URL the same question twice in one probe
// only costs the host another request.
func (r *run) legacyAfterPOST(ctx context.Context, post reply) {
	if r.legacyDone != nil {
		r.res.Outcome, r.res.Reason = r.legacyDone.outcome, r.legacyDone.reason
	} else {
		r.legacy(ctx)
	}
	switch r.res.Outcome {
	case OutcomeOK, OutcomeRequiresLogin, OutcomeRateLimited, OutcomeTimeout, OutcomeConnect, OutcomeHTTP5xx:
		return
	}
	r.fail(OutcomeHTTP4xx, fmt.Sprintf("initialize answered %d %s; legacy SSE: %s",
		post.status, http.StatusText(post.status), r.res.Reason))
}

// legacyAttempt is how the one legacy GET of a probe ended.
type legacyAttempt struct {
	outcome, reason string
	// silent: the stream opened but no endpoint event came within SSEWait.
	silent bool
}

// legacy opens the HTTP+SSE stream and waits for the endpoint event.
func (r *run) legacy(ctx context.Context) {
	out := r.legacyGet(ctx)
	res := r.res
	defer func() {
		r.legacyDone = &legacyAttempt{outcome: res.Outcome, reason: res.Reason,
			silent: out.class == fetch.ClassTimeout && out.rep.status != 0}
	}()
	switch {
	case out.endpoint != "":
		res.Outcome, res.Partial = OutcomeOK, false
		res.Reason = "legacy HTTP+SSE endpoint event received"
		res.Transport, res.Era = TransportSSE, EraLegacySSE
		res.LegacyEndpoint = out.endpoint
	case out.rep.status != 0 && r.httpFailure(ctx, "legacy SSE GET", out.rep):
	case out.rep.status >= 400:
		r.fail(OutcomeHTTP4xx, fmt.Sprintf("legacy SSE GET answered %d %s", out.rep.status, http.StatusText(out.rep.status)))
	case out.class == fetch.ClassTimeout && out.rep.status != 0:
		r.fail(OutcomeTimeout, fmt.Sprintf("legacy SSE stream sent no endpoint event within %s", r.p.opts.SSEWait))
	case out.class != "":
		r.fail(outcomeOf(out.class), "legacy SSE GET: "+describeErr(out.rep))
	default:
		r.fail(OutcomeNotMCP, "legacy SSE stream ended without an endpoint event")
	}
}

type legacyOut struct {
	rep      reply
	class    string
	endpoint string
}

// legacyGet opens the stream; the SSEWait clock starts once the headers are
// in, so time spent waiting for the host's slot does not count against it.
func (r *run) legacyGet(ctx context.Context) (out legacyOut) {
	p := r.p
	res := r.res
	res.Evidence = append(res.Evidence, Exchange{Step: "legacy-sse", Method: http.MethodGet, URL: r.url})
	ex := &res.Evidence[len(res.Evidence)-1]
	res.RoundTrips++
	out.rep.ex = ex
	start := p.opts.Now()
	defer func() {
		ex.LatencyMs = p.sinceMs(start)
		if out.class != "" {
			ex.Error = out.class
			if out.rep.err != nil {
				ex.Detail = textcut.Cut(out.rep.err.Error(), 300)
			}
		}
		p.log.LogAttrs(ctx, levelDebug, "probe exchange", attrsOf(ex)...)
	}()

	rctx, cancel := p.requestContext(ctx)
	// Cancel before Close: an endless stream must not be drained.
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, r.url, nil)
	if err != nil {
		out.class, out.rep.class, out.rep.err = classInvalid, classInvalid, err
		return out
	}
	req.Header.Set("Accept", mediaSSE)
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := p.client.Do(req)
	if err != nil {
		out.class = p.classifyErr(ctx, err)
		out.rep.class, out.rep.err = out.class, err
		return out
	}
	defer func() { cancel(); _ = resp.Body.Close() }()
	out.rep.status, out.rep.header = resp.StatusCode, resp.Header
	ex.Status = resp.StatusCode
	ex.ContentType = resp.Header.Get("Content-Type")
	ex.RetryAfter = resp.Header.Get("Retry-After")
	if resp.StatusCode != http.StatusOK {
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			ex.Location = resp.Header.Get("Location")
		}
		return out
	}
	media, _, _ := mime.ParseMediaType(ex.ContentType)
	out.rep.media = media
	if media != mediaSSE {
		out.class, out.rep.class = classContentType, classContentType
		out.rep.err = fmt.Errorf("content type %q is not an event stream", ex.ContentType)
		return out
	}
	var waited atomic.Bool
	timer := time.AfterFunc(p.opts.SSEWait, func() { waited.Store(true); cancel() })
	defer timer.Stop()
	var data string
	serr := readSSE(resp.Body, sseLimits{MaxBytes: legacyEventBytes, MaxEvents: p.opts.MaxEvents}, func(ev sseEvent) bool {
		if ev.Event != "endpoint" {
			return true // keep-alives, pings, anything before it
		}
		data = ev.Data
		return false
	})
	if data == "" {
		switch {
		case serr == nil, errors.Is(serr, io.EOF):
			out.class, out.rep.err = classNoResponse, errors.New("stream ended without an endpoint event")
		case waited.Load(), rctx.Err() != nil && ctx.Err() == nil:
			out.class, out.rep.err = fetch.ClassTimeout, serr
		default:
			out.class, out.rep.err = p.classifyBodyErr(ctx, serr), serr
		}
		out.rep.class = out.class
		if out.class == classNoResponse {
			// An empty stream is an answer, just not an MCP one.
			out.class, out.rep.class = "", ""
		}
		return out
	}
	base, err := url.Parse(r.url)
	if err != nil {
		out.class, out.rep.class, out.rep.err = classInvalid, classInvalid, err
		return out
	}
	ref, err := url.Parse(data)
	if err != nil {
		out.class, out.rep.class = classNotJSONRPC, classNotJSONRPC
		out.rep.err = fmt.Errorf("endpoint event data is not a URL: %w", err)
		return out
	}
	out.endpoint = textcut.Cut(base.ResolveReference(ref).String(), 2048)
	return out
}
