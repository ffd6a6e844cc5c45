//go:build !simweb_sdk && !probe_sdk

// The MCP SDKs' own dependencies are not in go.sum yet, so importing them
// would break every build in the module. Until they are, SDK-backed kinds
// are only compiled with -tags simweb_sdk (or probe_sdk, the tag the probe
// package uses for the same reason); delete this file and the build
// line of mcp_sdk.go once go.sum has the entries.

package simweb

import "net/http"

// SDKAvailable reports whether this build can serve SDK-backed MCP kinds.
const SDKAvailable = false

func sdkHandler(string, MCPOptions) (http.Handler, error) {
	return nil, ErrNoSDK
}
