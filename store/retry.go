package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// maxTxAttempts bounds how often retryTx runs a transaction.
const maxTxAttempts = 5

// retryTx runs tx again when PostgreSQL aborted it to break a deadlock or
// a serialization conflict: with many workers writing shared rows (a
// remote that several domains declare, a card two catalogs list) in
// different orders, that is a normal outcome, not a failed run. SQLite
// has one writer and never returns these.
func (db *DB) retryTx(ctx context.Context, tx func() error) error {
	for attempt := 1; ; attempt++ {
		err := tx()
		if err == nil || attempt == maxTxAttempts || !retryable(err) {
			return err
		}
		db.log.Debug("transaction aborted by the database; retrying", "attempt", attempt, "err", err)
		// A short random pause lets the other transaction finish first.
		wait := time.Duration(attempt) * time.Duration(5+rand.IntN(20)) * time.Millisecond
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func retryable(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40P01" || pg.Code == "40001")
}
