package registry_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/registry"
	"github.com/cardcrawl/cardcrawl/registry/registrytest"
	"github.com/cardcrawl/cardcrawl/store"
)

func TestSyncFullSweepSeveralPages(t *testing.T) {
	e := newEnv(t)
	for _, s := range seedServers(t) {
		if err := e.double.Publish(s, true); err != nil {
			t.Fatal(err)
		}
	}
	e.publishN(t, 246) // 250 versions: pages of 100, 100, 50
	var progress [][2]int
	res, err := e.sync(t, e.client(t, nil), func(o *registry.SyncOptions) {
		o.Progress = func(pages, entries int) { progress = append(progress, [2]int{pages, entries}) }
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][2]int{{1, 100}, {2, 200}, {3, 250}}, progress); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(registry.SyncResult{Source: e.srv.URL, Kind: "full", Pages: 3, Entries: 250, Complete: true,
		Watermark: e.clock.Now().Add(-5 * time.Minute).Format(time.RFC3339Nano)}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	reqs := e.double.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %q, want 3", reqs)
	}
	if reqs[0] != "/v0.1/servers?include_deleted=true&limit=100" {
		t.Errorf("first request %q", reqs[0])
	}
	// The cursor is name:version; its ':' and '/' must travel encoded.
	if want := "cursor=com.example.s00099%2Fserver%3A1.0.0"; !strings.Contains(reqs[1], want) {
		t.Errorf("second request %q lacks %q", reqs[1], want)
	}
	n, err := e.db.CountRegistryEntries(context.Background(), "")
	if err != nil || n != 250 {
		t.Errorf("stored %d entries (%v), want 250", n, err)
	}
	// The seed's two airtable versions: both were published as latest in
	// order, so 1.7.3 alone is latest, locally and as reported.
	got := rows(t, e.db)
	var air []row
	for _, r := range got {
		if strings.HasSuffix(r.Name, "/airtable-mcp-server") {
			air = append(air, r)
		}
	}
	want := []row{
		{"io.github.domdomegg/airtable-mcp-server", "1.7.2", "active", false, false},
		{"io.github.domdomegg/airtable-mcp-server", "1.7.3", "active", true, true},
	}
	if diff := cmp.Diff(want, air); diff != "" {
		t.Errorf("airtable rows (-want +got):\n%s", diff)
	}
}

