package main

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/cardcrawl/cardcrawl/store"
)

// openExisting opens a database that must already exist: a read command
// pointed at a wrong path should say so, not create an empty database.
func openExisting(ctx context.Context, e *env, db dbFlags, lf logFlags) (*store.DB, error) {
	if _, err := os.Stat(db.path); errors.Is(err, fs.ErrNotExist) {
		return nil, usagef("no database at %s (run 'cardcrawl crawl' or 'cardcrawl demo' first, or pass --db)", db.path)
	}
	return db.open(ctx, lf.logger(e))
}
