package store

import (
	"context"
	"database/sql"
	"fmt"
)

// A reconciliation read every listed card's JSON, decoded it and matched it
// (4 s at 100,000 cards) to find the few a crawl changed. A card's rows
// follow from its stored JSON, the domains listing it, the Registry's
// entries and the rules of the build that computes them; its JSON follows
// from the document (its hash), the judgement stored with it (the findings
// say when remotes were cut) and the build that parsed it. So each card's
// rows are stored with a hash of the card's part (ReconcileRow.Inputs),
// the whole set with its basis (build and Registry state), and a
// computation under the same basis that finds the same hash takes the
// stored rows as they are (the writer's StoredCard and KeepStored).

// CardStamp is what a listed card's reconciliation rows follow from, as the
// store holds it: no JSON (CardsJSON reads that when it is needed).
type CardStamp struct {
	Key      string
	SHA256   string
	JudgedBy string
	Grade    string
	Findings string
	Domains  []string // sorted
}

// stampPage is how many stamps one page reads.
const stampPage = 500

// EachListedCardStamp calls fn with the cards some domain lists now, as
// EachListedCard has them, a page at a time, without their JSON.
func (db *DB) EachListedCardStamp(ctx context.Context, fn func([]CardStamp) error) error {
	var after string
	for {
		page, err := collect(ctx, db.sql, func(rows *sql.Rows) (CardStamp, error) {
			var c CardStamp
			err := rows.Scan(&c.Key, &c.SHA256, &c.JudgedBy, &c.Grade, &c.Findings)
			return c, err
		}, `SELECT c.key, c.sha256, c.judged_by, c.grade, c.findings FROM cards c
			WHERE c.key > ? AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.card_key > ? AND l.active = TRUE)
			ORDER BY c.key LIMIT ?`, after, after, stampPage)
		if err != nil {
			return fmt.Errorf("read cards: %w", err)
		}
		if len(page) == 0 {
			return nil
		}
		err = db.addListingDomains(ctx, len(page), func(i int) string { return page[i].Key }, func(i int, domain string) {
			page[i].Domains = append(page[i].Domains, domain)
		})
		if err != nil {
			return err
		}
		if err := fn(page); err != nil {
			return err
		}
		if len(page) < stampPage {
			return nil
		}
		after = page[len(page)-1].Key
	}
}