func TestResyncDeltaLatestFlipAndDeleted(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 3)
	// Each sync runs well after the last change, so the watermark's safety
	// margin does not bring changes back a second time.
	e.clock.Advance(time.Hour)
	c := e.client(t, nil)
	first, err := e.sync(t, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	// A new version flips 1.0.0's isLatest without bumping its updatedAt,
	// so the delta cannot carry the flip; and another server is deleted.
	if err := e.double.Publish(genServer(0, "1.1.0"), true); err != nil {
		t.Fatal(err)
	}
	e.double.SetStatus("com.example.s00002/server", "1.0.0", "deleted", "spam")
	e.clock.Advance(time.Hour)
	before := len(e.double.Requests())
	res, err := e.sync(t, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := e.double.Requests()[before:]
	wantReq := "/v0.1/servers?include_deleted=true&limit=100&updated_since=" + url.QueryEscape(first.Watermark)
	if diff := cmp.Diff([]string{wantReq}, reqs); diff != "" {
		t.Errorf("delta requests (-want +got):\n%s", diff)
	}
	if res.Kind != "delta" || res.Entries != 2 || !res.Complete {
		t.Errorf("delta result = %+v", res)
	}
	want := []row{
		{"com.example.s00000/server", "1.0.0", "active", false, true}, // Registry still says latest; we know better
		{"com.example.s00000/server", "1.1.0", "active", true, true},
		{"com.example.s00001/server", "1.0.0", "active", true, true},
		{"com.example.s00002/server", "1.0.0", "deleted", true, true},
	}
	if diff := cmp.Diff(want, rows(t, e.db)); diff != "" {
		t.Errorf("rows (-want +got):\n%s", diff)
	}
	// Nothing changed since: one request, nothing stored.
	e.clock.Advance(time.Hour)
	before = len(e.double.Requests())
	res, err = e.sync(t, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(e.double.Requests()) - before; got != 1 || res.Entries != 0 {
		t.Errorf("no-change resync: %d requests, %d entries; want 1, 0", got, res.Entries)
	}
	// --full ignores the watermark.
	res, err = e.sync(t, c, func(o *registry.SyncOptions) { o.Full = true })
	if err != nil || res.Kind != "full" || res.Entries != 4 {
		t.Errorf("full resync = %+v, %v", res, err)
	}
}

func TestSyncResumesAfterServerError(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	fail := true
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if fail && strings.Contains(r.URL.RawQuery, "cursor=") {
			registrytest.Problem(w, http.StatusInternalServerError, "Internal Server Error", "database unavailable")
			return true
		}
		return false
	}
	c := e.client(t, nil)
	res, err := e.sync(t, c, nil)
	var se *registry.StatusError
	if !errors.As(err, &se) || se.Status != 500 || !strings.Contains(err.Error(), "database unavailable") {
		t.Fatalf("err = %v, want a 500 StatusError with the problem detail", err)
	}
	if res.Entries != 100 || res.Complete {
		t.Errorf("interrupted result = %+v", res)
	}
	st, err := e.db.RegistrySyncState(context.Background(), e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if st.Cursor != "com.example.s00099/server:1.0.0" || st.SweepKind != "full" || st.Watermark != "" || st.LastError == "" {
		t.Errorf("state after failure = %+v", st)
	}
	if got := len(e.sleeper.Waits()); got != 0 {
		t.Errorf("retried %d times, want none: a 500 stops the sweep, which resumes next time", got)
	}
	fail = false
	res, err = e.sync(t, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Entries != 150 || !res.Complete {
		t.Errorf("resumed result = %+v", res)
	}
	if n, _ := e.db.CountRegistryEntries(context.Background(), e.srv.URL); n != 250 {
		t.Errorf("stored %d, want 250", n)
	}
}

func TestSyncHonoursRetryAfter(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 2)
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "7")
			registrytest.Problem(w, http.StatusTooManyRequests, "Too Many Requests", "")
			return true
		}
		return false
	}
	var ua string
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua = r.UserAgent()
		e.double.ServeHTTP(w, r)
	})
	// Through the program's fetch client: it, not the Registry client, names
	// cardcrawl on every request.
	res, err := e.sync(t, fetchClient(t, e, "cardcrawl-test/1"), nil)
	if err != nil || res.Entries != 2 {
		t.Fatalf("sync = %+v, %v", res, err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second}, e.sleeper.Waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if ua != "cardcrawl-test/1" {
		t.Errorf("User-Agent = %q", ua)
	}
}

func TestClientPacesRequests(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	c := e.client(t, func(o *registry.ClientOptions) { o.RequestsPerSecond = 0 }) // the polite default
	if _, err := e.sync(t, c, nil); err != nil {
		t.Fatal(err)
	}
	// The test clock stands still, so every request after the first waits
	// a full interval: at most 2 per second.
	if diff := cmp.Diff([]time.Duration{500 * time.Millisecond, 500 * time.Millisecond}, e.sleeper.Waits()); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

func TestSyncRetryAfterTooLong(t *testing.T) {
	e := newEnv(t)
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Header().Set("Retry-After", "3600")
		registrytest.Problem(w, http.StatusServiceUnavailable, "Service Unavailable", "maintenance")
		return true
	}
	_, err := e.sync(t, e.client(t, func(o *registry.ClientOptions) { o.MaxRetryWait = time.Minute }), nil)
	if err == nil || !strings.Contains(err.Error(), "asked to wait 1h0m0s") {
		t.Errorf("err = %v", err)
	}
	if len(e.sleeper.Waits()) != 0 {
		t.Errorf("slept %v; should give up at once", e.sleeper.Waits())
	}
}

