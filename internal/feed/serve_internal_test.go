package feed

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

func emptyStore(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "empty.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// deadlineRecorder is a ResponseWriter that keeps the write deadlines set
// on it, as a server connection would apply them.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (d *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	d.deadlines = append(d.deadlines, t)
	return nil
}

// TestStallWriterMovesTheDeadline: every write of a feed moves the write
// deadline to StallTimeout from then, so a large feed read steadily is never
// cut off by a fixed total, and a client that stops reading is.
func TestStallWriterMovesTheDeadline(t *testing.T) {
	rec := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	sw := &stallWriter{w: rec, rc: http.NewResponseController(rec), stall: time.Minute}
	before := time.Now()
	for range 3 {
		if _, err := sw.Write([]byte("row\n")); err != nil {
			t.Fatal(err)
		}
	}
	after := time.Now()
	if len(rec.deadlines) != 3 {
		t.Fatalf("%d deadlines set for 3 writes", len(rec.deadlines))
	}
	for i, d := range rec.deadlines {
		if d.Before(before.Add(time.Minute)) || d.After(after.Add(time.Minute)) {
			t.Errorf("deadline %d is %v, want a minute after the write", i, d)
		}
		if i > 0 && d.Before(rec.deadlines[i-1]) {
			t.Errorf("deadline %d moved back", i)
		}
	}
	if rec.Body.String() != "row\nrow\nrow\n" {
		t.Errorf("body %q", rec.Body.String())
	}
}

// TestPageCSPAllowsOnlyItsOwnStyle: the page's policy allows no script and
// no loads; its one style element is allowed by hash, and that hash is the
// hash of what the page actually carries.
func TestPageCSPAllowsOnlyItsOwnStyle(t *testing.T) {
	h := Handler(ServerOptions{Store: emptyStore(t)})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	csp := rec.Header().Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "form-action 'self'", "base-uri 'none'", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "script-src") {
		t.Errorf("CSP %q allows scripts or inline code", csp)
	}
	body := rec.Body.String()
	m := regexp.MustCompile(`(?s)<style>(.*?)</style>`).FindAllStringSubmatch(body, -1)
	if len(m) != 1 {
		t.Fatalf("%d style elements, want 1:\n%s", len(m), body)
	}
	sum := sha256.Sum256([]byte(m[0][1]))
	if want := "style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(csp, want) {
		t.Errorf("CSP %q does not allow the page's style (%s)", csp, want)
	}
	if strings.Contains(body, "<script") || regexp.MustCompile(`\s(style|on[a-z]+)=`).MatchString(body) {
		t.Errorf("page has inline script or style attributes:\n%s", body)
	}
}

// TestEveryAnswerIsNosniff: feeds, API answers, errors and the page all say
// their type is final.
func TestEveryAnswerIsNosniff(t *testing.T) {
	h := Handler(ServerOptions{Store: emptyStore(t)})
	for _, path := range []string{"/", "/healthz", "/feed.jsonl", "/feed.csv", "/feed.json", "/.well-known/ai-catalog.json",
		"/v0.1/servers", "/v0.1/servers?limit=0", "/v0.1/servers/x/versions/latest", "/v0.1/servers/x/versions", "/no-such-page"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s (%d): X-Content-Type-Options %q", path, rec.Code, got)
		}
		if csp := rec.Header().Get("Content-Security-Policy"); (path == "/") != (csp != "") {
			t.Errorf("%s: Content-Security-Policy %q; want one on the HTML page only", path, csp)
		}
	}
}

// TestAnswersKeepOnlyWholeAnswers: an answer larger than maxAnswer reaches
// its client whole and is not kept; a read cut short by its client is not
// kept either; a whole one is kept.
func TestAnswersKeepOnlyWholeAnswers(t *testing.T) {
	c := newAnswers(maxAnswersMemory)
	runs := 0
	big := bytes.Repeat([]byte("x"), maxAnswer+10)
	h := func(w http.ResponseWriter, r *http.Request) {
		runs++
		w.Header().Set("Content-Type", "application/json")
		if r.Context().Err() != nil {
			return // as s.fail does on a cancelled read
		}
		if r.URL.Path == "/big" {
			_, _ = w.Write(big[:100])
			_, _ = w.Write(big[100:])
			return
		}
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
	serve := func(ctx context.Context, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		c.serve(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, path, nil), path, "v1", h)
		return rec
	}
	for i := range 2 {
		if rec := serve(context.Background(), "/big"); !bytes.Equal(rec.Body.Bytes(), big) || rec.Code != http.StatusOK {
			t.Fatalf("big answer %d: %d, %d bytes, want 200 and %d", i, rec.Code, rec.Body.Len(), len(big))
		}
	}
	if runs != 2 {
		t.Errorf("a big answer asked twice ran the handler %d times, want 2", runs)
	}

	runs = 0
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	serve(cancelled, "/small")
	if rec := serve(context.Background(), "/small"); rec.Body.String() != `{"ok":true}` {
		t.Errorf("after a cancelled read: %q", rec.Body.String())
	}
	serve(context.Background(), "/small")
	if runs != 2 {
		t.Errorf("cancelled, then asked twice: %d handler runs, want 2", runs)
	}
}

// serve is serveKept for a handler kept per version only, as the tests of
// the kept answers drive it.
func (c *answers) serve(w http.ResponseWriter, r *http.Request, key, version string, h http.HandlerFunc) {
	c.serveKept(w, r, key, version, false, unchecked(h))
}