// addListingDomains gives each of a page of n cards (key(i), in key order)
// the domains of its active listings, in order (add).
func (db *DB) addListingDomains(ctx context.Context, n int, key func(i int) string, add func(i int, domain string)) error {
	if n == 0 {
		return nil
	}
	index := make(map[string]int, n)
	for i := range n {
		index[key(i)] = i
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT DISTINCT card_key, domain FROM listings
		WHERE active = TRUE AND card_key >= ? AND card_key <= ? ORDER BY card_key, domain`, key(0), key(n-1))
	if err != nil {
		return fmt.Errorf("read listings: %w", err)
	}
	err = scanEach(rows, func() error {
		var k, domain string
		if err := rows.Scan(&k, &domain); err != nil {
			return err
		}
		if i, ok := index[k]; ok {
			add(i, domain)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read listings: %w", err)
	}
	return nil
}

// CardsJSON returns the stored JSON of the cards with these keys (at most a
// page of stamps), by key; a card gone since is missing.
func (db *DB) CardsJSON(ctx context.Context, keys []string) (map[string]string, error) {
	out := make(map[string]string, len(keys))
	for len(keys) > 0 {
		n := min(len(keys), cardPage)
		in, args := inList(keys[:n])
		rows, err := db.sql.QueryContext(ctx, `SELECT key, json FROM cards WHERE key IN (`+in+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
		err = scanEach(rows, func() error {
			var key, doc string
			if err := rows.Scan(&key, &doc); err != nil {
				return err
			}
			out[key] = doc
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read cards: %w", err)
		}
		keys = keys[n:]
	}
	return out, nil
}

// RegistryFingerprint moves with every write to the Registry's entries
// and remotes.
func (db *DB) RegistryFingerprint(ctx context.Context) (string, error) {
	var fp string
	if err := db.sql.QueryRowContext(ctx, registryFingerprint).Scan(&fp); err != nil {
		return "", fmt.Errorf("registry fingerprint: %w", err)
	}
	return fp, nil
}

// storedKey is a stored row as StoredCard reads it: what a computation
// needs to take the card's rows as stored (no names, details or diffs).
type storedKey struct {
	id  int64
	row ReconcileRow
}

// StoredCard returns the stored rows of the card with this key (Kind,
// CardKey, Source, Name, Version and Inputs only), passing over those of
// keys before it; keys must come in increasing byte order, which is the
// order every computation stores its cards' rows in (both dialects). nil
// when there are none. For each card that has rows, KeepStored (add them
// as stored) or PassStored (they are not this computation's) follows, in
// the cards' order; lookups may run ahead of them.
func (w *reconcileWriter) StoredCard(ctx context.Context, key string) ([]ReconcileRow, error) {
	if w.err != nil {
		return nil, w.err
	}
	var out []ReconcileRow
	for {
		if len(w.look) == 0 {
			if w.lookAll {
				break
			}
			if err := w.lookPage(ctx); err != nil {
				w.err = err
				return nil, err
			}
			continue
		}
		k := w.look[0]
		if k.row.CardKey == "" || k.row.CardKey > key { // a Registry-only row, or a later card's
			break
		}
		if k.row.CardKey == key {
			out = append(out, k.row)
		}
		u := lookedUp{id: k.id}
		if k.row.CardKey == key {
			u.card = key
		}
		w.queue = append(w.queue, u)
		w.look = w.look[1:]
	}
	return out, nil
}

// lookedUp is a stored row StoredCard read past: one of the card looked
// up (card is its key), or of a card not listed now ("").
type lookedUp struct {
	id   int64
	card string
}

// resolve takes the rows of the next card looked up off the queue, with
// the rows of unlisted cards before them (passed over); keep says whether
// this computation keeps the card's rows. It returns the card's rows' ids
// and count.
func (w *reconcileWriter) resolve(keep bool) (first, last, n int64) {
	for len(w.queue) > 0 && w.queue[0].card == "" {
		w.gap, w.lookDone = true, w.queue[0].id
		w.queue = w.queue[1:]
	}
	var card string
	if len(w.queue) > 0 {
		card = w.queue[0].card
	}
	for len(w.queue) > 0 && card != "" && w.queue[0].card == card {
		if n == 0 {
			first = w.queue[0].id
		}
		last = w.queue[0].id
		n++
		w.queue = w.queue[1:]
	}
	if !keep && n > 0 {
		w.gap, w.lookDone = true, last
	}
	return first, last, n
}

// PassStored passes over the rows the next card looked up had.
func (w *reconcileWriter) PassStored() { w.resolve(false) }

func (w *reconcileWriter) lookPage(ctx context.Context) error {
	page, err := collect(ctx, w.db.sql, func(rows *sql.Rows) (storedKey, error) {
		var k storedKey
		r := &k.row
		err := rows.Scan(&k.id, &r.Kind, &r.CardKey, &r.Source, &r.Name, &r.Version, &r.Inputs)
		return k, err
	}, `SELECT id, kind, card_key, source, name, version, inputs FROM reconcile_results
		WHERE id > ? ORDER BY id LIMIT ?`, w.lookRead, reconcileBatch)
	if err != nil {
		return fmt.Errorf("read the stored reconciliation: %w", err)
	}
	w.look, w.lookAll = page, len(page) < reconcileBatch
	if len(page) > 0 {
		w.lookRead = page[len(page)-1].id
	}
	return nil
}

// KeepStored adds the rows the next card looked up had, as they are
// stored: while nothing differs from the stored reconciliation yet, by
// counting them as matched; after, by copying them in SQL, consecutive
// cards' rows in one statement.
func (w *reconcileWriter) KeepStored(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	first, last, n := w.resolve(true)
	if n == 0 {
		return nil
	}
	if w.same && !w.gap {
		w.matched += n
		w.sameThrough, w.lookDone = last, last
		// The next comparison (Add, Commit) reads on from here.
		w.stored, w.read, w.readAll = nil, last, false
		return nil
	}
	if w.same {
		if w.err = w.diverge(ctx); w.err != nil {
			return w.err
		}
	}
	if w.err = w.flush(ctx); w.err != nil {
		return w.err
	}
	// Rows passed over since the last copied range break the run.
	if k := len(w.copies); k > 0 && w.lookDone == w.copies[k-1].last {
		w.copies[k-1].last = last
		w.copies[k-1].rows += n
	} else {
		w.copies = append(w.copies, idRange{first: first, last: last, rows: n})
	}
	w.lookDone = last
	return nil
}

// idRange is a run of stored rows to copy into the staging table.
type idRange struct{ first, last, rows int64 }

// copyStored stages the stored rows of the ranges KeepStored queued, from
// the swap the comparison began with.
func (w *reconcileWriter) copyStored(ctx context.Context) error {
	for _, r := range w.copies {
		res, err := w.db.sql.ExecContext(ctx, `INSERT INTO reconcile_staging (token, created_at, kind, card_key, card_name,
  source, name, version, status, basis, detail, diffs, inputs)
SELECT ?, ?, kind, card_key, card_name, source, name, version, status, basis, detail, diffs, inputs FROM reconcile_results
WHERE id >= ? AND id <= ? AND (`+reconcileGen+`) = ? ORDER BY id`, w.token, w.db.Now(), r.first, r.last, w.gen)
		if err != nil {
			return fmt.Errorf("save reconciliation: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != r.rows {
			return ErrReconcileMoved
		}
	}
	w.copies = w.copies[:0]
	return nil
}
