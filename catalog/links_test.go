package catalog

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLinks(t *testing.T) {
	const page = "https://www.example.com/docs/index.html"
	hdr := func(vs ...string) http.Header {
		h := http.Header{}
		for _, v := range vs {
			h.Add("Link", v)
		}
		return h
	}
	tests := []struct {
		name   string
		header http.Header
		html   string
		base   string // "" means nil
		want   []string
	}{
		{name: "nothing", base: page},
		{name: "header quoted rel", base: page, header: hdr(`<https://example.com/catalog/ai.json>; rel="ai-catalog"`),
			want: []string{"https://example.com/catalog/ai.json"}},
		{name: "header unquoted rel, relative target", base: page, header: hdr(`</catalog/ai.json>;rel=ai-catalog`),
			want: []string{"https://www.example.com/catalog/ai.json"}},
		{name: "header case-insensitive, several rel values", base: page, header: hdr(`<ai.json>; REL="preload AI-Catalog"; type="application/ai-catalog+json"`),
			want: []string{"https://www.example.com/docs/ai.json"}},
		{name: "several links in one header", base: page,
			header: hdr(`<https://example.com/style.css>; rel=stylesheet, <https://example.com/a,b.json>; rel="ai-catalog", <https://example.com/c.json>; rel="ai-catalog"; title="x, y"`),
			want:   []string{"https://example.com/a,b.json", "https://example.com/c.json"}},
		{name: "several headers", base: page, header: hdr(`<https://example.com/1.json>; rel="ai-catalog"`, `<https://example.com/2.json>; rel="ai-catalog"`),
			want: []string{"https://example.com/1.json", "https://example.com/2.json"}},
		{name: "rel is a substring only", base: page, header: hdr(`<https://example.com/x.json>; rel="ai-catalog-v2"`, `<https://example.com/y.json>; rel="not-ai-catalog"`)},
		{name: "only the first rel counts", base: page, header: hdr(`<https://example.com/x.json>; rel="next"; rel="ai-catalog"`)},
		{name: "escaped quote in a parameter", base: page, header: hdr(`<https://example.com/x.json>; title="a \"q\"; rel=ai-catalog"; rel="ai-catalog"`),
			want: []string{"https://example.com/x.json"}},
		{name: "junk is skipped", base: page, header: hdr(`garbage, <https://example.com/x.json>; rel="ai-catalog" trailing junk, <https://example.com/y.json>; rel=ai-catalog`, `<unterminated; rel=ai-catalog`),
			want: []string{"https://example.com/x.json", "https://example.com/y.json"}},
		{name: "non-http targets dropped", base: page, header: hdr(`<javascript:alert(1)>; rel=ai-catalog, <ftp://example.com/x.json>; rel=ai-catalog, <mailto:a@example.com>; rel=ai-catalog`)},
		{name: "relative target without base", header: hdr(`</catalog/ai.json>; rel=ai-catalog, <https://example.com/abs.json>; rel=ai-catalog`),
			want: []string{"https://example.com/abs.json"}},
		{name: "fragment dropped, duplicates collapsed", base: page, header: hdr(`<https://example.com/x.json#top>; rel=ai-catalog, <https://example.com/x.json>; rel=ai-catalog`),
			want: []string{"https://example.com/x.json"}},

		{name: "html link", base: page, html: `<!doctype html><html><head><link rel="ai-catalog" href="/catalog/ai.json" type="application/ai-catalog+json"></head><body></body></html>`,
			want: []string{"https://www.example.com/catalog/ai.json"}},
		{name: "html rel tokens, case, unquoted", base: page, html: `<html><head><LINK REL="alternate AI-Catalog" HREF=ai.json><link rel=ai-catalog href=" other.json "></head></html>`,
			want: []string{"https://www.example.com/docs/ai.json", "https://www.example.com/docs/other.json"}},
		{name: "html rel substring does not match", base: page, html: `<link rel="ai-catalogue" href="/a.json"><link rel="x-ai-catalog" href="/b.json"><a rel="ai-catalog" href="/c.json">c</a>`},
		{name: "html base href", base: page, html: `<html><head><base href="https://cdn.example.org/site/"><link rel="ai-catalog" href="catalog.json"></head></html>`,
			want: []string{"https://cdn.example.org/site/catalog.json"}},
		{name: "html relative base href", base: page, html: `<head><base href="/root/"><link rel="ai-catalog" href="catalog.json"></head>`,
			want: []string{"https://www.example.com/root/catalog.json"}},
		{name: "html base href with nil page base", html: `<head><base href="https://example.org/"><link rel="ai-catalog" href="c.json"></head>`,
			want: []string{"https://example.org/c.json"}},
		{name: "html link without href or empty href", base: page, html: `<link rel="ai-catalog"><link rel="ai-catalog" href="">`},
		{name: "html link in body", base: page, html: `<body><p>hi</p><link rel="ai-catalog" href="/late.json"></body>`,
			want: []string{"https://www.example.com/late.json"}},
		{name: "headers first, then html, deduplicated", base: page,
			header: hdr(`</b.json>; rel=ai-catalog`),
			html:   `<link rel="ai-catalog" href="/a.json"><link rel="ai-catalog" href="https://www.example.com/b.json">`,
			want:   []string{"https://www.example.com/b.json", "https://www.example.com/a.json"}},
		{name: "junk html", base: page, html: "\x00\xff<<<>>><link rel=\"ai-catalog\" href=\"/x.json\"", want: nil},
		{name: "json body instead of html", base: page, html: `{"specVersion":"1.0","entries":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b *url.URL
			if tt.base != "" {
				b = mustURL(t, tt.base)
			}
			got := Links(tt.header, []byte(tt.html), b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Links (-want +got):\n%s", diff)
			}
		})
	}
}