func TestSyncBadPages(t *testing.T) {
	const valid = `{"server":{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/ok","description":"d","version":"1.0.0"},"_meta":{}}`
	tests := []struct {
		name        string
		body        string
		wantErr     string // substring; "" for success
		wantEntries int
		wantCodes   []string
		wantMsgs    []string // substrings of the findings' messages, in order
	}{
		{name: "not json", body: `<html>oops</html>`, wantErr: "parse server list"},
		{name: "not the envelope", body: `{"items":[]}`, wantErr: "not a v0.1 server list envelope"},
		{name: "entry not an object", body: `{"servers":[1,"x",` + valid + `],"metadata":{"count":3}}`, wantEntries: 1,
			wantCodes: []string{"entry_not_object", "entry_not_object"}, wantMsgs: []string{"entry 0 is not", "entry 1 is not"}},
		{name: "server missing", body: `{"servers":[{"_meta":{}},` + valid + `],"metadata":{"count":2}}`, wantEntries: 1,
			wantCodes: []string{"server_not_object"}, wantMsgs: []string{"entry 0: server is missing"}},
		{name: "no version", body: `{"servers":[` + valid + `,{"server":{"name":"com.example/x"}}],"metadata":{"count":2}}`, wantEntries: 1,
			wantCodes: []string{"server_missing_key"}, wantMsgs: []string{`entry 1 ("com.example/x"): server.json has no version`}},
		{name: "no name", body: `{"servers":[{"server":{"version":"2.0.0"}}],"metadata":{"count":1}}`,
			wantCodes: []string{"server_missing_key"}, wantMsgs: []string{`entry 0: server.json (version "2.0.0") has no name`}},
		// A draft-era server.json is kept under its version_detail.version,
		// with a finding of its own (TestSyncStoresDraftEraServerJSON).
		{name: "draft-era version", body: `{"servers":[{"server":{"name":"com.example/draft","description":"d","version_detail":{"version":"1.0.2"}}}],"metadata":{"count":1}}`,
			wantEntries: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			// A previously stored entry must survive whatever comes next.
			e.publishN(t, 1)
			c := e.client(t, nil)
			if _, err := e.sync(t, c, nil); err != nil {
				t.Fatal(err)
			}
			e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(tt.body))
				return true
			}
			res, err := e.sync(t, c, func(o *registry.SyncOptions) { o.Full = true })
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if res.Entries != tt.wantEntries {
				t.Errorf("entries = %d, want %d", res.Entries, tt.wantEntries)
			}
			var codes []string
			for _, f := range res.Findings {
				codes = append(codes, f.Code)
			}
			if diff := cmp.Diff(tt.wantCodes, codes); diff != "" {
				t.Errorf("finding codes (-want +got):\n%s", diff)
			}
			for i, m := range tt.wantMsgs {
				if i >= len(res.Findings) || !strings.Contains(res.Findings[i].Message, m) {
					t.Errorf("finding %d does not say %q: %v", i, m, res.Findings)
				}
			}
			if n, _ := e.db.CountRegistryEntries(context.Background(), ""); n != 1+tt.wantEntries {
				t.Errorf("stored %d entries, want %d", n, 1+tt.wantEntries)
			}
		})
	}
}

func TestSyncRepeatingCursor(t *testing.T) {
	e := newEnv(t)
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		w.Write([]byte(`{"servers":[{"server":{"name":"com.example/loop","version":"1.0.0","description":"d"}}],"metadata":{"nextCursor":"com.example/loop:1.0.0","count":1}}`))
		return true
	}
	res, err := e.sync(t, e.client(t, nil), nil)
	if !errors.Is(err, registry.ErrCursorRepeat) {
		t.Fatalf("err = %v, want ErrCursorRepeat", err)
	}
	if res.Pages != 2 || len(e.double.Requests()) != 2 {
		t.Errorf("pages = %d, requests = %d; want 2, 2", res.Pages, len(e.double.Requests()))
	}
	st, _ := e.db.RegistrySyncState(context.Background(), e.srv.URL)
	if st.Cursor != "" || st.SweepKind != "" || !strings.Contains(st.LastError, "repeated") {
		t.Errorf("state = %+v; the looping sweep should be abandoned and the error kept", st)
	}
}

func TestSyncPageCap(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	res, err := e.sync(t, e.client(t, nil), func(o *registry.SyncOptions) { o.MaxPages = 2 })
	if !errors.Is(err, registry.ErrPageCap) {
		t.Fatalf("err = %v, want ErrPageCap", err)
	}
	if res.Entries != 200 {
		t.Errorf("entries = %d, want 200", res.Entries)
	}
}

