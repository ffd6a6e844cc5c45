package main

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
)

func makeDB(t *testing.T, rows ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT, at TEXT)`); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		f := strings.SplitN(r, "|", 3)
		if _, err := db.Exec(`INSERT INTO t (id, v, at) VALUES (?, ?, ?)`, f[0], f[1], f[2]); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestSameRows: ids and times aside, the same rows in any order are the
// same; a changed value is not.
func TestSameRows(t *testing.T) {
	a := makeDB(t, "1|x|2026-12-01T10:00:00.000000001Z", "2|y|")
	b := makeDB(t, "7|y|", "9|x|2026-12-01T11:30:00.5Z")
	c := makeDB(t, "1|x|2026-12-01T10:00:00Z", "2|z|")
	var out, errs strings.Builder
	if code := run(context.Background(), []string{a, b}, &out, &errs); code != 0 {
		t.Errorf("same rows: exit %d\n%s%s", code, out.String(), errs.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{a, c}, &out, &errs); code != 1 || !strings.Contains(out.String(), `v="y"`) {
		t.Errorf("a changed value: exit %d\n%s", code, out.String())
	}
	if code := run(context.Background(), []string{a}, &out, &errs); code != 2 {
		t.Errorf("one argument: exit %d, want 2", code)
	}
}
