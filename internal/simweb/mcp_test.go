package simweb

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strings"
	"testing"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"simweb-test","version":"0.1"}}}`

// rpcResponse is the part of a JSON-RPC response the tests look at.
type rpcResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		ProtocolVersion string `json:"protocolVersion"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// postInitialize sends the probe's first request and decodes the answer,
// whether it came as application/json or as an SSE stream.
func postInitialize(t *testing.T, c *http.Client, url string) (*http.Response, *rpcResponse) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp, nil
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var data []byte
	switch mt {
	case "application/json":
		data, err = io.ReadAll(resp.Body)
	case "text/event-stream":
		data, err = firstSSEData(resp.Body)
	default:
		t.Fatalf("POST %s: content type %q", url, mt)
	}
	if err != nil {
		t.Fatalf("POST %s: read: %v", url, err)
	}
	var r rpcResponse
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("POST %s: decode %q: %v", url, data, err)
	}
	return resp, &r
}

// firstSSEData returns the first non-empty data of an event stream.
func firstSSEData(r io.Reader) ([]byte, error) {
	sc := bufio.NewScanner(r)
	var data []string
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" {
			if len(data) > 0 && strings.Join(data, "") != "" {
				return []byte(strings.Join(data, "\n")), nil
			}
			data = nil
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			data = append(data, strings.TrimPrefix(v, " "))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("stream ended without data")
}

func TestMCPHandlerUnknownKind(t *testing.T) {
	if _, err := MCPHandler("no-such-kind", MCPOptions{}); err == nil {
		t.Error("unknown kind accepted")
	}
}

func TestAuthRequired(t *testing.T) {
	w := startWeb(t, "-- secure.example/mcp --\nSIMWEB-MCP auth-required name=secure\n")
	c := w.Client()
	resp, rpc := postInitialize(t, c, "https://secure.example/mcp")
	if resp.StatusCode != http.StatusUnauthorized || rpc != nil {
		t.Fatalf("initialize: status %d; want 401", resp.StatusCode)
	}
	const prm = "https://secure.example/.well-known/oauth-protected-resource"
	if got, want := resp.Header.Get("WWW-Authenticate"), `Bearer resource_metadata="`+prm+`"`; got != want {
		t.Errorf("WWW-Authenticate = %q, want %q", got, want)
	}
	for _, u := range []string{prm, prm + "/mcp"} {
		var meta struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
		}
		decodeJSON(t, c, u, &meta)
		if meta.Resource != "https://secure.example/mcp" || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != "https://secure.example" {
			t.Errorf("%s = %+v", u, meta)
		}
	}
	var as struct {
		Issuer        string   `json:"issuer"`
		TokenEndpoint string   `json:"token_endpoint"`
		PKCE          []string `json:"code_challenge_methods_supported"`
	}
	decodeJSON(t, c, "https://secure.example/.well-known/oauth-authorization-server", &as)
	if as.Issuer != "https://secure.example" || as.TokenEndpoint == "" || len(as.PKCE) != 1 || as.PKCE[0] != "S256" {
		t.Errorf("authorization server metadata = %+v", as)
	}
}

func decodeJSON(t *testing.T, c *http.Client, url string, v any) {
	t.Helper()
	got := fetch(t, c, url)
	if got.Status != 200 || got.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %d %q", url, got.Status, got.Header.Get("Content-Type"))
	}
	if err := json.Unmarshal([]byte(got.Body), v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
