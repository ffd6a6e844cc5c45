package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "migrate", summary: "copy a SQLite database, history included, into PostgreSQL", run: runMigrate})
}

func runMigrate(ctx context.Context, e *env, args []string) error {
	flags := newFlags(e, "migrate", "--from FILE.db --to postgres://…", joinLines(
		"Copy every table of a cardcrawl SQLite database into an empty PostgreSQL database: the frontier,",
		"every observation and stored document, runs, probes and probe decisions, every Registry version,",
		"reconciliation and namespaces, not only the current state. The destination is migrated first",
		"and must hold no rows; the copy is one transaction there, so an interrupted copy leaves it empty",
		"and can be run again. Rows stream in batches: memory does not grow with the database. The source",
		"is opened read-only and never changed (upgrade it first with any write command if it is older)."))
	var (
		from, to string
		lf       logFlags
		asJSON   bool
	)
	flags.StringVar(&from, "from", "", "the SQLite database `file` to copy")
	flags.StringVar(&to, "to", "", "the PostgreSQL `URL` to copy into (postgres://…)")
	flags.BoolVar(&asJSON, "json", false, "print the rows copied per table as JSON")
	lf.register(flags)
	if err := parseNoArgs(flags, args); err != nil {
		return err
	}
	switch {
	case from == "" || to == "":
		return usagef("migrate: --from and --to are both required")
	case store.IsPostgresURL(from):
		return usagef("migrate: --from must be a SQLite file")
	case !store.IsPostgresURL(to):
		return usagef("migrate: --to must be a postgres:// or postgresql:// URL")
	}
	if _, err := os.Stat(from); errors.Is(err, fs.ErrNotExist) {
		return usagef("migrate: no database at %s", from)
	}
	log := lf.logger(e)
	src, err := openStore(ctx, from, store.Options{Logger: log, ReadOnly: true})
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openStore(ctx, to, store.Options{Logger: log})
	if err != nil {
		return err
	}
	defer dst.Close()
	var progress func(string, int)
	drawn := false
	if e.stderrTTY {
		progress = func(table string, rows int) {
			fmt.Fprintf(e.stderr, "\r\033[K%s: %d rows", table, rows)
			drawn = true
		}
	}
	stats, err := src.CopyTo(ctx, dst, progress)
	if drawn {
		fmt.Fprintln(e.stderr)
	}
	if errors.Is(err, store.ErrNotEmpty) {
		return usagef("migrate: %v", err)
	}
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, stats)
	}
	out := newTextOut(e.stdout)
	out.table("TABLE", "ROWS")
	for _, t := range slices.Sorted(maps.Keys(stats)) {
		out.row(t, stats[t])
	}
	return out.flush()
}
