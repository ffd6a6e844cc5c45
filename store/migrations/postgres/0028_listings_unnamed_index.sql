-- The listings stored before migration 0026, which do not say which entry
-- of their catalog listed the card (entry_index NULL), by catalog: re-judging
-- (crawl --revalidate) finds their entries in the stored catalogs a
-- catalog at a time and names them. Every listing a crawl writes names its
-- entry, so this index holds only what is left of those and costs a crawl
-- nothing.
CREATE INDEX listings_unnamed ON listings (catalog_url) WHERE entry_index IS NULL;
