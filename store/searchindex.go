package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"
)

// The site's search (SiteFilter.Q) is a substring of a server's name,
// title, description, endpoint URL, listing domains or Registry server.json.
// SQL's LIKE cannot use an index for a substring, so at 100,000 servers a
// search for a rare term read every server: over a second. A trigram index
// finds a term's servers in milliseconds, but kept by the crawl's own
// transactions it cost a crawl 7–8 % more CPU.
//
// So the index lives apart: a SearchIndex is an SQLite file of its own (an
// FTS5 table with the trigram tokenizer), kept by the process that serves
// the site, which reads the database without writing it (SQLite or
// PostgreSQL alike). It catches up on what the crawl wrote through the
// change number every feed record carries (feed_servers.seq, indexed by
// migration 0015), and rebuilds its Registry rows when the Registry's
// tables changed. It only ever narrows a search to candidates: the page is
// still read with the search's own condition, so a candidate that no longer
// matches is dropped. What it cannot know is a server written after its
// last Refresh, so both searches also read the feed records written since
// it was last exact: the site's those whose text holds the term
// (siteCandidates), the API's by their cards (feedCardKeys). A Registry
// sync's changes are seen from the next Refresh.

// SearchIndex is the site search's index; see OpenSearchIndex.
type SearchIndex struct {
	db    *DB
	idx   *sql.DB
	path  string
	temp  bool
	keep  *os.File   // the kept index's lock file (SearchIndexOptions.Keep)
	dbID  string     // the database's identity (feed_state.db_id), kept with a kept index
	saved searchMeta // what saveMeta last wrote (a kept index's)

	// mu lets one Refresh at a time write, and guards seq, exact, registry
	// and gen; the API's narrowed searches read under it together, so none
	// meets a Refresh half done.
	mu  sync.RWMutex
	seq int64 // feed_state.seq the index holds every record up to
	// exact is the change number up to which the index holds each record
	// as it is now: the last Refresh's starting point. A record that moved
	// past the change number a Refresh read before its walk reached it is
	// not written by that Refresh but by the next, and until then its row
	// may be a version older than a reader begun before the move sees.
	// Written under mu; the site's search reads it without (a Refresh under
	// way moves it only once its rows are written).
	exact    atomic.Int64
	registry string // the Registry tables' fingerprint when its rows were built
	gen      int64  // the generation of the last Registry rebuild
	ready    atomic.Bool
	narrowed atomic.Int64 // name searches of the feed it narrowed (tests)
	maxCands atomic.Int64 // maxSearchCandidates, or fewer in tests
}

// Which table a row of the index was built from: one server may have both.
const (
	searchFromFeed     = 0
	searchFromRegistry = 1
)

// searchPage is how many records one step of a Refresh reads and writes
// in one transaction of the index.
const searchPage = 500

// maxSearchCandidates is the most candidates a search collects from the
// index to sort in memory (SearchIndex.maxCands: tests lower it). A term
// with more is common (5 % of 100,000 servers): walking the servers in key
// order finds a page of them within a few hundred, where collecting them
// all would take longer the more common it is.
const maxSearchCandidates = 5000

// minSearchRunes is the shortest search the trigram index's phrase
// queries answer. A shorter term is answered from its vocabulary
// (shortCandidates), where a walk of every server for a rare two-letter
// term ("go", "db") took over a second at 100,000 servers.
const minSearchRunes = 3

const searchSchema = `
CREATE TABLE site_search (
  id      INTEGER PRIMARY KEY,
  kind    TEXT NOT NULL,
  subject TEXT NOT NULL,
  src     INTEGER NOT NULL,
  gen     INTEGER NOT NULL DEFAULT 0,
  text    TEXT NOT NULL,
  UNIQUE (kind, subject, src)
);
CREATE VIRTUAL TABLE site_search_fts USING fts5(text, content='site_search', content_rowid='id', tokenize='trigram');
CREATE VIRTUAL TABLE site_search_terms USING fts5vocab(site_search_fts, 'instance');
CREATE TABLE site_grade (
  kind    TEXT NOT NULL,
  subject TEXT NOT NULL,
  grade   TEXT NOT NULL,
  PRIMARY KEY (kind, subject)
) WITHOUT ROWID;
CREATE INDEX site_grade_grade ON site_grade (grade, kind, subject);
CREATE TABLE search_meta (
  id       INTEGER PRIMARY KEY CHECK (id = 1),
  layout   TEXT NOT NULL,    -- searchLayout of the build that wrote it
  db_id    TEXT NOT NULL,    -- feed_state.db_id of the database it indexes
  seq      INTEGER NOT NULL, -- SearchIndex.seq, exact, registry and gen after the last Refresh
  exact    INTEGER NOT NULL,
  registry TEXT NOT NULL,
  gen      INTEGER NOT NULL
);
CREATE TABLE search_stage (
  kind    TEXT NOT NULL,
  subject TEXT NOT NULL,
  src     INTEGER NOT NULL,
  text    TEXT,              -- NULL: the row goes
  grade   TEXT NOT NULL,     -- a feed row's ('': its grade goes)
  changed INTEGER NOT NULL DEFAULT 1
);`

