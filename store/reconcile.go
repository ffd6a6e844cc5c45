package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ReconcileCard is a stored Server Card as reconciliation sees it: its key,
// its parsed JSON (a marshalled servercard.Card) and the domains that list it.
type ReconcileCard struct {
	Key     string
	JSON    string
	Domains []string // sorted
}

// cardPage is how many cards EachListedCard reads per query: small, as a
// card may be up to a megabyte.
const cardPage = 64

// EachListedCard calls fn, in key order, for every card some domain lists
// now, with the domains listing it. A card whose every listing is retired
// (the domain stopped publishing it) is history, not a server, as in
// Servers. Cards are read a page at a time (keyset on the key), so memory
// holds one page, whatever the number of cards.
func (db *DB) EachListedCard(ctx context.Context, fn func(ReconcileCard) error) error {
	return eachPage(cardPage, func(after string) ([]ReconcileCard, error) { return db.listedCardPage(ctx, after) },
		func(c ReconcileCard) string { return c.Key }, fn)
}

// listedCardPage bounds the listings' key as well as the cards': given the
// semi-join by key, PostgreSQL merges the two indexes in key order, and
// without the bound its scan of listings_card started at the first key,
// so each page read every listing before it (7-11 ms a page at 100,000
// cards, 0.2 ms with it).
func (db *DB) listedCardPage(ctx context.Context, after string) ([]ReconcileCard, error) {
	cards, err := collect(ctx, db.sql, func(rows *sql.Rows) (ReconcileCard, error) {
		var c ReconcileCard
		err := rows.Scan(&c.Key, &c.JSON)
		return c, err
	}, `SELECT c.key, c.json FROM cards c
		WHERE c.key > ? AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.card_key > ? AND l.active = TRUE)
		ORDER BY c.key LIMIT ?`, after, after, cardPage)
	if err != nil {
		return nil, fmt.Errorf("read cards: %w", err)
	}
	if len(cards) == 0 {
		return nil, nil
	}
	err = db.addListingDomains(ctx, len(cards), func(i int) string { return cards[i].Key }, func(i int, domain string) {
		cards[i].Domains = append(cards[i].Domains, domain)
	})
	if err != nil {
		return nil, err
	}
	return cards, nil
}

// ReconcileRow is one reconciliation result: a matched pair (Kind "pair"),
// a card no Registry entry matched ("card_only"), or a latest Registry
// entry no card matched ("registry_only"). Diffs is a JSON array.
type ReconcileRow struct {
	Kind       string
	CardKey    string
	CardName   string
	Source     string
	Name       string
	Version    string
	Status     string
	Basis      string
	Detail     string
	Diffs      string
	ComputedAt string
	// Inputs names what a card's row was computed from (a hash of its
	// CardStamp); "" for a Registry-only row. Only the writer reads it
	// back (its comparisons, StoredCard).
	Inputs string
}

// ReconcileWriter stores one reconciliation as it is computed: Add queues
// rows, Commit replaces the stored reconciliation with them as a whole (a
// reader sees either the old or the new one, never a mix), Abort drops
// them. Every backend returns one from NewReconcileWriter.
type ReconcileWriter interface {
	// Basis names what this computation's rows follow from besides each
	// card (the build, the Registry's state), stored with them by Commit,
	// and says whether the stored rows follow from the same. Call it
	// before Add; without it the basis is "".
	Basis(basis string) (same bool)
	// StoredCard returns the stored rows of a card (keys in increasing
	// byte order, with only the fields that say what they pair), and for
	// each card that has some, in order, KeepStored adds them as stored
	// (in place of Add) or PassStored drops them.
	StoredCard(ctx context.Context, key string) ([]ReconcileRow, error)
	KeepStored(ctx context.Context) error
	PassStored()
	Add(ctx context.Context, r ReconcileRow) error
	Commit(ctx context.Context) error
	Abort(ctx context.Context)
}

