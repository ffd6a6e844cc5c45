package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// An AI Catalog entry keeps its publisher's identifier unless an earlier
// entry already has that identifier and version; then the catalog gives it
// one of its own. The AI Catalog used to remember every identifier and
// version it wrote, one string per entry. A walk of the entries now asks
// the database instead, a page at a time (markRepeats): which records are
// listed under each identifier of the page (listings_identifier, migration
// 0016), which of those start an earlier entry of the same version, and
// whether that entry's publisher identifier is the same one. Memory holds
// a page.

// PublisherIdentifier is the identifier the publisher's catalog gave a
// card, from the listing chain of its entry's first record (in domain,
// catalog order): the first listing's that is not made up, "" when none.
// A listing whose identifier or catalog URL is the card's own key was made
// up by the crawler for a card found without a catalog.
func PublisherIdentifier(cardKey string, ls []Listing) string {
	for _, l := range ls {
		if l.Identifier != "" && l.Identifier != cardKey && l.CatalogURL != cardKey {
			return l.Identifier
		}
	}
	return ""
}

// listingsByIdentifier are the live listings under identifiers (%s: their
// placeholders), each as the record it lists: an endpoint (remote_norm),
// or a card without remotes (remote_norm empty, card_key). Read from
// listings_identifier alone.
const listingsByIdentifier = `SELECT identifier, remote_norm, card_key FROM listings
	WHERE identifier IN (%s) AND active = 1`

// identifierChunk is how many records one look-up of the records listed
// under a page's identifiers asks for.
var identifierChunk = 512

// markRepeats sets repeats on the records of a page of entries that start
// an entry (starts) whose publisher identifier and version an earlier
// entry of the same walk (filter) has.
func markRepeats(ctx context.Context, tx *readTx, page []FeedServer, starts []int, filter FeedFilter) error {
	var index keyIndex
	index.reset()
	for _, i := range starts {
		if id := PublisherIdentifier(page[i].CardKey, page[i].Listings); id != "" {
			index.add(id, i)
		}
	}
	byID, ids := index.at, index.keys
	if len(ids) == 0 {
		return nil
	}
	type listed struct {
		id string
		at FeedCursor
	}
	// The records listed, where the walk has them: live, kept by the
	// filter, with their card, version and entry. Most are on this page
	// (an entry's own records); the others are looked up.
	type rec struct{ card, version, first string }
	recs := map[FeedCursor]rec{}
	for i := range page {
		s := &page[i]
		recs[s.Cursor()] = rec{s.CardKey, s.Version, s.entryFirst}
	}
	var cands []listed
	keys := [2][]any{}
	rows, err := queryIn(ctx, tx, listingsByIdentifier, ids)
	if err != nil {
		return fmt.Errorf("identifiers of the feed: %w", err)
	}
	err = scanEach(rows, func() error {
		var l listed
		var norm, card string
		if err := rows.Scan(&l.id, &norm, &card); err != nil {
			return err
		}
		l.at = FeedCursor{kindEndpoint, norm}
		if norm == "" {
			l.at = FeedCursor{kindCard, card}
		}
		starts := byID[l.id]
		if r, ok := recs[l.at]; ok && r.first >= page[starts[len(starts)-1]].entryFirst {
			return nil // of no entry before the last here under l.id
		}
		if _, ok := recs[l.at]; !ok {
			keys[l.at.Kind] = append(keys[l.at.Kind], l.at.Key)
			recs[l.at] = rec{} // asked once; stays empty if the walk has it not
		}
		cands = append(cands, l)
		return nil
	})
	if err != nil {
		return fmt.Errorf("identifiers of the feed: %w", err)
	}
	// The records listed under a page's identifiers are as many as their
	// publishers make them: asked a chunk at a time, as one list of
	// placeholders would pass the database's limit (32,766 on SQLite).
	for kind, ks := range keys {
		for chunk := range slices.Chunk(ks, identifierChunk) {
			in, args := inList(chunk)
			where, args := filter.and(`f.removed_at IS NULL AND f.kind = ? AND f.key IN (`+in+`)`, append([]any{kind}, args...))
			rows, err := tx.QueryContext(ctx, `SELECT f.key, f.card_key, f.version, f.entry_first FROM `+
				feedFromOf(filter)+` WHERE `+where, args...)
			if err != nil {
				return fmt.Errorf("identifiers of the feed: %w", err)
			}
			err = scanEach(rows, func() error {
				var key string
				var r rec
				if err := rows.Scan(&key, &r.card, &r.version, &r.first); err != nil {
					return err
				}
				recs[FeedCursor{kind, key}] = r
				return nil
			})
			if err != nil {
				return fmt.Errorf("identifiers of the feed: %w", err)
			}
		}
	}
	for _, c := range cands {
		r := recs[c.at]
		if r.first == "" {
			continue // not in the walk
		}
		for _, i := range byID[c.id] {
			s := &page[i]
			if s.repeats || r.version != s.Version || r.first >= s.entryFirst {
				continue
			}
			same, err := startsEntryAs(ctx, tx, c.at, r.card, c.id, filter)
			if err != nil {
				return err
			}
			s.repeats = same
		}
	}
	return nil
}

// startsEntryAs reports whether the record at is the first record of its
// card's entry in a walk with filter, and the entry's publisher identifier
// is id. Asked only of a record listed under id that starts an entry
// earlier and of the same version: a repeat, or rare.
func startsEntryAs(ctx context.Context, tx *readTx, at FeedCursor, card, id string, filter FeedFilter) (bool, error) {
	where, args := filter.and(`f.card_key = ? AND f.removed_at IS NULL`, []any{card})
	var first FeedCursor
	err := tx.queryRow(ctx, `SELECT f.kind, f.key FROM `+feedFromOf(filter)+` WHERE `+where+`
		ORDER BY f.kind, f.key LIMIT 1`, args...).Scan(&first.Kind, &first.Key)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("identifiers of the feed: %w", err)
	}
	if first != at {
		return false, nil
	}
	s := []FeedServer{{kind: at.Kind, CardKey: card}}
	if at.Kind == kindEndpoint {
		s[0].EndpointNorm = at.Key
	}
	if err := attachListings(ctx, tx, s, false); err != nil {
		return false, err
	}
	return PublisherIdentifier(card, s[0].Listings) == id, nil
}
