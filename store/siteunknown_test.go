package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/cardcrawl/cardcrawl/registry/namespace"
	"github.com/cardcrawl/cardcrawl/store"
)

// ns=unknown reads the namespaces never checked while every named
// namespace has a row, and computes every server's row otherwise: either
// way a page holds exactly the servers an unfiltered walk does whose
// namespace is unknown, as namespaces are checked and servers with new
// ones come, names that give no namespace among them.
func TestSiteUnknownNamespace(t *testing.T) { eachDialect(t, testSiteUnknownNamespace) }

func testSiteUnknownNamespace(t *testing.T, dsn string) {
	db := open(t, dsn, nil)
	ctx := context.Background()
	addDomain := func(i int, name string) { t.Helper(); siteDomain(t, db, i, name) }
	// Domain namespaces (never checked offline), an io.github one (github),
	// others (none), and names that give no namespace.
	for i := range 12 {
		name := fmt.Sprintf("com.d%02d/x", i)
		switch i % 4 {
		case 1:
			name = fmt.Sprintf("io.github.user%02d/x", i)
		case 2:
			name = fmt.Sprintf("not a domain %02d/x", i)
		}
		addDomain(i, name)
	}
	addDomain(12, "bare")
	addDomain(13, "/leading")
	// Endpoints only the Registry declares, one named after a card's
	// namespace, one in a namespace of its own, and one with no namespace.
	registryServer(t, db, "com.d04/reg", "https://mcp.d02.example/reg")
	registryServer(t, db, "com.registry/only", "https://mcp.d05.example/reg")
	registryServer(t, db, "nameless", "https://mcp.d09.example/reg")

	// pass is the namespace pass, then the mark, as a recomputation and
	// namespaces --check make them.
	pass := func() {
		t.Helper()
		if _, err := namespace.Run(ctx, db, namespace.RunOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.MarkNamespacesComplete(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// check marks the namespaces of some domains verified, as a check
	// over the network would.
	verify := func(names ...string) {
		t.Helper()
		var rows []store.NamespaceRow
		for _, n := range names {
			rows = append(rows, store.NamespaceRow{Namespace: n, Kind: "domain", Method: "dns",
				Result: `{"method":"dns"}`, CheckedAt: db.Now()})
		}
		if err := db.SaveNamespaces(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	mark, complete := completeness(t, "namespaces", db.MarkNamespacesComplete, db.NamespacesComplete)
	answers := facetAnswers(t, db, store.SiteFilter{NSMethod: store.NSUnknown})
	unknown := func(r store.SiteRow) bool { return r.NSMethod == "" }
	cases := []siteCase{
		{"unknown", store.SiteFilter{NSMethod: store.NSUnknown}, unknown},
		{"unknown and a grade", store.SiteFilter{NSMethod: store.NSUnknown, Grade: "near_conformant"},
			func(r store.SiteRow) bool { return unknown(r) && r.Grade == "near_conformant" }},
		{"unknown in the Registry", store.SiteFilter{NSMethod: store.NSUnknown, Source: store.SourceRegistry},
			func(r store.SiteRow) bool { return unknown(r) && r.InRegistry }},
		{"dns", store.SiteFilter{NSMethod: "dns"}, func(r store.SiteRow) bool { return r.NSMethod == "dns" }},
	}
	check := func(when string) {
		t.Helper()
		checkSiteCases(t, db, when, cases, "dns")
	}

	mark(false)
	complete("never swept", false)
	check("never swept")
	answers("never swept", false)
	pass()
	complete("after a pass", true)
	check("after a pass")
	answers("after a pass", true)

	verify("com.d00", "com.d04", "com.registry")
	complete("after a check", false)
	check("after a check")
	answers("after a check", true)
	mark(true)
	check("checked and marked")

	addDomain(14, "com.d14/x") // a namespace with no row yet
	complete("after a new namespace", false)
	check("after a new namespace")
	answers("after a new namespace", true)
	mark(false)
	pass()
	check("swept again")

	registryServer(t, db, "com.late/reg", "https://mcp.d07.example/late")
	complete("after a new Registry entry", false)
	check("after a new Registry entry")
	answers("after a new Registry entry", true)
	mark(false)
	pass()
	complete("every namespace has a row", true)
	check("every namespace has a row")
}
