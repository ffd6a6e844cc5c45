package store

import "context"

// IdentifierChunk lets the tests ask for the records listed under a page's
// identifiers a few at a time.
var IdentifierChunk = &identifierChunk

// MaxSpanRecords lets the tests narrow the spans kept pages may have.
var MaxSpanRecords = &maxSpanRecords

// SetMaxCandidates lets a test take a search's common-term path with few
// servers, and returns the bound it replaced.
func (s *SearchIndex) SetMaxCandidates(n int) int { return int(s.maxCands.Swap(int64(n))) }

// EachFeedEntryPaged is EachFeedEntry reading pages of size records.
func (db *DB) EachFeedEntryPaged(ctx context.Context, filter FeedFilter, want Facts, size int, fn func(*FeedEntry) error) error {
	return db.eachFeedEntry(ctx, filter, want, size, fn)
}

// Narrowed is how many of the feed's name searches the index narrowed.
func (s *SearchIndex) Narrowed() int64 { return s.narrowed.Load() }

// Hold takes the index's lock as a Refresh does (write) or as a search does
// (read), until release.
func (s *SearchIndex) Hold(write bool) (release func()) {
	if write {
		s.mu.Lock()
		return s.mu.Unlock
	}
	s.mu.RLock()
	return s.mu.RUnlock
}

// SetSiteWindow makes filtered site pages read in windows starting at n
// driving keys, on any dialect.
func (db *DB) SetSiteWindow(n int) { db.siteWindow = n }

// SetFacetSizes makes faceted site pages read candidates chunk at a time
// at first, and walk when a whole facet has more than most.
func (db *DB) SetFacetSizes(chunk, most int) { db.facetChunk, db.facetMost = chunk, most }

// SetFeedPage makes walks of the feed read n records at a time.
func (db *DB) SetFeedPage(n int) { db.feedPage = n }

// CategoriesComplete says whether category=none reads the rows that say so
// (MarkCategoriesComplete's mark is current).
func (db *DB) CategoriesComplete(ctx context.Context) (bool, error) {
	complete, _, err := categoriesComplete(ctx, db.sql.QueryRowContext)
	return complete, err
}

// NamespacesComplete says whether ns=unknown reads the namespaces never
// checked (MarkNamespacesComplete's mark is current).
func (db *DB) NamespacesComplete(ctx context.Context) (bool, error) {
	complete, _, _, err := namespacesComplete(ctx, db.sql.QueryRowContext)
	return complete, err
}

// FacetAnswers says whether one of f's facets can drive its pages now,
// rather than a walk of every server.
func (db *DB) FacetAnswers(ctx context.Context, f SiteFilter) (bool, error) {
	for _, fc := range db.siteFacetsOf(f) {
		switch {
		case fc.whole != nil:
			_, common, err := fc.whole(ctx, db, db.facetBound())
			if err != nil || !common {
				return err == nil, err
			}
		case fc.usable != nil:
			ok, err := fc.usable(ctx)
			if err != nil || ok {
				return ok, err
			}
		default:
			return true, nil
		}
	}
	return false, nil
}

// EachCatalogPaged is EachCatalog reading pages of size catalogs.
func (db *DB) EachCatalogPaged(ctx context.Context, domain string, size int, fn func(CatalogRow) error) error {
	return db.eachCatalog(ctx, domain, size, fn)
}