// reconcileWriter is the ReconcileWriter: rows go to a staging table in
// batches, and Commit swaps them in in one short transaction, so the
// writer never holds all the rows. Until a row differs from the stored
// one at its place, nothing is staged: at 100,000 servers rewriting an
// unchanged reconciliation was half its cost (and on PostgreSQL 100,000
// dead rows each time).
type reconcileWriter struct {
	db    *DB
	token string
	batch []ReconcileRow
	err   error

	// While same, the rows added so far are the stored reconciliation's
	// first matched rows, in order, through id sameThrough, as stored by
	// swap gen; stored holds the next stored rows, after the id read.
	same bool
	gen  int64
	// storedBasis is the stored rows' basis (read with gen), basis this
	// computation's.
	storedBasis, basis string
	matched            int64
	sameThrough        int64
	stored             []storedReconcileRow
	read               int64
	readAll            bool

	// StoredCard reads the stored rows' keys in order into look (after id
	// lookRead) and queues those it read past until KeepStored or
	// PassStored resolves them; lookDone is the last stored row resolved,
	// and gap says some stored row was passed over (not kept) since the
	// rows matched. copies are the kept rows to stage, once something
	// differs.
	look     []storedKey
	lookRead int64
	lookAll  bool
	queue    []lookedUp
	lookDone int64
	gap      bool
	copies   []idRange
}

// storedReconcileRow is a stored row as Add compares it: no computed_at.
type storedReconcileRow struct {
	id  int64
	row ReconcileRow
}

// reconcileGen reads which swap of the stored reconciliation is current.
const reconcileGen = `SELECT reconcile_gen FROM feed_state WHERE id = 1`

// ErrReconcileMoved: another computation replaced the stored
// reconciliation while this one compared its rows with it; run again.
var ErrReconcileMoved = errors.New("the stored reconciliation was replaced during the computation")

// reconcileBatch is how many rows one staging transaction writes, and how
// many stored rows one read compares.
const reconcileBatch = 500

// A staging row's columns, and how many rows one INSERT writes.
const (
	reconcileStagingColumns = 13
	reconcileRowsPerInsert  = 100
)

// staleStaging is how old staged rows must be before a new computation
// deletes them as a crashed one's leftovers.
const staleStaging = time.Hour

// NewReconcileWriter starts storing a reconciliation.
func (db *DB) NewReconcileWriter(ctx context.Context) (ReconcileWriter, error) {
	var tok [16]byte
	if _, err := rand.Read(tok[:]); err != nil {
		return nil, fmt.Errorf("save reconciliation: %w", err)
	}
	// A computation killed before its swap leaves its rows staged.
	if _, err := db.sql.ExecContext(ctx, `DELETE FROM reconcile_staging WHERE created_at < ?`,
		ts(db.now().Add(-staleStaging))); err != nil {
		return nil, fmt.Errorf("save reconciliation: %w", err)
	}
	w := &reconcileWriter{db: db, token: hex.EncodeToString(tok[:]), same: true}
	// Read before any stored row: a swap after it moves it.
	if err := db.sql.QueryRowContext(ctx, `SELECT reconcile_gen, reconcile_basis FROM feed_state WHERE id = 1`).Scan(
		&w.gen, &w.storedBasis); err != nil {
		return nil, fmt.Errorf("save reconciliation: %w", err)
	}
	return w, nil
}

// Basis records this computation's basis and compares it with the stored
// rows'.
func (w *reconcileWriter) Basis(basis string) bool {
	w.basis = basis
	return basis == w.storedBasis
}

// Add queues a row, writing a batch to the staging table when one is full.
func (w *reconcileWriter) Add(ctx context.Context, r ReconcileRow) error {
	if w.err != nil {
		return w.err
	}
	r.ComputedAt = ""
	if r.Diffs == "" {
		r.Diffs = "[]"
	}
	if w.same {
		if w.err = w.compare(ctx, r); w.err != nil || w.same {
			return w.err
		}
	}
	// Stored rows kept before this one are staged before it.
	if w.err = w.copyStored(ctx); w.err != nil {
		return w.err
	}
	w.batch = append(w.batch, r)
	if len(w.batch) >= reconcileBatch {
		w.err = w.flush(ctx)
	}
	return w.err
}

