package fetch

import (
	"context"
	"net/netip"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/failure"
)

func TestCheckHost(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, Options{Resolver: fakeResolver(map[string][]netip.Addr{
		"public.example.":   {netip.MustParseAddr("93.184.216.34")},
		"internal.example.": {netip.MustParseAddr("10.0.0.5")},
		"mixed.example.":    {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
	})})
	tests := []struct {
		url  string
		want failure.Class // failure.None for allowed
	}{
		{"https://public.example/mcp", ""},
		{"https://a.example/mcp", ""}, // operator-named --connect-to target (loopback) is trusted
		{"https://internal.example/mcp", ClassBlockedAddress},
		{"https://mixed.example/mcp", ClassBlockedAddress},
		{"https://nowhere.example/mcp", ClassDNS},
		{"https://10.0.0.5/mcp", ClassBlockedAddress},
		{"http://public.example/mcp", ClassBlockedScheme},
		{"https://{tenant}.example/mcp", ClassPlaceholderURL},
		{"https://public.example:22/mcp", failure.BlockedPort},
	}
	for _, tt := range tests {
		err := c.CheckHost(context.Background(), tt.url)
		if got := Class(err, 0); got != tt.want {
			t.Errorf("CheckHost(%s) = %v (class %q), want class %q", tt.url, err, got, tt.want)
		}
	}
}
