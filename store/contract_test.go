package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
	"github.com/cardcrawl/cardcrawl/store/storetest"
)

// TestContract runs the contract every store passes, on SQLite and on
// PostgreSQL: a fresh database for every subtest.
func TestContract(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
			return open(t, filepath.Join(t.TempDir(), "contract.db"), now)
		})
	})
	t.Run("postgres", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
			return open(t, pgtest.NewDB(t), now)
		})
	})
}
