package simweb

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Behaviours a fixture can script with the Simweb-Behavior pseudo-header.
const (
	behaviorStall     = "stall"
	behaviorHang      = "hang"
	behaviorDrop      = "drop"
	behaviorDropOnce  = "drop-once"
	behaviorDropTwice = "drop-twice"
)

// mcpMarker starts a fixture whose content mounts an MCP server instead of a
// static response.
const mcpMarker = "SIMWEB-MCP"

// errFixture marks every fixture syntax error so callers can tell bad
// fixtures from I/O failures.
var errFixture = errors.New("bad fixture")

// archiveFile is one file of a txtar-like archive.
type archiveFile struct {
	Name string
	Data []byte
}

// parseArchive splits a txtar-like archive into files. Lines before the first
// "-- name --" marker are a comment and are dropped. Each file's data is kept
// byte for byte, including its final newline.
func parseArchive(data []byte) ([]archiveFile, error) {
	var files []archiveFile
	cur := -1
	for len(data) > 0 {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		hasNL := len(line) < len(data)
		if name, ok := markerName(line); ok {
			if name == "" {
				return nil, fmt.Errorf("%w: file marker without a name", errFixture)
			}
			files = append(files, archiveFile{Name: name})
			cur = len(files) - 1
		} else if cur >= 0 {
			files[cur].Data = append(files[cur].Data, line...)
			if hasNL {
				files[cur].Data = append(files[cur].Data, '\n')
			}
		}
		data = rest
	}
	return files, nil
}

func markerName(line []byte) (string, bool) {
	s := strings.TrimSuffix(string(line), "\r")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 6 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

// splitName turns "Host/path?query" into a lower-cased host and a path that
// starts with "/" (the query, if any, stays on the path).
func splitName(name string) (host, p string, err error) {
	host, rest, found := strings.Cut(name, "/")
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if host == "" || strings.ContainsAny(host, " \t:?#") {
		return "", "", fmt.Errorf("%w: %q does not start with a host name", errFixture, name)
	}
	p = "/"
	if found {
		p += rest
	}
	return host, p, nil
}

// resource is one parsed fixture file: either a scripted response or an MCP
// server mount.
type resource struct {
	status int
	header http.Header
	body   []byte

	requireAccept string
	behavior      string
	pad           int

	etag         string
	lastModified time.Time

	// MCP mount (set instead of the fields above).
	mcpKind string
	mcpOpts MCPOptions

	// served counts requests, so drop-once/drop-twice know which to drop.
	served atomic.Int64
}

// parseResource reads one fixture file's content.
func parseResource(name string, data []byte) (*resource, error) {
	if bytes.HasPrefix(data, []byte(mcpMarker+" ")) || bytes.Equal(bytes.TrimSpace(data), []byte(mcpMarker)) {
		return parseMCPMount(name, data)
	}
	r := &resource{status: http.StatusOK, header: make(http.Header)}
	if !bytes.HasPrefix(data, []byte("HTTP ")) {
		r.body = data
		r.header.Set("Content-Type", contentTypeFor(name))
		return r, nil
	}
	statusLine, rest, _ := bytes.Cut(data, []byte("\n"))
	code, err := strconv.Atoi(strings.TrimSpace(string(statusLine[len("HTTP "):])))
	if err != nil || code < 100 || code > 999 {
		return nil, fmt.Errorf("%w: %s: bad status line %q", errFixture, name, statusLine)
	}
	r.status = code
	for {
		if len(rest) == 0 {
			break
		}
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		s := strings.TrimSuffix(string(line), "\r")
		if s == "" {
			break
		}
		k, v, ok := strings.Cut(s, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%w: %s: bad header line %q", errFixture, name, s)
		}
		k = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		if err := r.setHeader(name, k, v); err != nil {
			return nil, err
		}
	}
	r.body = rest
	if r.header.Get("Content-Type") == "" && len(r.body) > 0 {
		r.header.Set("Content-Type", contentTypeFor(name))
	}
	return r, nil
}

func (r *resource) setHeader(name, k, v string) error {
	switch k {
	case "Simweb-Require-Accept":
		r.requireAccept = mediaEssence(v)
	case "Simweb-Behavior":
		switch v {
		case behaviorStall, behaviorHang, behaviorDrop, behaviorDropOnce, behaviorDropTwice:
			r.behavior = v
		default:
			return fmt.Errorf("%w: %s: unknown Simweb-Behavior %q", errFixture, name, v)
		}
	case "Simweb-Pad":
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: %s: bad Simweb-Pad %q", errFixture, name, v)
		}
		r.pad = n
	default:
		if strings.HasPrefix(k, "Simweb-") {
			return fmt.Errorf("%w: %s: unknown pseudo-header %q", errFixture, name, k)
		}
		r.header.Add(k, v)
		switch k {
		case "Etag":
			r.etag = v
		case "Last-Modified":
			t, err := http.ParseTime(v)
			if err != nil {
				return fmt.Errorf("%w: %s: bad Last-Modified %q: %w", errFixture, name, v, err)
			}
			r.lastModified = t
		}
	}
	return nil
}

// parseMCPMount reads "SIMWEB-MCP KIND [name=N] [version=V] [tools=K]".
func parseMCPMount(name string, data []byte) (*resource, error) {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) < 2 {
		return nil, fmt.Errorf("%w: %s: %s needs a kind", errFixture, name, mcpMarker)
	}
	r := &resource{mcpKind: fields[1]}
	for _, f := range fields[2:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("%w: %s: bad %s option %q", errFixture, name, mcpMarker, f)
		}
		switch k {
		case "name":
			r.mcpOpts.Name = v
		case "version":
			r.mcpOpts.Version = v
		case "tools":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%w: %s: bad tools count %q", errFixture, name, v)
			}
			r.mcpOpts.Tools = n
		default:
			return nil, fmt.Errorf("%w: %s: unknown %s option %q", errFixture, name, mcpMarker, k)
		}
	}
	if !knownKind(r.mcpKind) {
		return nil, fmt.Errorf("%w: %s: unknown MCP kind %q", errFixture, name, r.mcpKind)
	}
	return r, nil
}

// contentTypeFor picks the Content-Type of a fixture that does not set one.
func contentTypeFor(name string) string {
	p, _, _ := strings.Cut(name, "?")
	switch strings.ToLower(path.Ext(p)) {
	case ".json":
		return "application/json"
	case ".html", ".htm":
		return "text/html; charset=utf-8"
	default:
		return "text/plain"
	}
}

// mediaEssence is a media type without parameters, lower-cased.
func mediaEssence(s string) string {
	s, _, _ = strings.Cut(s, ";")
	return strings.ToLower(strings.TrimSpace(s))
}

// acceptLists reports whether an Accept header names want (by essence; a
// wildcard does not count, as servers that insist on a type do not honour it).
func acceptLists(accept, want string) bool {
	for part := range strings.SplitSeq(accept, ",") {
		if mediaEssence(part) == want {
			return true
		}
	}
	return false
}
