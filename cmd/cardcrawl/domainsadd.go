package main

import (
	"context"
	"iter"

	"github.com/cardcrawl/cardcrawl/discover"
)

// addBatch is how many names one transaction of `domains add` writes.
const addBatch = 1000

// runDomainsAdd is `domains add`: put names on the frontier for workers.
func runDomainsAdd(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "domains add", "[--domains FILE|-] [DOMAIN...]", joinLines(
		"Add domains to the frontier as pending, for 'cardcrawl worker' to crawl. Known domains are left",
		"as they are. The list streams (a million names in constant memory), read as crawl reads it:",
		"one per line, '#' comments, anything after a space, tab or comma ignored; lines that are not",
		"domain names are counted and skipped."))
	var (
		db     dbFlags
		lf     logFlags
		file   string
		asJSON bool
	)
	db.register(fs)
	lf.register(fs)
	fs.StringVar(&file, "domains", "", "read domains from `FILE`, one per line ('-' for stdin)")
	fs.BoolVar(&asJSON, "json", false, "print the counts as JSON")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	list, closeList, err := domainInput(e, "domains add", pos, file)
	if err != nil {
		return err
	}
	defer closeList()
	log := lf.logger(e)
	st, err := db.open(ctx, log)
	if err != nil {
		return err
	}
	defer st.Close()
	var res struct {
		Read    int      `json:"read"`
		Added   int      `json:"added"`
		Known   int      `json:"known"`
		Invalid int      `json:"invalid"`
		Example []string `json:"invalidExamples,omitempty"`
	}
	batch := make([]string, 0, addBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		n, err := st.AddDomains(ctx, batch)
		if err != nil {
			return err
		}
		res.Added += n
		res.Known += len(batch) - n
		batch = batch[:0]
		return nil
	}
	var readErr error
	for d, err := range list {
		if err != nil {
			readErr = err
			break
		}
		res.Read++
		n, err := discover.NormalizeDomain(d)
		if err != nil {
			res.Invalid++
			if len(res.Example) < 10 {
				res.Example = append(res.Example, d)
			}
			continue
		}
		if batch = append(batch, n); len(batch) == addBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if asJSON {
		if err := writeJSON(e.stdout, res); err != nil {
			return err
		}
	} else {
		out := newTextOut(e.stdout)
		out.printf("%d read: %d added, %d already known, %d not domain names\n", res.Read, res.Added, res.Known, res.Invalid)
		if err := out.flush(); err != nil {
			return err
		}
	}
	if readErr != nil {
		return usagef("--domains %s: %v (the names before it were added)", file, readErr)
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// domainInput is the domains a command was given: the names on the command
// line, then those of --domains FILE ('-': stdin), read as they are needed.
// Names typed on the command line are the user's to fix (exit 2); bad lines
// in a file are data, counted by the caller.
func domainInput(e *env, cmd string, pos []string, file string) (iter.Seq2[string, error], func(), error) {
	if len(pos) == 0 && file == "" {
		return nil, nil, usagef("%s: no domains given (name some, or use --domains FILE)", cmd)
	}
	for _, d := range pos {
		if _, err := discover.NormalizeDomain(d); err != nil {
			return nil, nil, usagef("%s: %v", cmd, err)
		}
	}
	list := discover.Names(pos...)
	if file == "" {
		return list, func() {}, nil
	}
	f, closeList, err := openDomainsFile(e, file)
	if err != nil {
		return nil, nil, err
	}
	return concat(list, f), closeList, nil
}
