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
	a, err := dump(ctx, args[0])
	if err != nil {
		fmt.Fprintln(stderr, "samerows:", err)
		return 2
	}
	b, err := dump(ctx, args[1])
	if err != nil {
		fmt.Fprintln(stderr, "samerows:", err)
		return 2
	}
	same := true
	for _, t := range union(keys(a), keys(b)) {
		onlyA, onlyB := diff(a[t], b[t])
		if len(onlyA)+len(onlyB) == 0 {
			fmt.Fprintf(stdout, "%-24s %7d rows  same\n", t, len(a[t]))
			continue
		}
		same = false
		fmt.Fprintf(stdout, "%-24s %7d / %d rows  %d only in A, %d only in B\n", t, len(a[t]), len(b[t]), len(onlyA), len(onlyB))
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

// dump reads every table of a database as sorted, masked rows.
func dump(ctx context.Context, path string) (map[string][]string, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, err
		}
		tables = append(tables, t)
	}
	rows.Close()
	out := map[string][]string{}
	for _, t := range tables {
		rs, err := tableRows(ctx, db, t)
		if err != nil {
			return nil, fmt.Errorf("%s: table %s: %w", path, t, err)
		}
		out[t] = rs
	}
	return out, nil
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

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}