func TestSyncStoresFindingsForOldSchemas(t *testing.T) {
	e := newEnv(t)
	old := `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-09-29/server.schema.json","name":"com.example/old","description":"d","version":"1.0.0"}`
	long := `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/long","description":"` + strings.Repeat("x", 101) + `","version":"1.0.0"}`
	none := `{"name":"com.example/none","description":"d","version":"1.0.0"}`
	for _, s := range []string{old, long, none} {
		if err := e.double.Publish([]byte(s), true); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.sync(t, e.client(t, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 3 || res.Invalid != 2 {
		t.Errorf("entries %d invalid %d, want 3 and 2", res.Entries, res.Invalid)
	}
	if diff := cmp.Diff([]string{"com.example/long@1.0.0", "com.example/none@1.0.0"}, res.InvalidNames); diff != "" {
		t.Errorf("invalid names (-want +got):\n%s", diff)
	}
	es, err := e.db.RegistryEntries(context.Background(), store.RegistryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]finding.List{}
	for _, en := range es {
		got[en.Name] = en.Findings
	}
	for name, code := range map[string]string{"com.example/old": "schema_version_deprecated", "com.example/long": "description_too_long", "com.example/none": "schema_field_required"} {
		if !slices.ContainsFunc(got[name], func(f finding.Finding) bool { return f.Code == code }) {
			t.Errorf("%s findings %v lack %s", name, got[name], code)
		}
	}
}

func TestVersionsEncodesSlash(t *testing.T) {
	e := newEnv(t)
	for _, s := range seedServers(t) {
		if err := e.double.Publish(s, true); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := e.client(t, nil).Versions(context.Background(), "io.github.domdomegg/airtable-mcp-server")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Entries) != 2 {
		t.Errorf("versions = %d, want 2", len(resp.Entries))
	}
	if got := e.double.Requests()[0]; got != "/v0.1/servers/io.github.domdomegg%2Fairtable-mcp-server/versions?include_deleted=true" {
		t.Errorf("request = %q", got)
	}
	_, err = e.client(t, nil).Versions(context.Background(), "io.github.domdomegg/nope")
	var se *registry.StatusError
	if !errors.As(err, &se) || se.Status != 404 || se.Detail != "Server not found" {
		t.Errorf("missing server: err = %v", err)
	}
}

func TestImportDump(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		want    int
		wantErr string
	}{
		{name: "array of server.json", body: readFixture(t, "seed.current.json"), want: 4},
		{name: "list envelope", body: []byte(`{"servers":[{"server":{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/a","description":"d","version":"1.0.0"},"_meta":{"io.modelcontextprotocol.registry/official":{"status":"deprecated","isLatest":true}}}],"metadata":{"count":1}}`), want: 1},
		{name: "not json", body: []byte("name,version\n"), wantErr: "parse dump"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			res, err := registry.ImportDump(context.Background(), registry.ImportOptions{Store: e.db, Validator: validator(t), BatchSize: 3}, tt.body)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			n, _ := e.db.CountRegistryEntries(context.Background(), registry.DefaultBaseURL)
			if res.Entries != tt.want || n != tt.want {
				t.Errorf("imported %d, stored %d; want %d", res.Entries, n, tt.want)
			}
			if st, _ := e.db.RegistrySyncState(context.Background(), registry.DefaultBaseURL); st.Watermark != "" {
				t.Errorf("a dump must not set a watermark: %+v", st)
			}
		})
	}
}

func TestSyncInterruptedByCancelResumes(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if n != 3 {
			return false
		}
		// The user presses Ctrl-C while page 3 is in flight: it never
		// arrives, because the client gives up on it.
		cancel()
		<-r.Context().Done()
		return true
	}
	c := e.client(t, nil)
	_, err := registry.Sync(ctx, registry.SyncOptions{Client: c, Store: e.db, Validator: validator(t), Now: e.clock.Now})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	stored, _ := e.db.CountRegistryEntries(context.Background(), "")
	st, _ := e.db.RegistrySyncState(context.Background(), e.srv.URL)
	// Page 2 may or may not have been written before the cancel landed;
	// either way the cursor must sit right after what is stored.
	if (stored != 100 && stored != 200) || st.Cursor != fmt.Sprintf("com.example.s%05d/server:1.0.0", stored-1) {
		t.Fatalf("after cancel: %d stored, cursor %q; want the cursor right after the stored pages", stored, st.Cursor)
	}
	e.double.Hook = nil
	res, err := e.sync(t, c, nil)
	if err != nil || !res.Resumed || res.Entries != 250-stored {
		t.Fatalf("resume = %+v, %v", res, err)
	}
	if n, _ := e.db.CountRegistryEntries(context.Background(), ""); n != 250 {
		t.Errorf("stored %d after resume, want 250", n)
	}
}

// failingStore fails the failOn-th WriteRegistry, as a full disk would.
type failingStore struct {
	*store.DB
	failOn, writes int
}

