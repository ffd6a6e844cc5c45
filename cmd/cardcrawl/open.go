package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"

	"github.com/cardcrawl/cardcrawl/store"
)

// openExisting opens a database that must already exist: a read command
// pointed at a wrong path should say so, not create an empty database.
// Read-only, it never writes the file (no migrations, no journal switch),
// so it works on a file the user may not write.
func openExisting(ctx context.Context, e *env, db dbFlags, lf logFlags, readOnly bool) (*store.DB, error) {
	return openExistingWith(ctx, db, store.Options{Logger: lf.logger(e), ReadOnly: readOnly})
}

// openExistingWith is openExisting with the store's options spelled out
// (serve's pool of readers).
func openExistingWith(ctx context.Context, db dbFlags, opts store.Options) (*store.DB, error) {
	if _, err := os.Stat(db.path); errors.Is(err, fs.ErrNotExist) && !store.IsPostgresURL(db.path) {
		return nil, usagef("no database at %s (run 'cardcrawl crawl' or 'cardcrawl demo' first, or pass --db)", db.path)
	}
	return openStore(ctx, db.path, opts)
}

// openStore opens the database, turning a file cardcrawl will not use
// (someone else's SQLite file, a newer schema, one a read command cannot
// use before a write command upgrades it) into one line and exit 2: the
// user has to point --db elsewhere or act first.
func openStore(ctx context.Context, path string, opts store.Options) (*store.DB, error) {
	db, err := store.Open(ctx, path, opts)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, store.ErrNotCardcrawl), errors.Is(err, store.ErrNewerSchema), errors.Is(err, store.ErrNeedsMigration):
		return nil, usagef("%v", err)
	}
	return nil, err
}

// openWrite opens (creating if needed) the database for a command that
// writes it.
func openWrite(ctx context.Context, path string, log *slog.Logger) (*store.DB, error) {
	return openStore(ctx, path, store.Options{Logger: log})
}
