package store_test

import (
	"path/filepath"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// eachDialect runs a behaviour test once per database the store supports:
// a fresh SQLite file, and a fresh PostgreSQL database (skipped, with a
// message, where no PostgreSQL server can be had; CI requires one).
func eachDialect(t *testing.T, test func(t *testing.T, dsn string)) {
	t.Helper()
	// Each test has its own databases; PostgreSQL's per-test database
	// creation is what takes the time, so the tests overlap.
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "x.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgtest.NewDB(t)) })
}
