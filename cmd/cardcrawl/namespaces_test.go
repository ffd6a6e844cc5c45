package main

import (
	"testing"

	"github.com/cardcrawl/cardcrawl/registry/namespace"
)

// TestNamespaceSummary: the namespaces table's one-line account of each
// DNS answer, a misplaced proof included.
func TestNamespaceSummary(t *testing.T) {
	ed := namespace.Proof{Algorithm: "ed25519", Key: "k", Valid: true}
	base := namespace.Classify("com.example")
	tests := []struct {
		name string
		dns  []namespace.DNSCheck
		want string
	}{
		{"at the domain", []namespace.DNSCheck{{Name: "example.com", Proofs: []namespace.Proof{ed}, Found: true}},
			"TXT key at example.com"},
		{"misplaced", []namespace.DNSCheck{{Name: "example.com"},
			{Name: "_mcp-auth.example.com", Records: []string{"v=MCPv1"}, Proofs: []namespace.Proof{ed}, Misplaced: true}},
			"TXT record at _mcp-auth.example.com, where the Registry does not look (it reads example.com)"},
		{"unusable", []namespace.DNSCheck{{Name: "example.com", Proofs: []namespace.Proof{{Problem: "ed25519 key is 3 bytes, want 32"}}}},
			"unusable TXT record at example.com: ed25519 key is 3 bytes, want 32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := namespaceSummary(namespace.Result{Namespace: base, Method: namespace.MethodNone, DNS: tt.dns}); got != tt.want {
				t.Errorf("summary = %q, want %q", got, tt.want)
			}
		})
	}
}
