package store

import (
	"context"
	"database/sql"
	"fmt"
)

// EntryRange is the span of card keys a page of the cards' entries is
// made of: the records whose card key is after After, up to and including
// Through (the key of the first entry after the page, whose being there
// makes the page say that more follow), or to the end with ToEnd. Mark is
// what the span held when the page was read.
type EntryRange struct {
	After, Through string
	ToEnd          bool
	Mark           RangeMark
}

// RangeMark fingerprints the feed records of a span: how many there are,
// tombstones included, and the latest change number among them. A record
// is never deleted, and every write that changes what a page shows of one
// (its card, listings, probe, decision, updatedAt, its removal or its move
// to another card) stamps it with its transaction's change number, above
// every number taken before (feedTx.refresh, feedAfterDecision,
// touchFeedRecords): while the mark holds, a page of the span reads the
// same.
type RangeMark struct {
	Records, MaxSeq int64
}

// EntryPage is a page of FeedEntries, with the version of the feed it was
// read at and the span it depends on.
type EntryPage struct {
	Entries []FeedEntry
	More    bool
	// Version is FeedVersion as the read found it.
	Version string
	// Range is the page's span; Keep is false when the span holds more
	// than maxSpanRecords records (checking it would cost about what
	// reading the page does: a search that matches few records reads to
	// the end), or when a write to it may have come between the reads of
	// the page and of its mark (only where one transaction's statements do
	// not share a snapshot: PostgreSQL's read committed). Range then says
	// nothing.
	Range EntryRange
	Keep  bool
}

// RangeKeepable reports whether a page of q depends on nothing but the
// feed records of its span (EntryRange): the cards' entries (source card),
// listed ones (no Since: tombstones are selected by time), and no category
// filter (categories are kept apart from the records, and recomputing them
// stamps no change number) nor listing-finding filter (read from the
// listings, not the records).
func (q EntryQuery) RangeKeepable() bool {
	_, inRegistry := registryCursor(q.After)
	return (q.Source == "" || q.Source == FeedSourceCard) && q.Since == "" && q.Category == "" && !q.NoCategory &&
		q.ListingFinding == "" && !inRegistry
}

// FeedEntryPage reads what FeedEntries reads for q, which must be
// RangeKeepable, with the page's version and span.
func (db *DB) FeedEntryPage(ctx context.Context, q EntryQuery) (EntryPage, error) {
	var p EntryPage
	if !q.RangeKeepable() {
		return p, fmt.Errorf("read the feed: %w: a page that depends on more than its span", ErrBadFilter)
	}
	err := db.readFeed(ctx, func(sqlTx *sql.Tx) error {
		tx := db.reader(sqlTx)
		// The version first and the mark last: where statements see
		// different snapshots, a mark no later than the version proves
		// that nothing wrote to the span in between.
		id, seq, err := scanFeedState(ctx, tx.queryRow)
		if err != nil {
			return err
		}
		p.Version = formatFeedVersion(id, seq)
		var next string
		if p.Entries, p.More, next, err = db.feedCardEntries(ctx, tx, q); err != nil {
			return err
		}
		p.Range = EntryRange{After: q.After, Through: next, ToEnd: !p.More}
		if p.Range.Mark, err = rangeMark(ctx, tx.queryRow, p.Range); err != nil {
			return err
		}
		p.Keep = p.Range.Mark.Records <= int64(maxSpanRecords) && p.Range.Mark.MaxSeq <= seq
		return nil
	})
	return p, err
}

// CheckEntryRange reports whether r's mark still holds, and the feed's
// version read before the mark: while it holds, a read of r's page at that
// version gives the page read when r was.
func (db *DB) CheckEntryRange(ctx context.Context, r EntryRange) (version string, still bool, err error) {
	id, seq, err := scanFeedState(ctx, db.queryRow)
	if err != nil {
		return "", false, err
	}
	m, err := rangeMark(ctx, db.queryRow, r)
	if err != nil {
		return "", false, err
	}
	return formatFeedVersion(id, seq), m == r.Mark, nil
}

// rowQuery runs a one-row query on the handle's prepared statements
// (DB.queryRow) or a read transaction's (readTx.queryRow).
type rowQuery func(ctx context.Context, query string, args ...any) *sql.Row

// maxSpanRecords is the most records a kept page's span may hold. A mark
// counts one more at most, so a span that grew past it never matches.
// (A variable for the tests.)
var maxSpanRecords = 2048

const (
	feedStateQuery = `SELECT db_id, seq FROM feed_state WHERE id = 1`
	// Over feed_servers_card (card_key, kind, key), a page's span is a
	// short walk of the index, and never longer than maxSpanRecords + 1.
	rangeMarkQuery = `SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM (SELECT seq FROM feed_servers
		WHERE card_key > ? AND card_key <= ? ORDER BY card_key LIMIT ?) span`
	rangeMarkToEndQuery = `SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM (SELECT seq FROM feed_servers
		WHERE card_key > ? ORDER BY card_key LIMIT ?) span`
)

func scanFeedState(ctx context.Context, q rowQuery) (id string, seq int64, err error) {
	if err := q(ctx, feedStateQuery).Scan(&id, &seq); err != nil {
		return "", 0, fmt.Errorf("feed version: %w", err)
	}
	return id, seq, nil
}

func rangeMark(ctx context.Context, q rowQuery, r EntryRange) (RangeMark, error) {
	var m RangeMark
	query, args := rangeMarkQuery, []any{r.After, r.Through, maxSpanRecords + 1}
	if r.ToEnd {
		query, args = rangeMarkToEndQuery, []any{r.After, maxSpanRecords + 1}
	}
	if err := q(ctx, query, args...).Scan(&m.Records, &m.MaxSeq); err != nil {
		return m, fmt.Errorf("feed range: %w", err)
	}
	return m, nil
}

// queryRow is QueryContext for one row.
func (r *readTx) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := r.stmt(ctx, query)
	if err != nil {
		return r.tx.QueryRowContext(ctx, query, args...) // fails as preparing it did
	}
	return st.QueryRowContext(ctx, args...)
}

func formatFeedVersion(id string, seq int64) string { return fmt.Sprintf("%s-%d", id, seq) }
