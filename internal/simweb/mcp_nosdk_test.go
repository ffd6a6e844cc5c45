//go:build !simweb_sdk && !probe_sdk

package simweb

import (
	"errors"
	"net/http"
	"testing"
)

func TestSDKKindsNeedTheTag(t *testing.T) {
	for _, k := range Kinds() {
		_, err := MCPHandler(k, MCPOptions{})
		if k == KindAuthRequired {
			if err != nil {
				t.Errorf("%s: %v", k, err)
			}
			continue
		}
		if !errors.Is(err, ErrNoSDK) {
			t.Errorf("%s: err = %v, want ErrNoSDK", k, err)
		}
	}
	// A fixture mount still loads, and says why it cannot answer.
	w := startWeb(t, "-- mcp.example/mcp --\nSIMWEB-MCP go-sdk-stateful\n")
	if got := fetch(t, w.Client(), "https://mcp.example/mcp").Status; got != http.StatusNotImplemented {
		t.Errorf("status %d, want 501", got)
	}
}