// searchLayout names what a kept index's rows are made of: the schema
// above, by its checksum, and the text of each row (joinSearchText and
// what refreshFeed and refreshRegistry join), by the number before it,
// which a change of that text must move. An index kept by a build of
// another layout is made new.
var searchLayout = fmt.Sprintf("2/%08x", crc32.ChecksumIEEE([]byte(searchSchema)))

// SearchIndexOptions configure OpenSearchIndex.
type SearchIndexOptions struct {
	// Path is the index's file, made new (an existing file is replaced)
	// unless Keep. Empty: a temporary file, removed by Close.
	Path string
	// Keep keeps the index in Path from one process to the next: Close
	// leaves the file, and OpenSearchIndex takes up the index an earlier
	// process left there when it is of the same database, so the index is
	// ready at once and its first Refresh reads only what was written since
	// (at 100,000 servers a new index takes 10 to 16 s of CPU, during which
	// searches read every server). An index of another database, of
	// another build's layout, or ahead of the database (a copy restored
	// from before it) is made new. One process at a time holds a kept
	// index (a lock on Path+".lock"). A database restored from a copy of
	// itself, then written, may have records the index never learns of:
	// remove the file after such a restore.
	Keep bool
}

// ErrSearchIndexBusy is returned, wrapped, by OpenSearchIndex when another
// process holds the kept index.
var ErrSearchIndexBusy = errors.New("search index is in use by another process")

