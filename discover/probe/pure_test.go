package probe

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadSSE(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		lim     sseLimits
		want    []sseEvent
		wantErr error
	}{
		{"priming then message", "event: prime\nid: a_0\ndata: \n\nevent: message\nid: a_1\ndata: {\"x\":1}\n\n",
			sseLimits{MaxBytes: 1 << 10}, []sseEvent{{Event: "prime", ID: "a_0"}, {Event: "message", ID: "a_1", Data: `{"x":1}`}}, io.EOF},
		{"mixed line endings as mcp-go writes them", "event: endpoint\ndata: https://x.example/m?s=1\r\n\r\n",
			sseLimits{MaxBytes: 1 << 10}, []sseEvent{{Event: "endpoint", Data: "https://x.example/m?s=1"}}, io.EOF},
		{"lone CR endings, comments, joined data", ": hi\rdata: a\rdata:b\r\r",
			sseLimits{MaxBytes: 1 << 10}, []sseEvent{{Data: "a\nb"}}, io.EOF},
		{"no trailing blank line dispatches nothing", "data: a\n", sseLimits{MaxBytes: 1 << 10}, nil, io.EOF},
		{"byte cap", strings.Repeat(": keep-alive\n", 100), sseLimits{MaxBytes: 64}, nil, errBodySizeLimit},
		{"event cap", strings.Repeat("data: x\n\n", 10), sseLimits{MaxBytes: 1 << 10, MaxEvents: 3},
			[]sseEvent{{Data: "x"}, {Data: "x"}, {Data: "x"}}, errTooManyEvents},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []sseEvent
			err := readSSE(strings.NewReader(tc.in), tc.lim, func(ev sseEvent) bool { got = append(got, ev); return true })
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseChallenges(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want []challenge
	}{
		{[]string{`Bearer resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource", scope="files:read"`},
			[]challenge{{"bearer", map[string]string{"resource_metadata": "https://mcp.example.com/.well-known/oauth-protected-resource", "scope": "files:read"}}}},
		{[]string{`Basic YWxhZGRpbjpvcGVu==, Bearer error="insufficient_scope", scope="a b", error_description="needs \"a\", b"`},
			[]challenge{{"basic", map[string]string{}}, {"bearer", map[string]string{"error": "insufficient_scope", "scope": "a b", "error_description": `needs "a", b`}}}},
		{[]string{`Basic realm="x"`, `Bearer`}, []challenge{{"basic", map[string]string{"realm": "x"}}, {"bearer", map[string]string{}}}},
		{[]string{`Bearer realm=unquoted , scope = "s"`}, []challenge{{"bearer", map[string]string{"realm": "unquoted", "scope": "s"}}}},
		// Malformed input yields what could be read, and never loops.
		{[]string{`"garbage`, ``}, []challenge{{"garbage", map[string]string{}}}},
		{[]string{`=,=`}, nil},
	} {
		if diff := cmp.Diff(tc.want, parseChallenges(tc.in)); diff != "" {
			t.Errorf("parseChallenges(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestMetadataURLs(t *testing.T) {
	if diff := cmp.Diff([]string{"https://a.example/.well-known/oauth-protected-resource/public/mcp", "https://a.example/.well-known/oauth-protected-resource"},
		wellKnownPRM("https://a.example/public/mcp")); diff != "" {
		t.Errorf("PRM with path (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"https://a.example/.well-known/oauth-protected-resource"}, wellKnownPRM("https://a.example/")); diff != "" {
		t.Errorf("PRM at root (-want +got):\n%s", diff)
	}
	want := []metaURL{
		{"https://as.example/.well-known/oauth-authorization-server/tenant1", "oauth"},
		{"https://as.example/.well-known/openid-configuration/tenant1", "openid"},
		{"https://as.example/tenant1/.well-known/openid-configuration", "openid"},
	}
	if diff := cmp.Diff(want, authServerMetadataURLs("https://as.example/tenant1"), cmp.AllowUnexported(metaURL{})); diff != "" {
		t.Errorf("issuer with path (-want +got):\n%s", diff)
	}
	want = []metaURL{{"https://as.example/.well-known/oauth-authorization-server", "oauth"}, {"https://as.example/.well-known/openid-configuration", "openid"}}
	if diff := cmp.Diff(want, authServerMetadataURLs("https://as.example"), cmp.AllowUnexported(metaURL{})); diff != "" {
		t.Errorf("issuer without path (-want +got):\n%s", diff)
	}
}

func TestDecide(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	base := RemoteFacts{Type: "streamable-http", URL: "https://mcp.example.com/mcp", Mode: ModeAuto, Now: now}
	with := func(f func(*RemoteFacts)) RemoteFacts { r := base; f(&r); return r }
	for _, tc := range []struct {
		name string
		in   RemoteFacts
		want Decision
	}{
		{"never probed", base, Decision{true, ReasonWarranted}},
		{"sse", with(func(f *RemoteFacts) { f.Type = "sse" }), Decision{true, ReasonWarranted}},
		{"disabled", with(func(f *RemoteFacts) { f.Mode = ModeNever }), Decision{false, ReasonProbeDisabled}},
		{"stdio", with(func(f *RemoteFacts) { f.Type = "stdio" }), Decision{false, ReasonUnsupportedTransport}},
		{"placeholder", with(func(f *RemoteFacts) { f.URL = "https://{tenant}.example.com/mcp" }), Decision{false, ReasonPlaceholder}},
		{"encoded placeholder", with(func(f *RemoteFacts) { f.URL = "https://mcp.example.com/%7Bid%7D" }), Decision{false, ReasonPlaceholder}},
		{"plain http", with(func(f *RemoteFacts) { f.URL = "http://mcp.example.com/mcp" }), Decision{false, ReasonPlainHTTP}},
		{"ftp", with(func(f *RemoteFacts) { f.URL = "ftp://mcp.example.com/mcp" }), Decision{false, ReasonInvalidURL}},
		{"userinfo", with(func(f *RemoteFacts) { f.URL = "https://u:p@mcp.example.com/mcp" }), Decision{false, ReasonUserinfo}},
		{"loopback literal", with(func(f *RemoteFacts) { f.URL = "https://127.0.0.1/mcp" }), Decision{false, ReasonBlockedAddress}},
		{"metadata literal", with(func(f *RemoteFacts) { f.URL = "https://169.254.169.254/" }), Decision{false, ReasonBlockedAddress}},
		{"ssh port", with(func(f *RemoteFacts) { f.URL = "https://mcp.example.com:22/mcp" }), Decision{false, ReasonBlockedPort}},
		{"no host", with(func(f *RemoteFacts) { f.URL = "https:///mcp" }), Decision{false, ReasonInvalidURL}},
		{"fresh", with(func(f *RemoteFacts) { f.LastProbedAt = now.Add(-time.Hour) }), Decision{false, ReasonFresh}},
		{"forced though fresh", with(func(f *RemoteFacts) { f.LastProbedAt, f.Mode = now.Add(-time.Hour), ModeAlways }), Decision{true, ReasonForced}},
		{"stale", with(func(f *RemoteFacts) { f.LastProbedAt = now.Add(-25 * time.Hour) }), Decision{true, ReasonWarranted}},
		{"card changed", with(func(f *RemoteFacts) { f.LastProbedAt, f.CardChangedSince = now.Add(-time.Hour), true }), Decision{true, ReasonWarranted}},
		{"custom max age", with(func(f *RemoteFacts) { f.LastProbedAt, f.MaxAge = now.Add(-2*time.Hour), time.Hour }), Decision{true, ReasonWarranted}},
	} {
		if diff := cmp.Diff(tc.want, Decide(tc.in)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestCompareCard(t *testing.T) {
	live := Result{ServerName: "weather", ServerVersion: "1.2.0", ProtocolVersion: "2025-06-18", Transport: TransportStreamable}
	older := live
	older.ProtocolVersion = "2025-03-26"
	modern := Result{ProtocolVersion: ModernProtocolVersion, Era: EraModern, Transport: TransportStreamable,
		Discover: &DiscoverInfo{SupportedVersions: []string{ModernProtocolVersion, "2025-11-25"}}}
	for _, tc := range []struct {
		name                    string
		r                       Result
		cname, cver, ctransport string
		cversions               []string
		want                    []Mismatch
	}{
		{"all agree", live, "weather", "1.2.0", "streamable-http", []string{"2025-06-18", "2025-11-25"}, nil},
		{"all differ", live, "io.example/weather", "1.3.0", "sse", []string{"2025-11-25"}, []Mismatch{
			{"name", "io.example/weather", "weather"}, {"version", "1.3.0", "1.2.0"}, {"transport", "sse", "streamable-http"}}},
		{"card silent", live, "", "", "", nil, nil},
		{"probe learned nothing", Result{Outcome: OutcomeTimeout}, "x", "1", "sse", []string{"2025-06-18"}, nil},
		// initialize: the server agreed to the version we offered, which
		// says nothing about the newer ones the card lists.
		{"initialize: offered version agreed, card lists only newer", live, "", "", "", []string{"2025-11-25", ModernProtocolVersion}, nil},
		{"initialize: server chose an older version the card omits", older, "", "", "", []string{"2025-06-18", "2025-11-25"},
			[]Mismatch{{"protocolVersion", "2025-06-18,2025-11-25", "2025-03-26"}}},
		{"initialize: server chose an older version the card lists", older, "", "", "", []string{"2025-03-26", "2025-06-18"}, nil},
		// server/discover: the live list is known, so compare lists.
		{"discover: card lists a version the server does not support", modern, "", "", "", []string{"2025-06-18", "2025-11-25", ModernProtocolVersion},
			[]Mismatch{{"protocolVersion", "2025-06-18", ModernProtocolVersion + ",2025-11-25"}}},
		{"discover: card lists a subset", modern, "", "", "", []string{ModernProtocolVersion}, nil},
		{"discover: card silent", modern, "", "", "", nil, nil},
	} {
		if diff := cmp.Diff(tc.want, CompareCard(tc.r, tc.cname, tc.cver, tc.ctransport, tc.cversions)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestResultJSONFieldNames(t *testing.T) {
	n := 1
	b := mustJSON(Result{URL: "u", Outcome: OutcomeOK, ToolCount: &n, Evidence: []Exchange{{Step: "initialize"}}})
	for _, k := range []string{`"url":"u"`, `"outcome":"ok"`, `"toolCount":1`, `"evidence":[{"step":"initialize"`, `"roundTrips":0`, `"startedAt":`} {
		mustContain(t, "json", string(b), k)
	}
}
