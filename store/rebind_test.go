package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE b = ? AND c = ?`, `SELECT a FROM t WHERE b = $1 AND c = $2`},
		{`SELECT '?', "?" FROM t WHERE x = ?`, `SELECT '?', "?" FROM t WHERE x = $1`},
		{"SELECT 1 -- why?\nFROM t WHERE x = ?", "SELECT 1 -- why?\nFROM t WHERE x = $1"},
		// Flags are integers in PostgreSQL's schema, as in SQLite's.
		{`UPDATE listings SET active = TRUE WHERE active = false`, `UPDATE listings SET active = 1 WHERE active = 0`},
		{`SELECT 'TRUE', true_count, is_false FROM t`, `SELECT 'TRUE', true_count, is_false FROM t`},
	} {
		if got := rebind(tc.in); got != tc.want {
			t.Errorf("rebind(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}
