package store

import (
	"context"
	"fmt"
)

// A server's namespace is unknown when its name's namespace (what precedes
// its first "/", namespaceOf) has no row in namespaces or a row whose
// method is '' (never checked), or when its name gives none ("bare": no
// "/", or one first). The namespace pass upserts a row for every namespace
// a listed card or a latest Registry entry names, so once it has run the
// unknown ones are the rows namespaces_method lists under '' and the bare
// names: a lookup, where ns=unknown computed every server's row (0.4-0.5 s
// at 100,000 servers when few are unknown). A server named since the pass
// may name a namespace with no row; the change number it moves says so,
// and sinceMark finds it.

// namespaceless says whether a listed card or a latest Registry entry
// names a namespace that has no row (%[1]s: the dialect's strpos).
const namespaceless = `SELECT EXISTS (SELECT 1 FROM cards c WHERE %[1]s(c.name, '/') > 1
	  AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = TRUE)
	  AND NOT EXISTS (SELECT 1 FROM namespaces n WHERE n.namespace = %[2]s))
	OR EXISTS (SELECT 1 FROM registry_entries e WHERE e.is_latest = TRUE AND %[1]s(e.name, '/') > 1
	  AND NOT EXISTS (SELECT 1 FROM namespaces n WHERE n.namespace = %[3]s))`

// bareNames says whether a listed card or an endpoint's Registry entry has
// a name that gives no namespace (%[1]s: the dialect's strpos).
const bareNames = `SELECT EXISTS (SELECT 1 FROM cards c WHERE %[1]s(c.name, '/') <= 1
	  AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = TRUE))
	OR EXISTS (SELECT 1 FROM registry_remotes rr WHERE %[1]s(rr.name, '/') <= 1)`

// MarkNamespacesComplete records, when every namespace a listed card or a
// latest Registry entry names has a row, the change number at which it had
// (feed_state.namespaces_seq) and whether some name gave no namespace, and
// reports whether it did. From then on the site's ns=unknown reads the
// namespaces never checked, and the servers written since
// (sinceMark), instead of computing every server's row. It reads
// the change number before checking: a server that comes after the check
// moves the number past the one recorded. Call it after the last write of
// a pass that may move the number (categories do).
func (db *DB) MarkNamespacesComplete(ctx context.Context) (bool, error) {
	_, seq, err := scanFeedState(ctx, db.sql.QueryRowContext)
	if err != nil {
		return false, fmt.Errorf("namespaces complete: %w", err)
	}
	strpos := db.dialect.strpos
	var missing, bare bool
	query := fmt.Sprintf(namespaceless, strpos, namespaceOf("c.name", strpos), namespaceOf("e.name", strpos))
	if err := db.sql.QueryRowContext(ctx, query).Scan(&missing); err != nil {
		return false, fmt.Errorf("namespaces complete: %w", err)
	}
	if missing {
		return false, nil
	}
	if err := db.sql.QueryRowContext(ctx, fmt.Sprintf(bareNames, strpos)).Scan(&bare); err != nil {
		return false, fmt.Errorf("namespaces complete: %w", err)
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE feed_state SET namespaces_seq = ?, namespaces_bare = ? WHERE id = 1`,
		seq, bare); err != nil {
		return false, fmt.Errorf("namespaces complete: %w", err)
	}
	return true, nil
}

// namespacesComplete says whether every named namespace has had a row
// since the last change (MarkNamespacesComplete), whether some name gave
// none then, and the change number of the last mark (-1: none).
func namespacesComplete(ctx context.Context, q rowQuery) (complete, bare bool, mark int64, err error) {
	if err := q(ctx, `SELECT seq = namespaces_seq, namespaces_bare, namespaces_seq FROM feed_state WHERE id = 1`).Scan(
		&complete, &bare, &mark); err != nil {
		return false, false, 0, fmt.Errorf("namespaces complete: %w", err)
	}
	return complete, bare, mark, nil
}

// unknownServers returns the servers whose namespace is unknown while
// namespacesComplete: those named in a namespace never checked
// (namedServers), and when some name gives none, the listed cards so named
// (a covering read of cards_name), their endpoints, and the endpoints of
// Registry entries so named. common when more than most.
func (db *DB) unknownServers(ctx context.Context, bare bool, most int) ([]SiteKey, bool, error) {
	keys, common, err := db.namedServers(ctx, "", most)
	if err != nil || common || !bare {
		return keys, common, err
	}
	strpos := db.dialect.strpos
	cards, err := collect(ctx, db.sql, scanString, fmt.Sprintf(`SELECT c.key FROM cards c WHERE %s(c.name, '/') <= 1
		AND EXISTS (SELECT 1 FROM listings l WHERE l.card_key = c.key AND l.active = TRUE) LIMIT ?`, strpos), most+1)
	if err != nil {
		return nil, false, fmt.Errorf("site facet: %w", err)
	}
	if len(keys)+len(cards) > most {
		return nil, true, nil
	}
	ends, err := db.endpointsOfCards(ctx, cards, most-len(keys)-len(cards))
	if err != nil {
		return nil, false, err
	}
	for _, k := range cards {
		keys = append(keys, SiteKey{Kind: KindCard, Subject: k})
	}
	keys = append(keys, ends...)
	if len(keys) > most {
		return nil, true, nil
	}
	reg, err := collect(ctx, db.sql, scanString, fmt.Sprintf(`SELECT DISTINCT url_norm FROM registry_remotes
		WHERE %s(name, '/') <= 1 LIMIT ?`, strpos), most+1-len(keys))
	if err != nil {
		return nil, false, fmt.Errorf("site facet: %w", err)
	}
	for _, e := range reg {
		keys = append(keys, SiteKey{Kind: KindEndpoint, Subject: e})
	}
	return keys, len(keys) > most, nil
}