// compare matches r with the next stored row, and stages from r on when
// they differ.
func (w *reconcileWriter) compare(ctx context.Context, r ReconcileRow) error {
	next, ok, err := w.nextStored(ctx)
	if err != nil {
		return err
	}
	if ok && next.row == r {
		w.matched++
		w.sameThrough = next.id
		w.stored = w.stored[1:]
		return nil
	}
	return w.diverge(ctx)
}

// nextStored is the first stored row not compared yet, ok=false after the
// last.
func (w *reconcileWriter) nextStored(ctx context.Context) (storedReconcileRow, bool, error) {
	if len(w.stored) == 0 && !w.readAll {
		page, err := storedReconcilePage(ctx, w.db, w.read)
		if err != nil {
			return storedReconcileRow{}, false, fmt.Errorf("save reconciliation: %w", err)
		}
		w.stored, w.readAll = page, len(page) < reconcileBatch
		if len(page) > 0 {
			w.read = page[len(page)-1].id
		}
	}
	if len(w.stored) == 0 {
		return storedReconcileRow{}, false, nil
	}
	return w.stored[0], true, nil
}

// storedReconcilePage reads the stored rows after id, a batch of them, as
// the writer compares them (no computed_at).
func storedReconcilePage(ctx context.Context, db *DB, after int64) ([]storedReconcileRow, error) {
	page, err := collect(ctx, db.sql, func(rows *sql.Rows) (storedReconcileRow, error) {
		var s storedReconcileRow
		r := &s.row
		err := rows.Scan(&s.id, &r.Kind, &r.CardKey, &r.CardName, &r.Source, &r.Name, &r.Version, &r.Status, &r.Basis,
			&r.Detail, &r.Diffs, &r.Inputs)
		return s, err
	}, `SELECT id, kind, card_key, card_name, source, name, version, status, basis, detail, diffs, inputs
		FROM reconcile_results WHERE id > ? ORDER BY id LIMIT ?`, after, reconcileBatch)
	if err != nil {
		return nil, fmt.Errorf("read the stored reconciliation: %w", err)
	}
	return page, nil
}

// diverge stages the stored rows matched so far, from the swap they were
// read from (one statement, so one snapshot of both); the rows that follow
// are staged as added.
func (w *reconcileWriter) diverge(ctx context.Context) error {
	w.same, w.stored = false, nil
	if w.matched == 0 {
		return nil
	}
	res, err := w.db.sql.ExecContext(ctx, `INSERT INTO reconcile_staging (token, created_at, kind, card_key, card_name,
  source, name, version, status, basis, detail, diffs, inputs)
SELECT ?, ?, kind, card_key, card_name, source, name, version, status, basis, detail, diffs, inputs FROM reconcile_results
WHERE id <= ? AND (`+reconcileGen+`) = ? ORDER BY id`,
		w.token, w.db.Now(), w.sameThrough, w.gen)
	if err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != w.matched {
		return ErrReconcileMoved
	}
	return nil
}

