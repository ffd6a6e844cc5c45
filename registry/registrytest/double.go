// Package registrytest is a local double of the MCP Registry's v0.1 read API
// for tests, benchmarks and demos. Its answers copy the real handlers' shapes
// (recorded in shared/specs/registry/data/api-responses.stubbed.json): the
// envelope and its field order, RFC 3339 times with fractional seconds, the
// "name:version" keyset cursor, nextCursor only on full pages, RFC 9457
// problem bodies, and the plain-text 404 for an unencoded slash in a name.
package registrytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cardcrawl/cardcrawl/registry/wire"
)

// Official is the Registry's per-version metadata (registry/wire).
type Official = wire.Official

type entry struct {
	name, version string
	server        json.RawMessage
	official      Official
}

// Double serves a mutable set of server versions. The zero value is not
// usable; call New.
type Double struct {
	mu      sync.Mutex
	entries []entry // sorted by (name, version), the real ORDER BY
	now     func() time.Time
	// Hook, when set, sees every request first (counting from 1) and may
	// answer it itself by returning true: faults, 429s, broken pages.
	Hook     func(w http.ResponseWriter, r *http.Request, n int) bool
	requests []string
	unsorted bool // after Load; sorted before the next read
}

// sortLocked restores the (name, version) order; d.mu must be held.
func (d *Double) sortLocked() {
	if d.unsorted {
		sort.SliceStable(d.entries, func(i, j int) bool {
			return less(d.entries[i].name, d.entries[i].version, d.entries[j].name, d.entries[j].version)
		})
		d.unsorted = false
	}
}

// New returns an empty double whose Date header and publish times come
// from now (time.Now if nil).
func New(now func() time.Time) *Double {
	if now == nil {
		now = time.Now
	}
	return &Double{now: now}
}

// Publish adds a version as the Registry's publish does: active, stamped
// now, latest if it wins the comparison with the current latest (here: it
// always does unless latest is false), flipping the old latest's isLatest
// WITHOUT touching its updatedAt — the real Registry's behaviour.
func (d *Double) Publish(server json.RawMessage, latest bool) error {
	var key struct{ Name, Version string }
	if err := json.Unmarshal(server, &key); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sortLocked()
	t := d.now().UTC()
	if latest {
		for i := range d.entries {
			if d.entries[i].name == key.Name {
				d.entries[i].official.IsLatest = false
			}
		}
	}
	e := entry{name: key.Name, version: key.Version, server: server, official: Official{
		Status: "active", StatusChangedAt: t, PublishedAt: t, UpdatedAt: t, IsLatest: latest}}
	i := sort.Search(len(d.entries), func(i int) bool { return !less(d.entries[i].name, d.entries[i].version, e.name, e.version) })
	if i < len(d.entries) && d.entries[i].name == e.name && d.entries[i].version == e.version {
		return fmt.Errorf("publish: duplicate version %s %s", e.name, e.version)
	}
	d.entries = append(d.entries, entry{})
	copy(d.entries[i+1:], d.entries[i:])
	d.entries[i] = e
	return nil
}

// Load adds versions with explicit metadata (fixtures, bulk benchmarks).
func (d *Double) Load(server json.RawMessage, o Official) error {
	var key struct{ Name, Version string }
	if err := json.Unmarshal(server, &key); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.entries = append(d.entries, entry{name: key.Name, version: key.Version, server: server, official: o})
	d.unsorted = true
	return nil
}

// SetStatus changes a version's status the way the Registry does: the
// status and updatedAt change together.
func (d *Double) SetStatus(name, version, status, message string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.now().UTC()
	for i := range d.entries {
		if d.entries[i].name == name && d.entries[i].version == version {
			o := &d.entries[i].official
			o.Status, o.StatusMessage, o.StatusChangedAt, o.UpdatedAt = status, message, t, t
		}
	}
}

// Requests returns the request URIs served so far.
func (d *Double) Requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.requests...)
}

func less(an, av, bn, bv string) bool {
	if an != bn {
		return an < bn
	}
	return av < bv
}

