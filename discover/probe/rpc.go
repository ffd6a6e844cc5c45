package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/textcut"
)

// Modern (2026-07-28) error codes that tell a modern-only server apart.
const (
	codeHeaderMismatch             = -32020
	codeMissingClientCapability    = -32021
	codeUnsupportedProtocolVersion = -32022
	codeMethodNotFound             = -32601
	errorBodyPeek                  = 64 << 10 // what is read of a non-2xx body
	mediaJSON                      = "application/json"
	mediaSSE                       = "text/event-stream"
	acceptBoth                     = mediaJSON + ", " + mediaSSE
	headerSessionID                = "Mcp-Session-Id"
	headerProtocolVersion          = "MCP-Protocol-Version"
	headerMethod                   = "Mcp-Method"
	metaProtocolVersion            = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo                 = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities         = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo                 = "io.modelcontextprotocol/serverInfo"
	// Exchange classes the probe adds to fetch's for answers that arrived
	// but are not MCP; transport failures keep fetch.Class's names.
	classNoResponse  = string(failure.NoResponse)
	classNotJSONRPC  = string(failure.NotJSONRPC)
	classContentType = string(failure.UnexpectedContentType)
)

// rpcMessage is any JSON-RPC 2.0 message; fields absent stay zero.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// supported returns error.data.supported, if the error carries one.
func (e *rpcError) supported() []string {
	if e == nil || len(e.Data) == 0 {
		return nil
	}
	var d struct {
		Supported []string `json:"supported"`
	}
	if json.Unmarshal(e.Data, &d) != nil {
		return nil
	}
	return d.Supported
}

// isModern reports a recognised 2026-07-28 error: one of its new codes, or a
// version list that names a modern revision.
func (e *rpcError) isModern() bool {
	if e == nil {
		return false
	}
	switch e.Code {
	case codeHeaderMismatch, codeMissingClientCapability, codeUnsupportedProtocolVersion:
		return true
	}
	for _, v := range e.supported() {
		if v >= ModernProtocolVersion {
			return true
		}
	}
	return false
}

// hasID reports whether the message's id is the integer id.
func (m *rpcMessage) hasID(id int) bool {
	if len(m.ID) == 0 {
		return false
	}
	n, err := strconv.Atoi(string(bytes.TrimSpace(m.ID)))
	return err == nil && n == id
}

// call is one HTTP exchange of the probe.
type call struct {
	step   string
	method string // HTTP method
	url    string
	body   []byte
	header http.Header
	id     int // JSON-RPC id awaited; 0 means no answer is read
	accept string
}

// reply is what came back, already read and closed.
type reply struct {
	step   string    // the call's step, for reason lines
	ex     *Exchange // the recorded evidence (points into Result.Evidence)
	status int
	header http.Header
	media  string      // media type without parameters
	msg    *rpcMessage // our response, when a 2xx carried one
	errMsg *rpcMessage // a JSON-RPC error found in a non-2xx body
	body   []byte      // the first bytes of a non-2xx body
	class  string      // failure class when something went wrong
	err    error
}