func (w *reconcileWriter) flush(ctx context.Context) error {
	if len(w.batch) == 0 {
		return nil
	}
	tx, err := w.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	defer tx.Rollback()
	// Rows at a time: a statement a row was a round trip a row on
	// PostgreSQL (100,000 of them at 100,000 cards).
	now := w.db.Now()
	args := make([]any, 0, reconcileRowsPerInsert*reconcileStagingColumns)
	for rows := w.batch; len(rows) > 0; {
		n := min(len(rows), reconcileRowsPerInsert)
		args = args[:0]
		for _, r := range rows[:n] {
			args = append(args, w.token, now, r.Kind, r.CardKey, r.CardName, r.Source, r.Name, r.Version,
				r.Status, r.Basis, r.Detail, r.Diffs, r.Inputs)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO reconcile_staging (token, created_at, kind, card_key, card_name,
  source, name, version, status, basis, detail, diffs, inputs) VALUES `+valueRows(reconcileStagingColumns, n), args...); err != nil {
			return fmt.Errorf("save reconciliation: %w", err)
		}
		rows = rows[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	w.batch = w.batch[:0]
	return nil
}

// Commit writes what is queued and replaces the stored reconciliation with
// this one, in one transaction; one equal to the stored one, row for row,
// is left as it is.
func (w *reconcileWriter) Commit(ctx context.Context) error {
	if w.err != nil {
		return w.err
	}
	if w.same {
		_, more, err := w.nextStored(ctx)
		if err != nil {
			return err
		}
		if !more {
			return w.keep(ctx)
		}
		if err := w.diverge(ctx); err != nil {
			return err
		}
	}
	// At most one of the two holds rows: each stages the other's first.
	if err := w.flush(ctx); err != nil {
		return err
	}
	if err := w.copyStored(ctx); err != nil {
		return err
	}
	tx, err := w.db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	defer tx.Rollback()
	if err := feedAfterReconcile(ctx, tx, w.db.Now(), w.token); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM reconcile_results`); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO reconcile_results (kind, card_key, card_name, source, name, version,
  status, basis, detail, diffs, inputs, computed_at)
SELECT kind, card_key, card_name, source, name, version, status, basis, detail, diffs, inputs, ?
FROM reconcile_staging WHERE token = ? ORDER BY id`, w.db.Now(), w.token); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE feed_state SET reconcile_gen = reconcile_gen + 1, reconcile_basis = ?
		WHERE id = 1`, w.basis); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM reconcile_staging WHERE token = ?`, w.token); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	return nil
}

// keep leaves the stored reconciliation as it is, equal row for row to
// this one, recording this one's basis with it when that is new; unless
// another computation swapped its own in meanwhile.
func (w *reconcileWriter) keep(ctx context.Context) error {
	if w.basis == w.storedBasis {
		var gen int64
		if err := w.db.sql.QueryRowContext(ctx, reconcileGen).Scan(&gen); err != nil {
			return fmt.Errorf("save reconciliation: %w", err)
		}
		if gen != w.gen {
			return ErrReconcileMoved
		}
		return nil
	}
	res, err := w.db.sql.ExecContext(ctx, `UPDATE feed_state SET reconcile_basis = ? WHERE id = 1 AND reconcile_gen = ?`,
		w.basis, w.gen)
	if err != nil {
		return fmt.Errorf("save reconciliation: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return ErrReconcileMoved
	}
	return nil
}

// changedPairs selects the card keys whose pairing differs between the
// stored reconciliation and the one staged under a token (bound twice):
// a pair gone, new, or with another entry, basis, detail or diffs.
const changedPairs = `SELECT r.card_key FROM reconcile_results r WHERE r.kind = 'pair' AND NOT EXISTS (
	  SELECT 1 FROM reconcile_staging s WHERE s.token = ? AND s.card_key = r.card_key AND s.kind = 'pair'
	  AND s.source = r.source AND s.name = r.name AND s.version = r.version AND s.basis = r.basis
	  AND s.detail = r.detail AND s.diffs = r.diffs)
	UNION
	SELECT s.card_key FROM reconcile_staging s WHERE s.token = ? AND s.kind = 'pair' AND NOT EXISTS (
	  SELECT 1 FROM reconcile_results r WHERE r.card_key = s.card_key AND r.kind = 'pair'
	  AND r.source = s.source AND r.name = s.name AND r.version = s.version AND r.basis = s.basis
	  AND r.detail = s.detail AND r.diffs = s.diffs)`

// feedAfterReconcile moves updatedAt (and the change counter) of the live
// feed records described by a card whose pairing changes, in the
// transaction that swaps the reconciliation in: each record carries its
// card's pairing.
func feedAfterReconcile(ctx context.Context, tx *sql.Tx, now, token string) error {
	var seq int64
	return touchFeedRecords(&txw{ctx: ctx, tx: tx}, now, &seq, `card_key IN (`+changedPairs+`)`, token, token)
}

// Abort drops what this writer staged; the stored reconciliation stays.
func (w *reconcileWriter) Abort(ctx context.Context) {
	_, _ = w.db.sql.ExecContext(ctx, `DELETE FROM reconcile_staging WHERE token = ?`, w.token)
}

// ReplaceReconcile swaps the whole result set in one transaction.
func (db *DB) ReplaceReconcile(ctx context.Context, rows []ReconcileRow) error {
	w, err := db.NewReconcileWriter(ctx)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := w.Add(ctx, r); err != nil {
			w.Abort(context.WithoutCancel(ctx))
			return err
		}
	}
	if err := w.Commit(ctx); err != nil {
		w.Abort(context.WithoutCancel(ctx))
		return err
	}
	return nil
}

const reconcileResultsQuery = `SELECT kind, card_key, card_name, source, name, version, status, basis, detail,
  diffs, computed_at FROM reconcile_results ORDER BY id`

// ReconcileResults returns the stored reconciliation in insertion order.
func (db *DB) ReconcileResults(ctx context.Context) ([]ReconcileRow, error) {
	rows, err := db.sql.QueryContext(ctx, reconcileResultsQuery)
	if err != nil {
		return nil, fmt.Errorf("read reconciliation: %w", err)
	}
	defer rows.Close()
	var out []ReconcileRow
	for rows.Next() {
		var r ReconcileRow
		if err := rows.Scan(&r.Kind, &r.CardKey, &r.CardName, &r.Source, &r.Name, &r.Version, &r.Status, &r.Basis, &r.Detail,
			&r.Diffs, &r.ComputedAt); err != nil {
			return nil, fmt.Errorf("read reconciliation: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read reconciliation: %w", err)
	}
	return out, nil
}

// NamespaceRow is what is known about one namespace. Result is JSON; Method
// and CheckedAt are "" until a check ran.
type NamespaceRow struct {
	Namespace string
	Kind      string
	Domain    string
	Method    string
	Result    string
	CheckedAt string
}

// upsertNamespaces is the head of a multi-row upsert of namespace rows
// (namespaceColumns columns a row), then its conflict clause.
const (
	upsertNamespaces = `INSERT INTO namespaces (namespace, kind, domain, method, result, checked_at) VALUES `
	namespaceColumns = 6
	onNamespace      = `
ON CONFLICT (namespace) DO UPDATE SET kind = excluded.kind, domain = excluded.domain,
  method = CASE WHEN excluded.checked_at = '' THEN namespaces.method ELSE excluded.method END,
  result = CASE WHEN excluded.checked_at = '' THEN namespaces.result ELSE excluded.result END,
  checked_at = CASE WHEN excluded.checked_at = '' THEN namespaces.checked_at ELSE excluded.checked_at END`
)

// namespacesPerStatement is how many namespace rows one read and one
// upsert take: a statement a row was two round trips a namespace on
// PostgreSQL (100,000 for 50,000 namespaces, half the recomputation).
const namespacesPerStatement = 128

// SaveNamespaces upserts namespace rows. A row with CheckedAt "" (only
// classified, not checked) never overwrites an earlier check's outcome.
func (db *DB) SaveNamespaces(ctx context.Context, rows []NamespaceRow) error {
	return db.saveNamespaces(ctx, rows)
}

func (db *DB) saveNamespaces(ctx context.Context, rows []NamespaceRow) error {
	// The feed's statements below are prepared once, on the handle, when
	// no transaction holds it (a sweep saves a batch at a time).
	db.stmts.prepareMissing(ctx, db.sql)
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	defer tx.Rollback()
	var seq int64
	now := db.Now()
	feed := &txw{ctx: ctx, tx: tx, stmts: &db.stmts}
	for len(rows) > 0 {
		// An upsert may change a row once: a namespace named twice ends a
		// statement's rows, so the second comes after the first, as if
		// one at a time.
		n := 0
		seen := map[string]bool{}
		for n < len(rows) && n < namespacesPerStatement && !seen[rows[n].Namespace] {
			seen[rows[n].Namespace] = true
			n++
		}
		if err := saveNamespaceRows(ctx, tx, feed, rows[:n], now, &seq); err != nil {
			return err
		}
		rows = rows[n:]
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	return nil
}

// saveNamespaceRows upserts rows, each namespace once, in one statement
// after reading what they held, and touches the feed records of those that
// changed.
func saveNamespaceRows(ctx context.Context, tx *sql.Tx, feed *txw, rows []NamespaceRow, now string, seq *int64) error {
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.Namespace
	}
	in, inArgs := inList(names)
	before, err := tx.QueryContext(ctx, `SELECT namespace, kind, domain, method, result FROM namespaces WHERE namespace IN (`+in+`)`, inArgs...)
	if err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	old := make(map[string]NamespaceRow, len(rows))
	err = scanEach(before, func() error {
		var o NamespaceRow
		if err := before.Scan(&o.Namespace, &o.Kind, &o.Domain, &o.Method, &o.Result); err != nil {
			return err
		}
		old[o.Namespace] = o
		return nil
	})
	if err != nil {
		return fmt.Errorf("save namespaces: %w", err)
	}
	// An existing row keeps its method and result unless checked (the
	// upsert's rule), so only a new row, a checked one, or one whose kind
	// or domain changed is written: a sweep rewrote every namespace each
	// time (1.2 s of a recomputation at 50,000 namespaces).
	args := make([]any, 0, len(rows)*namespaceColumns)
	n := 0
	for _, r := range rows {
		o, ok := old[r.Namespace]
		if ok && r.CheckedAt == "" && o.Kind == r.Kind && o.Domain == r.Domain {
			continue
		}
		args = append(args, r.Namespace, r.Kind, r.Domain, r.Method, cmp.Or(r.Result, "{}"), normTime(r.CheckedAt))
		n++
	}
	if n > 0 {
		if _, err := tx.ExecContext(ctx, upsertNamespaces+valueRows(namespaceColumns, n)+onNamespace, args...); err != nil {
			return fmt.Errorf("save namespaces: %w", err)
		}
	}
	for _, r := range rows {
		r.Result = cmp.Or(r.Result, "{}")
		o := old[r.Namespace]
		if r.CheckedAt == "" && o.Kind != "" {
			r.Method, r.Result = o.Method, o.Result // kept by the upsert
		}
		if o.Kind == r.Kind && o.Domain == r.Domain && o.Method == r.Method && o.Result == r.Result {
			continue // checked again, nothing new
		}
		// The records named under it carry how it was verified: the names
		// from "ns/" up to "ns0" ('0' follows '/'), by the name index.
		if err := touchFeedRecords(feed, now, seq, `name >= ? AND name < ?`, r.Namespace+"/", r.Namespace+"0"); err != nil {
			return fmt.Errorf("save namespace %s: %w", r.Namespace, err)
		}
	}
	return nil
}

// NamespaceSweep replaces the namespace list without holding it: Save
// upserts a batch as SaveNamespaces does, and Finish, called only after a
// complete pass, removes every namespace nothing names any more. Rows are
// independent, so a reader between batches sees each one whole.
type NamespaceSweep interface {
	Save(ctx context.Context, rows []NamespaceRow) error
	Finish(ctx context.Context) error
}

// namespaceSweep needs no state of its own: Finish reads what is named
// from the names themselves.
type namespaceSweep struct{ db *DB }

// StartNamespaceSweep begins replacing the namespace list.
func (db *DB) StartNamespaceSweep() NamespaceSweep {
	return &namespaceSweep{db: db}
}

// Save upserts a batch as SaveNamespaces does.
func (s *namespaceSweep) Save(ctx context.Context, rows []NamespaceRow) error {
	return s.db.saveNamespaces(ctx, rows)
}

// namedNamespaces are the namespaces some card a domain lists or some
// latest Registry entry names (the name up to its first '/'), once each;
// %[1]s is the dialect's strpos.
const namedNamespaces = `SELECT substr(c.name, 1, %[1]s(c.name, '/') - 1) AS ns FROM cards c
	WHERE %[1]s(c.name, '/') > 1 AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = TRUE)
	UNION
	SELECT substr(e.name, 1, %[1]s(e.name, '/') - 1) FROM registry_entries e WHERE e.is_latest = TRUE AND %[1]s(e.name, '/') > 1`

// Finish removes every namespace nothing names any more: one no card a
// domain lists and no Registry entry names is not a namespace to show.
// Rows the sweep found unchanged were not written, so what it did not
// name is found from the names themselves, not from its stamps: the named
// set once, then an anti-join. SQLite reads NOT IN's list once into an
// index (NOT EXISTS ran the union again for every namespace); PostgreSQL
// hashes NOT EXISTS (its NOT IN hashes only what fits in work_mem). Call
// it only after a complete pass.
func (s *namespaceSweep) Finish(ctx context.Context) error {
	named := fmt.Sprintf(namedNamespaces, s.db.dialect.strpos)
	query := `DELETE FROM namespaces WHERE namespace NOT IN (` + named + `)`
	if s.db.dialect == postgresDialect {
		query = `DELETE FROM namespaces n WHERE NOT EXISTS (SELECT 1 FROM (` + named + `) x WHERE x.ns = n.namespace)`
	}
	if _, err := s.db.sql.ExecContext(ctx, query); err != nil {
		return fmt.Errorf("remove namespaces no longer named: %w", err)
	}
	return nil
}

// Namespace returns one stored namespace row, ok=false when there is none.
func (db *DB) Namespace(ctx context.Context, name string) (r NamespaceRow, ok bool, err error) {
	err = db.sql.QueryRowContext(ctx, `SELECT namespace, kind, domain, method, result, checked_at FROM namespaces
		WHERE namespace = ?`, name).Scan(&r.Namespace, &r.Kind, &r.Domain, &r.Method, &r.Result, &r.CheckedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("read namespace %s: %w", name, err)
	}
	return r, true, nil
}

// NamedDoc is a server name and the JSON document that names it: a card
// some domain lists now, or a latest Registry entry (JSON only when
// EachNamedDoc was asked for it).
type NamedDoc struct {
	Name string
	JSON string
}

// namedCardPage is how many listed cards' names one page of EachNamedDoc
// reads; their documents, when asked for, are read cardPage at a time.
const namedCardPage = 500

// EachNamedDoc calls fn for every listed card and every latest Registry
// entry, merged in byte order of their names, a page of each at a time: the
// names of one namespace ("ns/…") come out adjacent, so a caller can
// collect namespaces one at a time. (A PostgreSQL dialect must sort these
// columns COLLATE "C" to keep that order.) A document's JSON is read only
// when withJSON says its name needs it (nil: every one): reading every
// card's was two thirds of a namespace pass.
func (db *DB) EachNamedDoc(ctx context.Context, withJSON func(name string) bool, fn func(NamedDoc) error) error {
	if withJSON == nil {
		withJSON = func(string) bool { return true }
	}
	cards := &docStream{next: func(after docKey) ([]namedRow, error) {
		page, err := db.namedPage(ctx, `SELECT c.name, c.key, '', '' FROM cards c
			WHERE (c.name, c.key) > (?, ?)
			  AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = TRUE)
			ORDER BY c.name, c.key LIMIT ?`, after.name, after.key, namedCardPage)
		if err != nil {
			return nil, err
		}
		var keys []string
		for _, r := range page {
			if withJSON(r.name) {
				keys = append(keys, r.key)
			}
		}
		if len(keys) == 0 {
			return page, nil
		}
		docs, err := db.CardsJSON(ctx, keys)
		if err != nil {
			return nil, err
		}
		for i := range page {
			page[i].json = docs[page[i].key]
		}
		return page, nil
	}}
	entries := &docStream{next: func(after docKey) ([]namedRow, error) {
		return db.namedPage(ctx, `SELECT name, source, version, server_json FROM registry_entries
			WHERE is_latest = TRUE AND (name, source, version) > (?, ?, ?)
			ORDER BY name, source, version LIMIT ?`, after.name, after.key, after.version, registryPage)
	}}
	for {
		a, err := cards.peek()
		if err != nil {
			return err
		}
		b, err := entries.peek()
		if err != nil {
			return err
		}
		var s *docStream
		switch {
		case a == nil && b == nil:
			return nil
		case b == nil || (a != nil && a.name <= b.name):
			s = cards
		default:
			s = entries
		}
		r := s.pop()
		d := NamedDoc{Name: r.name}
		if withJSON(r.name) {
			d.JSON = r.json
		}
		if err := fn(d); err != nil {
			return err
		}
	}
}

// docKey is a row's place in its stream: name, then the card key or the
// entry's source and version.
type docKey struct{ name, key, version string }

type namedRow struct {
	docKey
	json string
}

// docStream is one keyset-paged query read a page at a time.
type docStream struct {
	next func(after docKey) ([]namedRow, error)
	page []namedRow
	last docKey
	done bool
}

func (s *docStream) peek() (*namedRow, error) {
	if len(s.page) == 0 && !s.done {
		page, err := s.next(s.last)
		if err != nil {
			return nil, err
		}
		if len(page) == 0 {
			s.done = true
		} else {
			s.page, s.last = page, page[len(page)-1].docKey
		}
	}
	if len(s.page) == 0 {
		return nil, nil
	}
	return &s.page[0], nil
}

func (s *docStream) pop() namedRow {
	r := s.page[0]
	s.page = s.page[1:]
	return r
}

func (db *DB) namedPage(ctx context.Context, query string, args ...any) ([]namedRow, error) {
	out, err := collect(ctx, db.sql, func(rows *sql.Rows) (namedRow, error) {
		var r namedRow
		err := rows.Scan(&r.name, &r.key, &r.version, &r.json)
		return r, err
	}, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read names: %w", err)
	}
	return out, nil
}

// Namespaces returns every stored namespace, by name (tests and small
// tools; a listing streams with EachNamespace).
func (db *DB) Namespaces(ctx context.Context) ([]NamespaceRow, error) {
	var out []NamespaceRow
	err := db.EachNamespace(ctx, func(r NamespaceRow) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// namespacePage is how many namespaces one page of EachNamespace reads.
const namespacePage = 500

// EachNamespace calls fn with every stored namespace, by name, a page at a
// time: a listing holds one page whatever the number of namespaces.
func (db *DB) EachNamespace(ctx context.Context, fn func(NamespaceRow) error) error {
	err := eachPage(namespacePage, func(after string) ([]NamespaceRow, error) {
		return collect(ctx, db.sql, func(rows *sql.Rows) (NamespaceRow, error) {
			var r NamespaceRow
			err := rows.Scan(&r.Namespace, &r.Kind, &r.Domain, &r.Method, &r.Result, &r.CheckedAt)
			return r, err
		}, `SELECT namespace, kind, domain, method, result, checked_at FROM namespaces
			WHERE namespace > ? ORDER BY namespace LIMIT ?`, after, namespacePage)
	}, func(r NamespaceRow) string { return r.Namespace }, fn)
	if err != nil {
		return fmt.Errorf("read namespaces: %w", err)
	}
	return nil
}
