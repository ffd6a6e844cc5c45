package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "prune", summary: "drop history older than an age that nothing reads as current", run: runPrune})
}

// minPruneAge keeps a prune away from the runs of the day: a crawl's
// decisions and fetches are read back while it runs.
const minPruneAge = 24 * time.Hour

func runPrune(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "prune", "--older-than AGE [flags]", joinLines(
		"Drop the history older than AGE that nothing reads as current: past fetches (observations), probe",
		"decisions and probes, and the stored documents no longer named. Whatever its age, each URL's latest",
		"fetch and latest fetch with a body stay (re-crawls send their validators), as do each endpoint's",
		"latest decision, latest probe, latest ok probe and the probes of its latest decision's run, and every",
		"document a kept fetch, a card or a catalog names. The feed's probe counts (probeHistory) keep",
		"counting the probes dropped. Runs, listings, cards, catalogs and Registry versions are kept.",
		"It takes the database as a crawl does (exit 3 while one runs), writes in short transactions, and",
		"can be interrupted and run again. The file does not shrink on SQLite: the space is reused."))
	var (
		db     dbFlags
		lf     logFlags
		age    ageFlag
		dry    bool
		asJSON bool
	)
	db.register(fs)
	lf.register(fs)
	fs.Var(&age, "older-than", "drop history older than this `age`: days (90d) or a Go duration (2160h); at least 1d")
	fs.BoolVar(&dry, "dry-run", false, "count what would be dropped, and change nothing")
	fs.BoolVar(&asJSON, "json", false, "print JSON (an object with the counts)")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	switch {
	case age == 0:
		return usagef("prune: --older-than is required (for example --older-than 90d)")
	case time.Duration(age) < minPruneAge:
		return usagef("prune: --older-than must be at least 1d, not %s", age.String())
	}
	log := lf.logger(e)
	st, err := openExisting(ctx, e, db, lf, false)
	if err != nil {
		return err
	}
	defer st.Close()
	lock, err := lockCrawl(ctx, st, store.CrawlAlone, "prune")
	if err != nil {
		return err
	}
	defer lock.Release()
	opts := store.PruneOptions{Before: time.Now().Add(-time.Duration(age)), DryRun: dry}
	if e.stderrTTY {
		opts.Progress = func(step string, rows int64) { fmt.Fprintf(e.stderr, "%s: %d\n", step, rows) }
	}
	guarded, lost := guardCrawl(ctx, lock, lockCheckEvery, log)
	res, err := st.Prune(guarded, opts)
	if why := lost(); why != nil {
		return why
	}
	if err != nil {
		if ctx.Err() != nil {
			return errInterrupted
		}
		return err
	}
	if asJSON {
		return writeJSON(e.stdout, struct {
			Before string `json:"before"`
			DryRun bool   `json:"dryRun"`
			store.PruneResult
		}{opts.Before.UTC().Format(time.RFC3339), dry, res})
	}
	verb := "dropped"
	if dry {
		verb = "would drop"
	}
	out := newTextOut(e.stdout)
	out.printf("history before %s: %s %d fetches, %d probe decisions, %d probes, %d documents (%s)\n",
		opts.Before.UTC().Format(time.RFC3339), verb, res.Observations, res.Decisions, res.Probes, res.Documents,
		byteSize(res.DocumentBytes))
	return out.flush()
}

// ageFlag is an age given in days (90d) or as a Go duration (2160h).
type ageFlag time.Duration

func (a *ageFlag) String() string {
	if d := time.Duration(*a); d%(24*time.Hour) == 0 && d > 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return time.Duration(*a).String()
}

func (a *ageFlag) Set(s string) error {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return fmt.Errorf("not a number of days: %q", s)
		}
		*a = ageFlag(time.Duration(days) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("not an age (90d, 2160h): %q", s)
	}
	*a = ageFlag(d)
	return nil
}

// byteSize says a size in bytes the way people read it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
