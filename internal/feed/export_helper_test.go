package feed_test

import (
	"context"
	"io"

	"github.com/cardcrawl/cardcrawl/internal/feed"
	"github.com/cardcrawl/cardcrawl/store"
)

func exportAll(ctx context.Context, db *store.DB, format string, w io.Writer) error {
	servers, err := db.Servers(ctx)
	if err != nil {
		return err
	}
	return feed.Write(w, format, feed.Records(servers))
}
