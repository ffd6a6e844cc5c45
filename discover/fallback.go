package discover

import (
	"context"
	"net/url"

	"github.com/cardcrawl/cardcrawl/catalog"
	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// maxLinkedCatalogs bounds how many rel="ai-catalog" links one home page may
// send us to.
const maxLinkedCatalogs = 3

// followLinks reads the home page for rel="ai-catalog" links (HTML <link>
// and the Link header) and reads the first catalog that works.
func (d *domainCrawl) followLinks(ctx context.Context) bool {
	home := "https://" + d.domain + "/"
	f := d.get(ctx, kindHomePage, home, acceptHTML)
	d.record(ctx, f)
	if f.obs.Class != "" || f.resp == nil {
		return false
	}
	base, _ := url.Parse(f.finalURL)
	links := catalog.Links(f.resp.Header, f.body, base)
	for i, link := range links {
		if i == maxLinkedCatalogs {
			break
		}
		if d.visited[link] {
			continue
		}
		d.visited[link] = true
		d.catalogs++
		cf := d.get(ctx, kindCatalog, link, acceptCatalog)
		if !cf.ok() {
			d.record(ctx, cf)
			continue
		}
		if d.catalogDoc(ctx, cf, "", 0) {
			d.result.CatalogURL = link
			d.addCatalogFinding(link, finding.Info, CodeFoundViaLink, "catalog found through a rel=\"ai-catalog\" link on "+home)
			return true
		}
	}
	return false
}

// legacy tries pre-AI-Catalog locations. What it finds is recorded with a
// legacy_location finding, so nobody mistakes it for the standard path.
func (d *domainCrawl) legacy(ctx context.Context) bool {
	found := false
	for _, p := range legacyCatalogPaths {
		u := "https://" + d.domain + p
		d.catalogs++
		f := d.get(ctx, kindLegacy, u, acceptCatalog)
		if !f.ok() {
			d.record(ctx, f)
			continue
		}
		if d.catalogDoc(ctx, f, "", 0) {
			d.addCatalogFinding(u, finding.Warning, CodeLegacyLocation, "non-standard catalog location "+p)
			if d.result.CatalogURL == "" {
				d.result.CatalogURL = u
			}
			found = true
		}
	}
	for _, p := range legacyCardPaths {
		u := "https://" + d.domain + p
		d.cards++
		f := d.get(ctx, kindLegacy, u, acceptCard)
		d.record(ctx, f)
		if !f.ok() {
			continue
		}
		d.entries++
		d.card(u, catalog.Entry{Identifier: u}, u, u, f.body, false)
		last := &d.result.Cards[len(d.result.Cards)-1]
		last.Findings.Add(finding.Warning, CodeLegacyLocation, "", "card found at the non-standard location "+p)
		if d.result.CatalogURL == "" {
			d.result.CatalogURL = u
		}
		found = true
	}
	return found
}

func (d *domainCrawl) addCatalogFinding(key string, sev finding.Severity, code, msg string) {
	for i := range d.result.Catalogs {
		c := &d.result.Catalogs[i]
		if c.URL != key {
			continue
		}
		c.Findings.Add(sev, code, "", msg)
	}
}
