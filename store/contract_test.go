package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store/storetest"
)

// TestContract runs the contract every store passes against SQLite.
func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) storetest.Store {
		return open(t, filepath.Join(t.TempDir(), "contract.db"), now)
	})
}
