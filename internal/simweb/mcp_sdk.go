package simweb

import (
	"context"
	"fmt"
	"net/http"
	"time"

	gomcp "github.com/mark3labs/mcp-go/mcp"
	goserver "github.com/mark3labs/mcp-go/server"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionTimeout bounds the memory of stateful servers probed by clients
// that never send DELETE (a 1,000-endpoint benchmark, an interrupted demo).
const sessionTimeout = 2 * time.Minute

// noArgs gives tools the input schema {"type":"object","additionalProperties":false}.
type noArgs struct{}

func sdkHandler(kind string, opts MCPOptions) (http.Handler, error) {
	switch kind {
	case KindGoSDKStateful, KindGoSDKJSON, KindGoSDKStateless:
		s := goSDKServer(opts)
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
			Stateless:                  kind == KindGoSDKStateless,
			JSONResponse:               kind != KindGoSDKStateful,
			SessionTimeout:             sessionTimeout,
			DisableLocalhostProtection: true,
		}), nil
	case KindMCPGoStreamable:
		return goserver.NewStreamableHTTPServer(mcpGoServer(opts),
			goserver.WithDisableLocalhostProtection(true),
			goserver.WithSessionIdleTTL(sessionTimeout),
		), nil
	case KindMCPGoSSE:
		return goserver.NewSSEServer(mcpGoServer(opts),
			goserver.WithSSEEndpoint(opts.Path),
			goserver.WithMessageEndpoint(opts.Path+"/message"),
			goserver.WithSSEDisableLocalhostProtection(true),
		), nil
	}
	return nil, fmt.Errorf("simweb: kind %q has no SDK server", kind)
}

func goSDKServer(opts MCPOptions) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: opts.Name, Version: opts.Version}, nil)
	for i := range opts.Tools {
		mcp.AddTool(s, &mcp.Tool{Name: toolName(i), Description: "a simulated tool; never called by the crawler"},
			func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
			})
	}
	return s
}

func mcpGoServer(opts MCPOptions) *goserver.MCPServer {
	s := goserver.NewMCPServer(opts.Name, opts.Version, goserver.WithToolCapabilities(true))
	for i := range opts.Tools {
		s.AddTool(gomcp.NewTool(toolName(i), gomcp.WithDescription("a simulated tool; never called by the crawler")),
			func(context.Context, gomcp.CallToolRequest) (*gomcp.CallToolResult, error) {
				return gomcp.NewToolResultText("ok"), nil
			})
	}
	return s
}
