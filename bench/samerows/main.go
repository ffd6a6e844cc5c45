// Command samerows tells whether two cardcrawl SQLite databases hold the
// same rows, table by table, apart from what differs between any two runs
// of the same crawl: row ids, change numbers, process ids, durations, the
// database's random identity and timestamps. A change that makes the crawl
// cheaper must leave what it stores alone; this is how that is checked:
// crawl the same generated web with both binaries, then
//
//	go run ./bench/samerows before.db after.db
//
// It prints, for each table that differs, how many rows each side has that
// the other lacks, and the first few of them. Exit codes: 0 same rows, 1
// different rows, 2 usage or a database that cannot be read.
package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	_ "modernc.org/sqlite"
)

// ignored are the columns that differ between two runs of one crawl.
var ignored = map[string]bool{
	"id": true, "seq": true, "pid": true, "host": true, "duration_ms": true, "db_id": true,
}

// timestamp matches the RFC 3339 times the store writes, wherever they
// appear (columns, or inside JSON such as a run's summary).
var timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)

// duration matches the durations a run's summary and findings carry.
var duration = regexp.MustCompile(`"(durationMs|duration_ms)":\d+`)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) != 2 {
		fmt.Fprintln(stderr, "usage: samerows A.db B.db")
		return 2
	}
	a, err := openDB(ctx, args[0])
	if err != nil {
		fmt.Fprintln(stderr, "samerows:", err)
		return 2
	}
	defer a.db.Close()
	b, err := openDB(ctx, args[1])
	if err != nil {
		fmt.Fprintln(stderr, "samerows:", err)
		return 2
	}
	defer b.db.Close()
	same := true
	// One table of each at a time: memory is the largest table's, not the
	// databases'.
	for _, t := range union(a.tables, b.tables) {
		ra, err := a.rows(ctx, t)
		if err != nil {
			fmt.Fprintln(stderr, "samerows:", err)
			return 2
		}
		rb, err := b.rows(ctx, t)
		if err != nil {
			fmt.Fprintln(stderr, "samerows:", err)
			return 2
		}
		onlyA, onlyB := diff(ra, rb)
		if len(onlyA)+len(onlyB) == 0 {
			fmt.Fprintf(stdout, "%-24s %7d rows  same\n", t, len(ra))
			continue
		}
		same = false
		fmt.Fprintf(stdout, "%-24s %7d / %d rows  %d only in A, %d only in B\n", t, len(ra), len(rb), len(onlyA), len(onlyB))
		for _, r := range onlyA[:min(3, len(onlyA))] {
			fmt.Fprintf(stdout, "    A: %.300s\n", r)
		}
		for _, r := range onlyB[:min(3, len(onlyB))] {
			fmt.Fprintf(stdout, "    B: %.300s\n", r)
		}
	}
	if !same {
		return 1
	}
	return 0
}

// database is one side of the comparison: its handle and its tables.
type database struct {
	path   string
	db     *sql.DB
	tables []string
}

// openDB opens a database read-only and lists its tables.
func openDB(ctx context.Context, path string) (*database, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer rows.Close()
	d := &database{path: path, db: db}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			db.Close()
			return nil, err
		}
		d.tables = append(d.tables, t)
	}
	if err := rows.Err(); err != nil {
		db.Close()
		return nil, err
	}
	return d, nil
}

// rows reads a table as sorted, masked rows; none when the database has
// no such table.
func (d *database) rows(ctx context.Context, table string) ([]string, error) {
	if !slices.Contains(d.tables, table) {
		return nil, nil
	}
	rs, err := tableRows(ctx, d.db, table)
	if err != nil {
		return nil, fmt.Errorf("%s: table %s: %w", d.path, table, err)
	}
	return rs, nil
}

func tableRows(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		var b strings.Builder
		for i, c := range cols {
			if ignored[c] {
				continue
			}
			v := fmt.Sprint(vals[i])
			if bs, ok := vals[i].([]byte); ok {
				v = string(bs)
			}
			v = timestamp.ReplaceAllString(v, "<time>")
			v = duration.ReplaceAllString(v, `"$1":<n>`)
			fmt.Fprintf(&b, "%s=%q ", c, v)
		}
		out = append(out, b.String())
	}
	slices.Sort(out)
	return out, rows.Err()
}

// diff returns the rows of a missing from b and those of b missing from a,
// counting repeats (both are sorted).
func diff(a, b []string) (onlyA, onlyB []string) {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			i++
			j++
		case a[i] < b[j]:
			onlyA = append(onlyA, a[i])
			i++
		default:
			onlyB = append(onlyB, b[j])
			j++
		}
	}
	return append(onlyA, a[i:]...), append(onlyB, b[j:]...)
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
