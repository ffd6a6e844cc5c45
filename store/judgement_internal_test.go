package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

// TestCatalogJudgementListingCodes: a catalog judged again gives the
// listings it made new codes by their entry; a listing stored before
// listings named their entry keeps its codes, and a judgement of a
// document the catalog no longer has (another hash) changes nothing, nor
// one that finds what the stored findings say.
func TestCatalogJudgementListingCodes(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { testCatalogJudgementListingCodes(t, filepath.Join(t.TempDir(), "j.db")) })
	t.Run("postgres", func(t *testing.T) { testCatalogJudgementListingCodes(t, pgtest.NewDB(t)) })
}

func testCatalogJudgementListingCodes(t *testing.T, dsn string) {
	ctx := context.Background()
	db, err := Open(ctx, dsn, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const root = "https://a.example/.well-known/ai-catalog.json"
	if _, err := db.Enqueue(ctx, []string{"a.example"}, EnqueueOptions{}); err != nil {
		t.Fatal(err)
	}
	r := DomainResult{Domain: "a.example", Outcome: OutcomeCatalog, Definitive: true, CatalogURL: root,
		Catalogs: []CatalogRecord{{URL: root, SHA256: "c", JudgedBy: "catalog/0"}}}
	for i, name := range []string{"a", "b", "c"} {
		key := "https://a.example/" + name + ".json"
		r.Cards = append(r.Cards, CardRecord{Key: key, SourceURL: key, SHA256: "h" + name, Grade: "conformant",
			JSON: []byte(`{}`), JudgedBy: "servercard/test"})
		r.Entries = append(r.Entries, EntryRecord{CatalogURL: root, Identifier: "urn:x:" + name,
			Type: "application/mcp-server-card+json", URL: key, Raw: []byte(`{}`)})
		r.Listings = append(r.Listings, ListingRecord{CatalogURL: root, Identifier: "urn:x:" + name, CardKey: key,
			Codes: "old", Entry: i})
	}
	if err := db.SaveDomain(ctx, r); err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE listings SET entry_index = NULL WHERE identifier = 'urn:x:c'`); err != nil {
		t.Fatal(err)
	}
	codes := func() []string {
		t.Helper()
		got, err := collect(ctx, db.sql, scanString, `SELECT entry_codes FROM listings ORDER BY identifier`)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	byEntry := func(entry int) string { return []string{"new0", "new1", "new2"}[entry] }
	// The codes follow from the findings: the new rules find something.
	newFindings := finding.List{{Severity: finding.Info, Code: "new", Path: "/signature", Message: "m"}}
	if err := db.SaveCatalogJudgement(ctx, Judgement{Key: root, SHA256: "other", JudgedBy: "catalog/1", Findings: newFindings,
		EntryCodes: byEntry}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"old", "old", "old"}, codes()); diff != "" {
		t.Errorf("after judging another document (-want +got):\n%s", diff)
	}
	if err := db.SaveCatalogJudgement(ctx, Judgement{Key: root, SHA256: "c", JudgedBy: "catalog/1", Findings: newFindings,
		EntryCodes: byEntry}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new0", "new1", "old"}, codes()); diff != "" {
		t.Errorf("after judging the catalog (-want +got):\n%s", diff)
	}
	if err := db.SaveCatalogJudgement(ctx, Judgement{Key: root, SHA256: "c", JudgedBy: "catalog/2", Findings: newFindings,
		EntryCodes: func(int) string { return "unchanged findings" }}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"new0", "new1", "old"}, codes()); diff != "" {
		t.Errorf("after judging the same again (-want +got):\n%s", diff)
	}
}
