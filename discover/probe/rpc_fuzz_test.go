package probe

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rpcSeeds are JSON-RPC bodies: the 2026-07-28 spec's own server/discover
// examples (testdata/README.md), answers shaped as go-sdk and mcp-go send
// them, and hostile ones.
func rpcSeeds(t testing.TB) [][]byte {
	t.Helper()
	resp, err := os.ReadFile(filepath.Join("testdata", "discover-result-response.json"))
	if err != nil {
		t.Fatal(err)
	}
	result, err := os.ReadFile(filepath.Join("testdata", "server-capabilities-discovery.json"))
	if err != nil {
		t.Fatal(err)
	}
	out := [][]byte{resp, bytes.Replace(resp, []byte(`"discover-1"`), []byte(`1`), 1),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":` + string(result) + `}`)}
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"x","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}`,
		`[{"jsonrpc":"2.0","method":"notifications/message","params":{}},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":null}}]`,
		`{"jsonrpc":"2.0","id":"1","result":{}}`, `{"jsonrpc":"2.0","id":1.0,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","result":{}}`, `{"id":1,"error":null,"result":null}`,
		`{"id":1,"error":{"code":1e400}}`, `{"id":1,"error":{"code":"x","data":"y"}}`, `{"id":1,"error":{"data":{"supported":[1,"9999-99-99"]}}}`,
		`{"id":1,"result":{}}trailing`, `[]`, `[1,"x",null]`, ` `, `null`, "{\"id\":1,\"result\":\"\xff<>&\"}",
	} {
		out = append(out, []byte(s))
	}
	return out
}

// FuzzFindResponse checks the reader of JSON bodies and of non-2xx error
// bodies: it never returns both a message and an error, a message it
// returns is our answer (no method, our id, a result or an error), the
// answer re-encoded reads back the same, and the helpers that look inside
// it (supported versions, cursor, capabilities) cope with anything.
func FuzzFindResponse(f *testing.F) {
	for _, s := range rpcSeeds(f) {
		f.Add(s, uint16(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, id16 uint16) {
		id := int(id16)
		m, err := findResponse(body, id)
		if m != nil && err != nil {
			t.Fatalf("both a message and an error: %+v, %v", m, err)
		}
		if err == nil && !json.Valid(bytes.TrimSpace(body)) {
			t.Fatalf("no error for a body that is not JSON")
		}
		if m != nil {
			if m.Method != "" || !m.hasID(id) || (m.Result == nil && m.Error == nil) {
				t.Fatalf("returned a message that is not our answer: %+v", m)
			}
			again, err := findResponse(encodeRPC(t, m), id)
			if err != nil || again == nil {
				t.Fatalf("re-encoded answer does not read back: %v", err)
			}
			if diff := cmp.Diff(m, again, sameRawJSON); diff != "" {
				t.Fatalf("answer changed on a round trip (-first +second):\n%s", diff)
			}
			lookInside(m)
		}
		if e := parseErrorBody(body); e != nil {
			if e.Error == nil {
				t.Fatalf("error body without an error: %+v", e)
			}
			lookInside(e)
		}
	})
}

// lookInside runs what the probe reads from an answer; only a panic fails.
func lookInside(m *rpcMessage) {
	_ = m.Error.supported()
	_ = m.Error.isModern()
	var r struct {
		NextCursor   json.RawMessage `json:"nextCursor"`
		Capabilities json.RawMessage `json:"capabilities"`
	}
	if json.Unmarshal(m.Result, &r) == nil {
		_, _ = parseCursor(r.NextCursor, true)
		_, _ = parseCursor(r.NextCursor, false)
		_ = hasCapability(r.Capabilities, "tools")
	}
	_ = compactJSON(m.Result)
}

// encodeRPC writes a message back without HTML escaping, which would
// change the raw members' bytes.
func encodeRPC(t *testing.T, m *rpcMessage) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// sameRawJSON compares raw JSON ignoring insignificant spaces.
var sameRawJSON = cmp.Comparer(func(a, b json.RawMessage) bool {
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
})
