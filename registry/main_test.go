package registry_test

import (
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/pgtest"
)

// TestMain lets BenchmarkSync20000Postgres start internal/pgtest's
// throwaway cluster; it is stopped after the run.
func TestMain(m *testing.M) { pgtest.Main(m) }