// ServeHTTP implements the read API.
func (d *Double) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	d.requests = append(d.requests, r.URL.RequestURI())
	n := len(d.requests)
	hook := d.Hook
	d.mu.Unlock()
	w.Header().Set("Date", d.now().UTC().Format(http.TimeFormat))
	if hook != nil && hook(w, r, n) {
		return
	}
	path := r.URL.EscapedPath()
	switch {
	case path == "/v0.1/servers":
		d.list(w, r)
	case strings.HasPrefix(path, "/v0.1/servers/") && strings.HasSuffix(path, "/versions"):
		seg := strings.TrimSuffix(strings.TrimPrefix(path, "/v0.1/servers/"), "/versions")
		if strings.Contains(seg, "/") {
			// The real router cannot match an unencoded slash.
			http.Error(w, "404 page not found", http.StatusNotFound)
			return
		}
		name, err := url.PathUnescape(seg)
		if err != nil {
			Problem(w, http.StatusBadRequest, "Bad Request", "invalid server name encoding")
			return
		}
		d.versions(w, r, name)
	default:
		http.Error(w, "404 page not found", http.StatusNotFound)
	}
}

// The double serves server.json as it was published, raw.
type (
	serverResponse = wire.ServerResponse[json.RawMessage, wire.OfficialMeta]
	listResponse   = wire.ServerList[serverResponse]
)

func (d *Double) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 30
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 100 {
			ProblemErrors(w, http.StatusUnprocessableEntity, "Unprocessable Entity", "validation failed", "expected number <= 100", "query.limit", s)
			return
		}
		limit = n
	}
	includeDeleted := q.Get("include_deleted") == "true"
	var since time.Time
	if s := q.Get("updated_since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			Problem(w, http.StatusBadRequest, "Bad Request", "Invalid updated_since format: expected RFC3339 timestamp (e.g., 2025-08-07T13:15:04.280Z)")
			return
		}
		if q.Get("include_deleted") == "false" {
			Problem(w, http.StatusBadRequest, "Bad Request", "Cannot set include_deleted=false when using updated_since (incremental sync requires deleted servers)")
			return
		}
		since, includeDeleted = t, true
	}
	cursor := q.Get("cursor")
	cName, cVersion, hasVersion := strings.Cut(cursor, ":")
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sortLocked()
	out := listResponse{Servers: []serverResponse{}}
	for _, e := range d.entries {
		if cursor != "" {
			if hasVersion && !less(cName, cVersion, e.name, e.version) {
				continue
			}
			if !hasVersion && e.name <= cName {
				continue
			}
		}
		if !includeDeleted && e.official.Status == "deleted" {
			continue
		}
		if !since.IsZero() && !e.official.UpdatedAt.After(since) {
			continue
		}
		if v := q.Get("version"); v == "latest" && !e.official.IsLatest || v != "" && v != "latest" && v != e.version {
			continue
		}
		if s := q.Get("search"); s != "" && !strings.Contains(strings.ToLower(e.name), strings.ToLower(s)) {
			continue
		}
		out.Servers = append(out.Servers, response(e))
		if len(out.Servers) == limit {
			out.Metadata.NextCursor = e.name + ":" + e.version
			break
		}
	}
	out.Metadata.Count = len(out.Servers)
	writeJSON(w, http.StatusOK, out)
}

func (d *Double) versions(w http.ResponseWriter, r *http.Request, name string) {
	includeDeleted := r.URL.Query().Get("include_deleted") == "true"
	d.mu.Lock()
	var found []entry
	for _, e := range d.entries {
		if e.name == name && (includeDeleted || e.official.Status != "deleted") {
			found = append(found, e)
		}
	}
	d.mu.Unlock()
	if len(found) == 0 {
		Problem(w, http.StatusNotFound, "Not Found", "Server not found")
		return
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].official.PublishedAt.After(found[j].official.PublishedAt) })
	out := listResponse{}
	for _, e := range found {
		out.Servers = append(out.Servers, response(e))
	}
	out.Metadata.Count = len(found)
	writeJSON(w, http.StatusOK, out)
}

func response(e entry) serverResponse {
	var sr serverResponse
	sr.Server = e.server
	sr.Meta.Official = e.official
	return sr
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// Problem writes an RFC 9457 body as the Registry does.
func Problem(w http.ResponseWriter, status int, title, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	b, _ := json.Marshal(wire.Problem{Title: title, Status: status, Detail: detail})
	w.Write(b)
}

// ProblemErrors writes a problem body with one field error (huma's 422).
func ProblemErrors(w http.ResponseWriter, status int, title, detail, message, location string, value any) {
	type fieldError struct {
		Message  string `json:"message"`
		Location string `json:"location"`
		Value    any    `json:"value"`
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	b, _ := json.Marshal(struct {
		Title  string       `json:"title"`
		Status int          `json:"status"`
		Detail string       `json:"detail"`
		Errors []fieldError `json:"errors"`
	}{title, status, detail, []fieldError{{message, location, value}}})
	w.Write(b)
}