// OpenSearchIndex makes an empty search index for db and attaches it:
// once its first Refresh has completed, db's SiteServers narrows searches
// through it. It writes only its own file, so db may be read-only.
func (db *DB) OpenSearchIndex(ctx context.Context, opts SearchIndexOptions) (*SearchIndex, error) {
	path, temp := opts.Path, opts.Path == ""
	if temp && opts.Keep {
		return nil, errors.New("search index: keeping an index needs its path")
	}
	if temp {
		f, err := os.CreateTemp("", "cardcrawl-search-*.db")
		if err != nil {
			return nil, fmt.Errorf("search index: %w", err)
		}
		path = f.Name()
		f.Close()
	}
	s := &SearchIndex{db: db, path: path, temp: temp}
	s.maxCands.Store(maxSearchCandidates)
	if opts.Keep {
		var err error
		if s.dbID, _, err = scanFeedState(ctx, db.sql.QueryRowContext); err != nil {
			return nil, fmt.Errorf("search index: %w", err)
		}
		if s.keep, err = lockSearchIndex(path); err != nil {
			return nil, err
		}
		if err := s.open(); err != nil {
			s.Close()
			return nil, err
		}
		if took, err := s.takeUp(ctx); err != nil || took {
			if err != nil {
				s.Close()
				return nil, err
			}
			db.search.Store(s)
			return s, nil
		}
		s.idx.Close()
	}
	if err := s.removeFiles(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.open(); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := s.idx.ExecContext(ctx, searchSchema); err != nil {
		s.Close()
		return nil, fmt.Errorf("search index: %w", err)
	}
	db.search.Store(s)
	return s, nil
}

// open opens the index's file. A temporary index is a cache rebuilt from
// the database at every start, which a crash may lose whole, so nothing is
// synced; a kept one is synced at checkpoints, so a crash loses at most
// its last Refreshes, which the next one reads again.
func (s *SearchIndex) open() error {
	sync := "OFF"
	if s.keep != nil {
		sync = "NORMAL"
	}
	idx, err := sql.Open("sqlite", "file:"+s.path+"?_pragma=journal_mode(WAL)&_pragma=synchronous("+sync+
		")&_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	idx.SetMaxOpenConns(4)
	idx.SetMaxIdleConns(4)
	s.idx = idx
	return nil
}

func (s *SearchIndex) removeFiles() error {
	for _, p := range []string{s.path, s.path + "-wal", s.path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("search index: %w", err)
		}
	}
	return nil
}

// lockSearchIndex takes the kept index at path for this process.
func lockSearchIndex(path string) (*os.File, error) {
	f, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	ok, err := flockTry(f, false)
	if err != nil || !ok {
		f.Close()
		if err == nil {
			err = ErrSearchIndexBusy
		}
		return nil, fmt.Errorf("search index %s: %w", path, err)
	}
	return f, nil
}

// takeUp takes up the index an earlier process kept in the file when it is
// this database's, of this build's layout, and not ahead of the database;
// took is false when it is not (or there is none, or it cannot be read),
// and the index is to be made new.
func (s *SearchIndex) takeUp(ctx context.Context) (took bool, err error) {
	if _, err := os.Stat(s.path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	var layout, dbID, registry string
	var seq, exact, gen int64
	if err := s.idx.QueryRowContext(ctx, `SELECT layout, db_id, seq, exact, registry, gen FROM search_meta WHERE id = 1`).
		Scan(&layout, &dbID, &seq, &exact, &registry, &gen); err != nil {
		s.db.log.Info("search index: making a new one", "file", s.path, "reason", err)
		return false, nil
	}
	_, now, err := scanFeedState(ctx, s.db.sql.QueryRowContext)
	if err != nil {
		return false, fmt.Errorf("search index: %w", err)
	}
	switch {
	case layout != searchLayout:
		s.db.log.Info("search index: making a new one", "file", s.path, "reason", "kept by a build of another layout")
		return false, nil
	case dbID != s.dbID:
		s.db.log.Info("search index: making a new one", "file", s.path, "reason", "kept for another database")
		return false, nil
	case seq > now:
		s.db.log.Info("search index: making a new one", "file", s.path, "reason", "ahead of the database", "index", seq,
			"database", now)
		return false, nil
	}
	s.seq, s.registry, s.gen = seq, registry, gen
	s.exact.Store(exact)
	s.saved = searchMeta{seq: seq, exact: exact, gen: gen, registry: registry}
	// Searches read the feed records written since the index was exact,
	// but nothing tells them of a Registry sync: an index whose Registry
	// rows are out of date waits for its first Refresh.
	var fp string
	if err := s.db.sql.QueryRowContext(ctx, registryFingerprint).Scan(&fp); err != nil {
		return false, fmt.Errorf("search index: registry: %w", err)
	}
	s.ready.Store(fp == registry)
	return true, nil
}

// searchMeta is how far a kept index got (search_meta's row).
type searchMeta struct {
	seq, exact, gen int64
	registry        string
}

// saveMeta records what a kept index holds, for the next process to take
// it up (takeUp), when it moved since it was last recorded: Refresh runs
// every few seconds, mostly finding nothing new. A temporary index
// records nothing.
func (s *SearchIndex) saveMeta(ctx context.Context) error {
	m := searchMeta{seq: s.seq, exact: s.exact.Load(), gen: s.gen, registry: s.registry}
	if s.keep == nil || m == s.saved {
		return nil
	}
	if _, err := s.idx.ExecContext(ctx, `INSERT INTO search_meta (id, layout, db_id, seq, exact, registry, gen)
		VALUES (1, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET layout = excluded.layout, db_id = excluded.db_id,
		seq = excluded.seq, exact = excluded.exact, registry = excluded.registry, gen = excluded.gen`,
		searchLayout, s.dbID, m.seq, m.exact, m.registry, m.gen); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	s.saved = m
	return nil
}

// Close detaches the index from its database and closes it (removing a
// temporary file; leaving a kept one for the next process).
func (s *SearchIndex) Close() error {
	s.db.search.CompareAndSwap(s, nil)
	var err error
	if s.idx != nil {
		err = s.idx.Close()
	}
	if s.temp {
		s.removeFiles()
	}
	if s.keep != nil {
		s.keep.Close() // drops the lock
	}
	return err
}

// Ready reports whether a Refresh has completed: searches use the index
// from then on.
func (s *SearchIndex) Ready() bool { return s.ready.Load() }

// Refresh brings the index up to what the database holds now: the feed
// records written since the last Refresh, and every Registry row when the
// Registry's tables changed. Its cost follows what changed; the first one
// reads every record. It returns how many records it read.
func (s *SearchIndex) Refresh(ctx context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var upTo int64
	if err := s.db.sql.QueryRowContext(ctx, `SELECT seq FROM feed_state WHERE id = 1`).Scan(&upTo); err != nil {
		return 0, fmt.Errorf("search index: %w", err)
	}
	n, err := s.refreshFeed(ctx, upTo)
	if err != nil {
		return n, err
	}
	m, err := s.refreshRegistry(ctx)
	n += m
	if err != nil {
		return n, err
	}
	if err := s.saveMeta(ctx); err != nil {
		return n, err
	}
	s.ready.Store(true)
	return n, nil
}

// searchRow is one row of the index to write: text "" removes it.
type searchRow struct {
	kind, subject string
	text          string
	grade         string // a feed record's ("": none, or the record is gone)
}

// feedChange is a feed record written after the index's change number.
type feedChange struct {
	seq                           int64
	kind                          int
	key                           string
	name, title, description, url string
	grade                         string
	removed                       bool
	domains                       []string
}

// refreshFeed reads the feed records written after s.seq up to upTo, a
// page at a time, and writes their rows. Records only move to a larger
// change number, so one rewritten during the walk is met by a later one.
func (s *SearchIndex) refreshFeed(ctx context.Context, upTo int64) (int, error) {
	n := 0
	// Kind 2 sorts after both kinds: the walk starts after s.seq.
	after := feedChange{seq: s.seq, kind: 2}
	for {
		page, err := collect(ctx, s.db.sql, func(rows *sql.Rows) (feedChange, error) {
			var c feedChange
			err := rows.Scan(&c.seq, &c.kind, &c.key, &c.name, &c.title, &c.description, &c.url, &c.grade, &c.removed)
			return c, err
		}, `SELECT f.seq, f.kind, f.key, f.name, f.title, f.description, f.endpoint, f.grade, f.removed_at IS NOT NULL
			FROM feed_servers f WHERE (f.seq, f.kind, f.key) > (?, ?, ?) AND f.seq <= ?
			ORDER BY f.seq, f.kind, f.key LIMIT ?`, after.seq, after.kind, after.key, upTo, searchPage)
		if err != nil {
			return n, fmt.Errorf("search index: feed records: %w", err)
		}
		if len(page) == 0 {
			break
		}
		if err := s.db.listingDomains(ctx, page); err != nil {
			return n, fmt.Errorf("search index: %w", err)
		}
		rows := make([]searchRow, len(page))
		for i, c := range page {
			rows[i] = searchRow{kind: siteKind(c.kind), subject: c.key}
			if !c.removed {
				rows[i].text = joinSearchText(append([]string{c.name, c.title, c.description, c.url}, c.domains...))
				rows[i].grade = c.grade
			}
		}
		if err := s.write(ctx, searchFromFeed, 0, rows); err != nil {
			return n, err
		}
		n += len(page)
		after = page[len(page)-1]
		if len(page) < searchPage {
			break
		}
	}
	s.exact.Store(s.seq)
	s.seq = upTo
	return n, nil
}

// listingDomains fills the domains of the active listings of a page of
// feed records.
func (db *DB) listingDomains(ctx context.Context, page []feedChange) error {
	at := map[feedKey]int{}
	var norms, cards []any
	for i, c := range page {
		at[feedKey{c.kind, c.key}] = i
		switch {
		case c.removed:
		case c.kind == kindEndpoint:
			norms = append(norms, c.key)
		default:
			cards = append(cards, c.key)
		}
	}
	read := func(kind int, query string, keys []any) error {
		if len(keys) == 0 {
			return nil
		}
		type listing struct{ key, domain string }
		in, args := inList(keys)
		ls, err := collect(ctx, db.sql, func(rows *sql.Rows) (listing, error) {
			var l listing
			err := rows.Scan(&l.key, &l.domain)
			return l, err
		}, fmt.Sprintf(query, in), args...)
		if err != nil {
			return fmt.Errorf("listing domains: %w", err)
		}
		for _, l := range ls {
			c := &page[at[feedKey{kind, l.key}]]
			c.domains = append(c.domains, l.domain)
		}
		return nil
	}
	if err := read(kindEndpoint, `SELECT remote_norm, domain FROM listings WHERE active = 1 AND remote_norm IN (%s)`, norms); err != nil {
		return err
	}
	return read(kindCard, `SELECT card_key, domain FROM listings WHERE active = 1 AND remote_norm = '' AND card_key IN (%s)`, cards)
}

// registryFingerprint changes whenever the Registry's tables may have:
// every write of an entry moves its last_seen (its changed_at never passes
// it), entries and remotes come and go, and remotes are made anew with
// their entry's changed_at. Each part is read from an index (migration
// 0017): serve asks at every refresh. Registry syncs are rare, and each
// is followed by one rebuild.
const registryFingerprint = `SELECT
	(SELECT COUNT(*) FROM registry_entries) || '/' || COALESCE((SELECT MAX(last_seen) FROM registry_entries), '') || '/' ||
	(SELECT COUNT(*) FROM registry_remotes) || '/' || COALESCE((SELECT MAX(entry_changed_at) FROM registry_remotes), '')`

// refreshRegistry rebuilds the Registry's rows, one per endpoint a latest,
// undeleted entry declares, when the Registry's tables changed since the last
// rebuild: each endpoint's URLs and the names and server.json of the
// entries declaring it. Rows written again get this rebuild's generation;
// the others are gone from the Registry and removed.
func (s *SearchIndex) refreshRegistry(ctx context.Context) (int, error) {
	var fp string
	if err := s.db.sql.QueryRowContext(ctx, registryFingerprint).Scan(&fp); err != nil {
		return 0, fmt.Errorf("search index: registry: %w", err)
	}
	if fp == s.registry {
		return 0, nil
	}
	gen := s.gen + 1
	type part struct{ norm, source, name, version, url, entryName, serverJSON string }
	n := 0
	var after part
	var cur *searchRow // the endpoint being read: complete once the next begins
	var texts []string
	var rows []searchRow
	write := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := s.write(ctx, searchFromRegistry, gen, rows)
		n += len(rows)
		rows = rows[:0]
		return err
	}
	for {
		page, err := collect(ctx, s.db.sql, func(r *sql.Rows) (part, error) {
			var p part
			err := r.Scan(&p.norm, &p.source, &p.name, &p.version, &p.url, &p.entryName, &p.serverJSON)
			return p, err
		}, `SELECT rr.url_norm, rr.source, rr.name, rr.version, rr.url, e.name, e.server_json
			FROM registry_remotes rr JOIN registry_entries e ON e.source = rr.source AND e.name = rr.name AND e.version = rr.version
			WHERE (rr.url_norm, rr.source, rr.name, rr.version) > (?, ?, ?, ?)
			ORDER BY rr.url_norm, rr.source, rr.name, rr.version LIMIT ?`,
			after.norm, after.source, after.name, after.version, searchPage)
		if err != nil {
			return n, fmt.Errorf("search index: registry: %w", err)
		}
		for _, p := range page {
			if cur == nil || cur.subject != p.norm {
				if cur != nil {
					cur.text = joinSearchText(texts)
					rows = append(rows, *cur)
				}
				cur, texts = &searchRow{kind: KindEndpoint, subject: p.norm}, texts[:0]
			}
			texts = append(texts, p.url, p.entryName, p.serverJSON)
		}
		if len(rows) >= searchPage {
			if err := write(); err != nil {
				return n, err
			}
		}
		if len(page) < searchPage {
			break
		}
		after = page[len(page)-1]
	}
	if cur != nil {
		cur.text = joinSearchText(texts)
		rows = append(rows, *cur)
	}
	if err := write(); err != nil {
		return n, err
	}
	if _, err := s.idx.ExecContext(ctx, `DELETE FROM site_search WHERE src = ? AND gen <> ?`, searchFromRegistry, gen); err != nil {
		return n, fmt.Errorf("search index: %w", err)
	}
	s.registry, s.gen = fp, gen
	return n, nil
}

// write stores rows from one source in one transaction of the index: a
// row with text replaces the server's, one without removes it, and a feed
// row's grade is kept, or removed when it has none. The rows go
// through a staging table and reach the full-text index in a few set-wise
// statements: FTS5 writes its pending terms out at the end of every
// statement, and a statement per row left the index in thousands of
// segments, slow to write (a minute and a half for 100,000 rows) and slow
// to search.
func (s *SearchIndex) write(ctx context.Context, src int, gen int64, rows []searchRow) error {
	tx, err := s.idx.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer tx.Rollback()
	stage, err := tx.PrepareContext(ctx, `INSERT INTO search_stage (kind, subject, src, text, grade) VALUES (?, ?, ?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	defer stage.Close()
	for _, r := range rows {
		text := sql.NullString{String: r.text, Valid: r.text != ""}
		if _, err := stage.ExecContext(ctx, r.kind, r.subject, src, text, r.grade); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
	}
	const same = `s.kind = g.kind AND s.subject = g.subject AND s.src = g.src`
	for _, q := range []struct {
		sql  string
		args []any
	}{
		// A row whose text is what the index holds changes nothing.
		{`UPDATE search_stage SET changed = 0 WHERE EXISTS (SELECT 1 FROM site_search s
			WHERE s.kind = search_stage.kind AND s.subject = search_stage.subject AND s.src = search_stage.src
			AND s.text = search_stage.text)`, nil},
		{`INSERT INTO site_search_fts (site_search_fts, rowid, text) SELECT 'delete', s.id, s.text
			FROM search_stage g JOIN site_search s ON ` + same + ` WHERE g.changed = 1`, nil},
		{`DELETE FROM site_search WHERE id IN (SELECT s.id FROM search_stage g JOIN site_search s ON ` + same + `
			WHERE g.text IS NULL)`, nil},
		{`INSERT INTO site_search (kind, subject, src, gen, text) SELECT kind, subject, src, ?, text
			FROM search_stage WHERE text IS NOT NULL ORDER BY rowid
			ON CONFLICT (kind, subject, src) DO UPDATE SET text = excluded.text, gen = excluded.gen`, []any{gen}},
		{`INSERT INTO site_search_fts (rowid, text) SELECT s.id, s.text
			FROM search_stage g JOIN site_search s ON ` + same + ` WHERE g.changed = 1`, nil},
		// A feed record's grade, for the grade's pages (gradeFacet).
		{`DELETE FROM site_grade WHERE (kind, subject) IN (SELECT kind, subject FROM search_stage
			WHERE src = ? AND grade = '')`, []any{searchFromFeed}},
		{`INSERT INTO site_grade (kind, subject, grade) SELECT kind, subject, grade FROM search_stage
			WHERE src = ? AND grade <> '' ORDER BY kind, subject
			ON CONFLICT (kind, subject) DO UPDATE SET grade = excluded.grade`, []any{searchFromFeed}},
		{`DELETE FROM search_stage`, nil},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return fmt.Errorf("search index: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	return nil
}

// gradeFacet finds the servers that may have a grade: those the index
// holds with it, and those whose feed records were written since it was
// last exact and have it now. A record that left the grade since is still
// proposed, and dropped by the page's condition. It answers only while at
// most the index's bound of records were written since (usable), and
// reads those once, for the page: a query for them each time the page
// read candidates tripled a page's time while a crawl wrote.
func (s *SearchIndex) gradeFacet(grade string) *siteFacet {
	// Read before the arms run: a Refresh that ends in between moves
	// exact past records the index's arm was read without.
	exact := s.exact.Load()
	indexed := func(kind string) facetArm {
		return facetArm{query: `SELECT subject FROM site_grade WHERE grade = ? AND kind = ? AND subject > ?
			ORDER BY subject LIMIT ?`, args: []any{grade, kind}, from: s.idx}
	}
	fc := &siteFacet{cards: []facetArm{indexed(KindCard), {}}, endpoints: []facetArm{indexed(KindEndpoint), {}}}
	fc.usable = func(ctx context.Context) (bool, error) {
		recent, common, err := s.recentHolding(ctx, exact, `f.grade = ?`, grade)
		if common || err != nil {
			return false, err
		}
		fc.addFixed(recent)
		return true, nil
	}
	return fc
}

// joinSearchText is a row's text: its parts on lines of their own, so a
// term matches within one part (what the search's condition asks) and not
// across two, unless it holds a line break. Two line breaks end it, so
// every character is the first of a trigram: a term of one or two
// characters anywhere, even last, begins one (shortCandidates).
func joinSearchText(parts []string) string {
	parts = slices.DeleteFunc(parts, func(p string) bool { return p == "" })
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "\n") + "\n\n"
}

// siteKind is the site's name of a feed record's kind.
func siteKind(kind int) string {
	if kind == kindEndpoint {
		return KindEndpoint
	}
	return KindCard
}

// searchable reports whether the index can narrow a search for q.
func searchable(q string) bool { return utf8.RuneCountInString(q) >= minSearchRunes || shortTerm(q) }

// shortTerm reports whether q is a term of one or two characters, which
// shortCandidates answers.
func shortTerm(q string) bool {
	n := utf8.RuneCountInString(q)
	return n > 0 && n < minSearchRunes && utf8.ValidString(q)
}

// caseVariants are q's spellings in other cases: each character as any of
// its case forms (lower, upper and title case, and what folds to or from
// it). One of them is q as FTS5 folds it, whichever of those mappings its
// tables follow, so the index's folding need not be Go's.
func caseVariants(q string) []string {
	out := []string{""}
	for _, r := range q {
		forms := []rune{r, unicode.ToLower(r), unicode.ToUpper(r), unicode.ToTitle(r)}
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			forms = append(forms, f)
		}
		slices.Sort(forms)
		forms = slices.Compact(forms)
		next := make([]string, 0, len(out)*len(forms))
		for _, p := range out {
			for _, f := range forms {
				next = append(next, p+string(f))
			}
		}
		out = next
	}
	return out
}

// ftsPhrase is q as an FTS5 phrase: with the trigram tokenizer, the rows
// holding q as a substring, case folded.
func ftsPhrase(q string) string { return `"` + strings.ReplaceAll(q, `"`, `""`) + `"` }

// candidates returns, in key order, the servers after a key whose text
// holds q; common is true (and keys nil) when more than
// maxSearchCandidates rows hold it.
func (s *SearchIndex) candidates(ctx context.Context, q string, after SiteKey) (keys []SiteKey, common bool, err error) {
	most := int(s.maxCands.Load())
	if shortTerm(q) {
		keys, common, err = s.shortCandidates(ctx, q, most)
	} else {
		keys, err = collect(ctx, s.idx, scanSiteKey, `SELECT s.kind, s.subject FROM site_search_fts f
			JOIN site_search s ON s.id = f.rowid WHERE site_search_fts MATCH ? LIMIT ?`, ftsPhrase(q), most+1)
		common = len(keys) > most
	}
	if err != nil {
		return nil, false, fmt.Errorf("search index: %w", err)
	}
	if common {
		return nil, true, nil
	}
	slices.SortFunc(keys, compareSiteKeys)
	return keysAfter(slices.Compact(keys), after, compareSiteKeys), false, nil
}

// shortCandidates returns the rows holding q, a term of one or two
// characters (shortTerm), or common when more than most do. A phrase
// query needs a trigram, but every occurrence of q begins one
// (joinSearchText pads each text), so the rows holding q are those holding
// a trigram that starts with q as the index folds it: a range of its
// vocabulary for each of q's case variants.
func (s *SearchIndex) shortCandidates(ctx context.Context, q string, most int) (keys []SiteKey, common bool, err error) {
	vs := caseVariants(q)
	// Lower case first: it is how the index folds most terms, so a common
	// term (most one-letter ones) is known from its first count.
	if i := slices.Index(vs, strings.ToLower(q)); i > 0 {
		vs[0], vs[i] = vs[i], vs[0]
	}
	// The vocabulary's occurrences of the terms in a range. Counted flat,
	// not over a subquery of them: that took 2–3 times as long in serve
	// (a common one-letter term: 18 ms against 7).
	const inRange = `FROM site_search_terms WHERE term >= ? AND term < ?`
	var ranges []string
	var args []any
	for _, v := range vs {
		// The terms that start with v, in the byte order FTS5 keeps them
		// in (UTF-8 has no byte 0xFF to carry from).
		end := v[:len(v)-1] + string([]byte{v[len(v)-1] + 1})
		var held int
		if err := s.idx.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT DISTINCT doc `+inRange+` LIMIT ?)`,
			v, end, most+1).Scan(&held); err != nil {
			return nil, false, err
		}
		if held > most {
			return nil, true, nil
		}
		if held > 0 {
			ranges = append(ranges, `SELECT doc `+inRange)
			args = append(args, v, end)
		}
	}
	if len(ranges) == 0 {
		return nil, false, nil
	}
	// Bounded in rows, not occurrences: one row may hold q many times.
	keys, err = collect(ctx, s.idx, scanSiteKey, `SELECT s.kind, s.subject FROM site_search s WHERE s.id IN
		(SELECT DISTINCT doc FROM (`+strings.Join(ranges, ` UNION ALL `)+`) LIMIT ?)`, append(args, most+1)...)
	return keys, len(keys) > most, err
}

// siteCandidates returns, in key order, the servers after a key that may
// hold q for the site's search: the index's candidates, and the servers
// whose feed records were written since the index was last exact (a
// crawl's newest, which the index has not read yet or holds as they were)
// and whose text, as the index would hold it, holds q. common is true when
// either is more than the index's bound.
func (s *SearchIndex) siteCandidates(ctx context.Context, q string, after SiteKey) (keys []SiteKey, common bool, err error) {
	// Read before the candidates: a Refresh that ends in between moves
	// exact past records whose rows the candidates were read without.
	exact := s.exact.Load()
	keys, common, err = s.candidates(ctx, q, after)
	if common || err != nil {
		return nil, common, err
	}
	pat := "%" + likeEscaper.Replace(q) + "%"
	recent, common, err := s.recentHolding(ctx, exact, recentMatches, pat, pat, pat, pat, pat, kindEndpoint, kindCard)
	if common || err != nil {
		return nil, common, err
	}
	keys = append(keys, recent...)
	slices.SortFunc(keys, compareSiteKeys)
	return keysAfter(slices.Compact(keys), after, compareSiteKeys), false, nil
}

// recentMatches holds when a feed record's text (what refreshFeed indexes:
// name, title, description, endpoint, listing domains) holds a LIKE
// pattern (recentHolding). A server's Registry text is indexed apart, and
// its candidates come from the index.
const recentMatches = `lower(f.name) LIKE lower(?) ESCAPE '\' OR lower(f.title) LIKE lower(?) ESCAPE '\'
	OR lower(f.description) LIKE lower(?) ESCAPE '\' OR lower(f.endpoint) LIKE lower(?) ESCAPE '\'
	OR EXISTS (SELECT 1 FROM listings l WHERE l.active = 1 AND lower(l.domain) LIKE lower(?) ESCAPE '\'
	           AND ((f.kind = ? AND l.remote_norm = f.key) OR (f.kind = ? AND l.card_key = f.key AND l.remote_norm = '')))`

// recentHolding returns the servers whose feed records were written after
// exact and for which holds is true (recordsSince, within the index's bound).
func (s *SearchIndex) recentHolding(ctx context.Context, exact int64, holds string, args ...any) (keys []SiteKey, common bool, err error) {
	recs, common, err := recordsSince(ctx, s.db.sql, sinceRead{seq: exact, most: int(s.maxCands.Load()), holds: holds, args: args})
	if err != nil {
		return nil, false, fmt.Errorf("search index: %w", err)
	}
	return siteKeysOf(recs), common, nil
}

func scanSiteKey(rows *sql.Rows) (SiteKey, error) {
	var k SiteKey
	err := rows.Scan(&k.Kind, &k.Subject)
	return k, err
}

func compareSiteKeys(a, b SiteKey) int {
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.Subject, b.Subject)
}

// feedCardKeys returns, in order, the card keys of the feed records that
// may hold q in their names, for the API's search of names: those whose
// indexed text holds it, and every record written after the index was last
// exact. ok is false when the index cannot answer for the read tx is in:
// not ready, q too short or too common, a Refresh under way, the index
// ahead of seq (the change number tx reads), or too many records written
// since. So the read is narrowed to a superset of what it finds, and a
// kept answer is what a read without the index gives; otherwise the API
// reads every name.
func (s *SearchIndex) feedCardKeys(ctx context.Context, tx *readTx, q string, seq int64) (keys []string, ok bool, err error) {
	if !s.Ready() || !searchable(q) || !s.mu.TryRLock() {
		return nil, false, nil
	}
	var (
		cands  []SiteKey
		common bool
	)
	exact, notAhead := s.exact.Load(), s.seq <= seq
	if notAhead {
		cands, common, err = s.candidates(ctx, q, SiteKey{})
	}
	s.mu.RUnlock()
	if !notAhead || common || err != nil {
		return nil, false, err
	}
	most := int(s.maxCands.Load())
	keys, err = collect(ctx, tx, scanString, `SELECT card_key FROM feed_servers WHERE seq > ? AND card_key <> '' LIMIT ?`,
		exact, most+1)
	if err != nil {
		return nil, false, fmt.Errorf("search index: records since: %w", err)
	}
	if len(keys) > most {
		return nil, false, nil
	}
	cards, ends := subjectsByKind(cands)
	for _, part := range []struct {
		kind int
		keys []string
	}{{kindEndpoint, ends}, {kindCard, cards}} {
		for len(part.keys) > 0 {
			chunk := part.keys[:min(len(part.keys), siteSearchChunk)]
			part.keys = part.keys[len(chunk):]
			list, args := inList(chunk)
			got, err := collect(ctx, tx, scanString, `SELECT card_key FROM feed_servers
				WHERE kind = ? AND key IN (`+list+`) AND card_key <> ''`, append([]any{part.kind}, args...)...)
			if err != nil {
				return nil, false, fmt.Errorf("search index: card keys: %w", err)
			}
			keys = append(keys, got...)
		}
	}
	slices.Sort(keys)
	s.narrowed.Add(1)
	return slices.Compact(keys), true, nil
}
