package feed_test

import (
	"context"
	"io"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/store"
)

func exportAll(ctx context.Context, db *store.DB, format string, w io.Writer) error {
	return feed.Write(ctx, w, format, db, feed.WriteOptions{})
}