// do sends one request, reads the answer, closes the body, and records the
// exchange in res. The one retry after a dropped connection is the
// transport's (internal/fetch), so it is not repeated here.
func (p *Prober) do(ctx context.Context, res *Result, c call) reply {
	res.Evidence = append(res.Evidence, Exchange{Step: c.step, Method: c.method, URL: c.url})
	ex := &res.Evidence[len(res.Evidence)-1]
	res.RoundTrips++
	r := reply{step: c.step, ex: ex}
	start := p.opts.Now()
	defer func() {
		ex.LatencyMs = p.opts.Now().Sub(start).Milliseconds()
		if r.class != "" && ex.Error == "" {
			ex.Error = r.class
			if r.err != nil {
				ex.Detail = r.err.Error()
			}
		}
		p.log.LogAttrs(ctx, levelDebug, "probe exchange", attrsOf(ex)...)
	}()

	rctx, cancel := p.requestContext(ctx)
	defer cancel()
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(rctx, c.method, c.url, body)
	if err != nil {
		r.class, r.err = classInvalid, fmt.Errorf("build request: %w", err)
		return r
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	if c.accept != "" {
		req.Header.Set("Accept", c.accept)
	}
	if c.body != nil {
		req.Header.Set("Content-Type", mediaJSON)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		r.class, r.err = p.classifyErr(ctx, err), err
		return r
	}
	defer func() { _ = resp.Body.Close() }()
	r.status, r.header = resp.StatusCode, resp.Header
	ex.Status = resp.StatusCode
	ex.ContentType = resp.Header.Get("Content-Type")
	ex.RetryAfter = resp.Header.Get("Retry-After")
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		ex.Location = resp.Header.Get("Location")
	}
	r.media, _, _ = mime.ParseMediaType(ex.ContentType)

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, rerr := readCapped(resp.Body, errorBodyPeek)
		if rerr != nil && !errors.Is(rerr, errBodySizeLimit) {
			// The status is what matters; a broken error body is only noted.
			ex.Detail = "reading error body: " + rerr.Error()
		}
		r.body = b
		if m := parseErrorBody(b); m != nil {
			r.errMsg = m
			noteRPCError(ex, m.Error)
		}
		return r
	}
	if c.id == 0 {
		// Notifications and DELETE: any body is ignored, but bounded.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, errorBodyPeek))
		return r
	}
	switch r.media {
	case mediaJSON:
		b, rerr := readCapped(resp.Body, p.opts.MaxBodyBytes)
		if rerr != nil {
			r.class, r.err = p.classifyBodyErr(ctx, rerr), rerr
			return r
		}
		m, perr := findResponse(b, c.id)
		if perr != nil {
			r.class, r.err = classNotJSONRPC, perr
			return r
		}
		if m == nil {
			r.class, r.err = classNoResponse, errors.New("no response with our id in the json body")
			return r
		}
		r.msg = m
	case mediaSSE:
		var found *rpcMessage
		serr := readSSE(resp.Body, sseLimits{MaxBytes: p.opts.MaxBodyBytes, MaxEvents: p.opts.MaxEvents}, func(ev sseEvent) bool {
			if ev.Data == "" {
				return true // priming event
			}
			var m rpcMessage
			if json.Unmarshal([]byte(ev.Data), &m) != nil {
				return true
			}
			if m.Method != "" || !m.hasID(c.id) || (m.Result == nil && m.Error == nil) {
				return true // a notification, a server request, or someone else's answer
			}
			found = &m
			return false
		})
		if found != nil {
			drainStream(resp.Body)
		}
		if found == nil {
			if serr == nil || errors.Is(serr, io.EOF) {
				r.class, r.err = classNoResponse, errors.New("event stream ended without a response with our id")
			} else {
				r.class, r.err = p.classifyBodyErr(ctx, serr), serr
			}
			return r
		}
		r.msg = found
	default:
		r.class, r.err = classContentType, fmt.Errorf("content type %q is neither json nor an event stream", ex.ContentType)
		return r
	}
	if r.msg.Error != nil {
		noteRPCError(ex, r.msg.Error)
	}
	return r
}

// streamDrain bounds how long, and how much, drainStream waits for.
const (
	streamDrainGrace = time.Second
	streamDrainBytes = 64 << 10
)

// drainStream reads what is left of an event stream after the answer, for
// at most streamDrainGrace and streamDrainBytes. The server should end the
// stream once it has sent the answer; waiting for that end makes the
// request over for the server too before the next one is sent, and keeps
// the connection for it. Over HTTP/1.1, closing a stream the server is
// still writing closes the connection, and the server may only notice
// after the next request, on a new connection, has begun: two requests in
// flight at once as the host sees them.
func drainStream(body io.ReadCloser) {
	t := time.AfterFunc(streamDrainGrace, func() { _ = body.Close() })
	defer t.Stop()
	_, _ = io.Copy(io.Discard, io.LimitReader(body, streamDrainBytes))
}

// noteRPCError copies a JSON-RPC error into the evidence.
func noteRPCError(ex *Exchange, e *rpcError) {
	if e == nil {
		return
	}
	code := e.Code
	ex.JSONRPCCode = &code
	ex.JSONRPCMessage = textcut.Cut(e.Message, 300)
	ex.SupportedVersions = e.supported()
}

// parseErrorBody finds a JSON-RPC error in a non-2xx body, whatever its
// content type claims; servers often send JSON as text/plain.
func parseErrorBody(b []byte) *rpcMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return nil
	}
	var m rpcMessage
	if json.Unmarshal(b, &m) != nil || m.Error == nil {
		return nil
	}
	return &m
}

// findResponse finds the response with our id in a JSON body: one object, or
// an array (2025-03-26 servers could batch).
func findResponse(b []byte, id int) (*rpcMessage, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, errors.New("empty json body")
	}
	var msgs []rpcMessage
	if b[0] == '[' {
		if err := json.Unmarshal(b, &msgs); err != nil {
			return nil, fmt.Errorf("json body: %w", err)
		}
	} else {
		var m rpcMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("json body: %w", err)
		}
		msgs = []rpcMessage{m}
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Method == "" && m.hasID(id) && (m.Result != nil || m.Error != nil) {
			return m, nil
		}
	}
	return nil, nil
}

// requestContext bounds one exchange when Options.Timeout asks for more
// than the client's own bound.
func (p *Prober) requestContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if p.opts.Timeout > 0 {
		return context.WithTimeout(ctx, p.opts.Timeout)
	}
	return context.WithCancel(ctx)
}

// sinceMs is the milliseconds elapsed on the probe's clock.
func (p *Prober) sinceMs(t time.Time) int64 { return p.opts.Now().Sub(t).Milliseconds() }
