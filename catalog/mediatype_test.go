package catalog

import "testing"

func TestEssence(t *testing.T) {
	tests := []struct{ in, want string }{
		{"application/mcp-server-card+json", "application/mcp-server-card+json"},
		{"Application/MCP-Server-Card+JSON; v=1", "application/mcp-server-card+json"},
		{"  application/ai-catalog+json ;charset=utf-8", "application/ai-catalog+json"},
		{`text/markdown; profile="urn:air:agent-skills"`, "text/markdown"},
		{"application/vnd.oai.openapi+json;version=3.1", "application/vnd.oai.openapi+json"},
		{"", ""},
		{";", ""},
		{"  Not A Media Type  ", "not a media type"},
		{"application/mcp-server-card+json-but-not", "application/mcp-server-card+json-but-not"},
	}
	for _, tt := range tests {
		if got := Essence(tt.in); got != tt.want {
			t.Errorf("Essence(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLooksLikeHTML(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"<!DOCTYPE html><html>", true},
		{"\n\t  <html lang=en>", true},
		{"\xEF\xBB\xBF<head>", true},
		{"<?xml version=\"1.0\"?>", true},
		{`{"specVersion":"1.0"}`, false},
		{`  [1]`, false},
		{"", false},
		{"   ", false},
		{"Not Found", false},
	}
	for _, tt := range tests {
		if got := LooksLikeHTML([]byte(tt.in)); got != tt.want {
			t.Errorf("LooksLikeHTML(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