func (s *failingStore) WriteRegistry(ctx context.Context, w store.RegistryWrite) error {
	s.writes++
	if s.writes == s.failOn {
		return errors.New("disk full")
	}
	return s.DB.WriteRegistry(ctx, w)
}

func TestSyncRecordsStoreFailure(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	c := e.client(t, nil)
	_, err := registry.Sync(context.Background(), registry.SyncOptions{Client: c, Store: &failingStore{DB: e.db, failOn: 2},
		Validator: validator(t), Now: e.clock.Now})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want the store's error", err)
	}
	st, err := e.db.RegistrySyncState(context.Background(), e.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	// The error is recorded, and the cursor stays after the page that was
	// stored, not after the one that was lost.
	if !strings.Contains(st.LastError, "disk full") || st.Cursor != "com.example.s00099/server:1.0.0" || st.Pages != 1 || st.SweepKind != "full" {
		t.Errorf("state after a failed write = %+v", st)
	}
	res, err := e.sync(t, c, nil)
	if err != nil || !res.Resumed || res.Entries != 150 {
		t.Errorf("resume = %+v, %v", res, err)
	}
}

// TestSyncDropsRejectedCursor: a registry that answers 4xx to the stored
// cursor (it expired, or its format changed) must not leave the sync stuck
// resending it forever.
func TestSyncDropsRejectedCursor(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	reject := true
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if reject && strings.Contains(r.URL.RawQuery, "cursor=") {
			registrytest.Problem(w, http.StatusBadRequest, "Bad Request", "invalid cursor")
			return true
		}
		return false
	}
	c := e.client(t, nil)
	_, err := e.sync(t, c, nil)
	if err == nil || !strings.Contains(err.Error(), "invalid cursor") || !strings.Contains(err.Error(), "the next sync starts over") {
		t.Fatalf("err = %v, want the 400 and that the next sync starts over", err)
	}
	if got := len(e.sleeper.Waits()); got != 0 {
		t.Errorf("a 400 was retried %d times", got)
	}
	st, _ := e.db.RegistrySyncState(context.Background(), e.srv.URL)
	if st.Cursor != "" || st.SweepKind != "" || !strings.Contains(st.LastError, "invalid cursor") {
		t.Errorf("state = %+v; want the cursor dropped and the error kept", st)
	}
	reject = false
	res, err := e.sync(t, c, nil)
	if err != nil || res.Resumed || res.Kind != "full" || res.Entries != 250 || !res.Complete {
		t.Errorf("next sync = %+v, %v; want a fresh complete full sweep", res, err)
	}
}

// TestSyncFullNeverResumes: --full starts a fresh sweep even when an
// unfinished full sweep is stored.
func TestSyncFullNeverResumes(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	fail := true
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if fail && strings.Contains(r.URL.RawQuery, "cursor=") {
			registrytest.Problem(w, http.StatusServiceUnavailable, "Service Unavailable", "busy")
			return true
		}
		return false
	}
	c := e.client(t, nil)
	if _, err := e.sync(t, c, nil); err == nil || !strings.Contains(err.Error(), "the next sync resumes") {
		t.Fatalf("err = %v, want a transient failure that resumes", err)
	}
	fail = false
	before := len(e.double.Requests())
	res, err := e.sync(t, c, func(o *registry.SyncOptions) { o.Full = true })
	if err != nil || res.Resumed || res.Entries != 250 {
		t.Errorf("full sync = %+v, %v; want a fresh sweep of 250", res, err)
	}
	if got := e.double.Requests()[before]; strings.Contains(got, "cursor=") {
		t.Errorf("--full resent the stored cursor: %q", got)
	}
}

// TestSyncPermanentFailureSaysSo: a 404 on the first page is not something
// the next sync can resume from.
func TestSyncPermanentFailureSaysSo(t *testing.T) {
	e := newEnv(t)
	e.double.Hook = func(w http.ResponseWriter, r *http.Request, n int) bool {
		http.NotFound(w, r)
		return true
	}
	_, err := e.sync(t, e.client(t, nil), nil)
	if err == nil || strings.Contains(err.Error(), "resumes") || !strings.Contains(err.Error(), "not a temporary failure (http_404)") {
		t.Errorf("err = %v", err)
	}
}

func TestSyncNamesAtMostTenInvalidEntries(t *testing.T) {
	e := newEnv(t)
	for i := range 12 {
		if err := e.double.Publish(json.RawMessage(fmt.Sprintf(`{"name":"com.example/n%02d","description":"d","version":"1.0.0"}`, i)), true); err != nil {
			t.Fatal(err)
		}
	}
	res, err := e.sync(t, e.client(t, nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Invalid != 12 || len(res.InvalidNames) != registry.MaxInvalidNames || res.InvalidNames[9] != "com.example/n09@1.0.0" {
		t.Errorf("invalid %d, names %q; want 12 and the first 10", res.Invalid, res.InvalidNames)
	}
}

// refusingAfter passes the first n requests to next, then dials a closed
// loopback port for every later one: a registry that went away mid-sweep.
type refusingAfter struct {
	next   http.RoundTripper
	n      int
	closed string
	seen   int
}

func (r *refusingAfter) RoundTrip(req *http.Request) (*http.Response, error) {
	r.seen++
	if r.seen <= r.n {
		return r.next.RoundTrip(req)
	}
	conn, err := (&net.Dialer{}).DialContext(req.Context(), "tcp", r.closed)
	if err == nil {
		conn.Close()
		return nil, errors.New("the closed port accepted a connection")
	}
	return nil, err
}

// TestSyncRefusedMidSweepResumes: a refused connection is temporary, as the
// real Registry showed when it was briefly unreachable mid-sweep; the
// message says so and the next sync resumes from the page that failed.
func TestSyncRefusedMidSweepResumes(t *testing.T) {
	e := newEnv(t)
	e.publishN(t, 250)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	c := e.client(t, func(o *registry.ClientOptions) {
		o.HTTPClient = &http.Client{Transport: &refusingAfter{next: e.srv.Client().Transport, n: 1, closed: closed}}
	})
	res, err := e.sync(t, c, nil)
	want := "connection refused; a temporary failure (connect): progress is kept and the next sync resumes from page 2"
	if err == nil || !strings.Contains(err.Error(), want) || res.Entries != 100 {
		t.Fatalf("sync = %d entries, %v; want 100 and %q", res.Entries, err, want)
	}
	res, err = e.sync(t, e.client(t, nil), nil)
	if err != nil || !res.Resumed || res.Entries != 150 || !res.Complete {
		t.Errorf("next sync = %+v, %v; want it to resume and store the other 150", res, err)
	}
}

// TestSyncLatestAgreesWithRegistry: the double reports isLatest as the real
// Registry did for each history of issue 12, and the latest cardcrawl
// elects agrees, both after a delta sync (where the flag of a version that
// stopped being latest is not sent again, and so lags) and after --full.
func TestSyncLatestAgreesWithRegistry(t *testing.T) {
	type pub struct {
		version string
		latest  bool // what the real Registry answered
	}
	histories := []struct {
		name   string
		first  pub
		then   pub
		delete bool // delete the first version before publishing the second
		want   string
	}{
		{"com.example/leading-v", pub{"0.9.0", true}, pub{"v1.0.0", true}, false, "v1.0.0"},
		{"com.example/v-higher", pub{"v2.0.0", true}, pub{"1.5.0", false}, false, "v2.0.0"},
		{"com.example/zero-pre", pub{"1.0.0-01", true}, pub{"0.5.0", true}, false, "0.5.0"},
		{"com.example/underscore", pub{"1.0.0-rc_1", true}, pub{"0.5.0", true}, false, "0.5.0"},
		{"com.example/empty-build", pub{"1.0.0+", true}, pub{"0.5.0", true}, false, "0.5.0"},
		{"com.example/empty-ident", pub{"1.0.0-a..b", true}, pub{"0.5.0", true}, false, "0.5.0"},
		{"com.example/all-deleted", pub{"0.0.1-seed", true}, pub{"0.0.0", false}, true, "0.0.1-seed"},
	}
	doc := func(name, version string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":%q,"description":"d","version":%q}`, name, version))
	}
	e := newEnv(t)
	for _, h := range histories {
		if err := e.double.Publish(doc(h.name, h.first.version), h.first.latest); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(time.Hour) // past the delta's 5-minute overlap
	c := e.client(t, nil)
	if _, err := e.sync(t, c, nil); err != nil {
		t.Fatal(err)
	}
	for _, h := range histories {
		e.clock.Advance(time.Hour)
		if h.delete {
			e.double.SetStatus(h.name, h.first.version, "deleted", "removed")
			e.clock.Advance(time.Hour)
		}
		if err := e.double.Publish(doc(h.name, h.then.version), h.then.latest); err != nil {
			t.Fatal(err)
		}
	}
	e.clock.Advance(time.Hour)
	check := func(when string, lagging bool) {
		t.Helper()
		latest, reported := map[string]string{}, map[string][]string{}
		for _, r := range rows(t, e.db) {
			if r.Latest {
				latest[r.Name] = r.Version
			}
			if r.Reported {
				reported[r.Name] = append(reported[r.Name], r.Version)
			}
		}
		for _, h := range histories {
			if latest[h.name] != h.want {
				t.Errorf("%s: %s elected %q, the Registry %q", when, h.name, latest[h.name], h.want)
			}
			// The flags as received: current after --full; after a delta,
			// an old version whose flag the Registry cleared still says true.
			stale := lagging && h.first.latest && h.then.latest
			if want := 1 + btoi(stale); len(reported[h.name]) != want || !slices.Contains(reported[h.name], h.want) {
				t.Errorf("%s: %s reportedLatest on %q, want %q%s", when, h.name, reported[h.name], h.want, map[bool]string{true: " and the lagging first version"}[stale])
			}
		}
	}
	if res, err := e.sync(t, c, nil); err != nil || res.Kind != "delta" {
		t.Fatalf("delta sync = %+v, %v", res, err)
	}
	check("after a delta sync", true)
	if _, err := e.sync(t, c, func(o *registry.SyncOptions) { o.Full = true }); err != nil {
		t.Fatal(err)
	}
	check("after --full", false)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestSyncStoresDraftEraServerJSON: server.json as repositories committed it
// before the 2025-07-09 schema was published (the version under
// version_detail) is stored under that version with a precise finding,
// beside what validation says, instead of being skipped.
func TestSyncStoresDraftEraServerJSON(t *testing.T) {
	e := newEnv(t)
	draft := json.RawMessage(`{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-07-09/server.schema.json","name":"io.github.example/weather","description":"MCP server for weather data access","status":"active","version_detail":{"version":"1.0.2"},"packages":[{"registry_type":"npm","identifier":"weather-mcp-server","version":"1.0.2"}]}`)
	if err := e.double.Load(draft, registrytest.Official{Status: "active", PublishedAt: e.clock.Now(), StatusChangedAt: e.clock.Now(), UpdatedAt: e.clock.Now(), IsLatest: true}); err != nil {
		t.Fatal(err)
	}
	res, err := e.sync(t, e.client(t, nil), nil)
	if err != nil || res.Entries != 1 || len(res.Findings) != 0 || res.Invalid != 1 {
		t.Fatalf("sync = %+v, %v; want the entry stored (and counted invalid), nothing skipped", res, err)
	}
	es, err := e.db.RegistryEntries(context.Background(), store.RegistryFilter{})
	if err != nil || len(es) != 1 {
		t.Fatalf("entries %v, %v", es, err)
	}
	if es[0].Name != "io.github.example/weather" || es[0].Version != "1.0.2" || !es[0].IsLatest {
		t.Errorf("stored %s %s latest=%v", es[0].Name, es[0].Version, es[0].IsLatest)
	}
	fl := es[0].Findings
	if len(fl) == 0 || fl[0].Code != "version_in_version_detail" || fl[0].Path != "/servers/0/server/version_detail/version" ||
		!strings.Contains(fl[0].Message, `"1.0.2" is in version_detail.version`) {
		t.Errorf("first finding = %+v, want version_in_version_detail at the field", fl)
	}
}

// A dump or page that skips more entries than a result keeps findings for
// keeps the first finding.MaxPerDocument and counts the rest.
func TestImportDumpBoundsSkipped(t *testing.T) {
	e := newEnv(t)
	good := `{"$schema":"https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json","name":"com.example/a","description":"d","version":"1.0.0"}`
	body := "[" + good + strings.Repeat(",1", finding.MaxPerDocument+50) + "]"
	res, err := registry.ImportDump(context.Background(), registry.ImportOptions{Store: e.db, Validator: validator(t)}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if res.Entries != 1 || len(res.Findings) != finding.MaxPerDocument || res.FindingsMore != 50 {
		t.Errorf("%d entries, %d findings and %d more; want 1, %d and 50", res.Entries, len(res.Findings), res.FindingsMore,
			finding.MaxPerDocument)
	}
}
