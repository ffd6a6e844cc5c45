package main

import (
	"context"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

func init() {
	register(&command{name: "status", summary: "the frontier (due, leased, done, failing) and the workers", run: runStatus})
}

func runStatus(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "status", "[flags]", joinLines(
		"Show the frontier: how many domains are due, leased to a worker, done (fresh), failing (last",
		"crawl failed) and never crawled, when the next one comes due, and the workers seen in the last",
		"--since: alive or not (a heartbeat within its lease), which one leads, how many domains each",
		"crawled; and the leader's schedules (the Registry sync). Works on SQLite and PostgreSQL."))
	var (
		rf    readFlags
		since time.Duration
	)
	rf.register(fs, "print JSON (an object with frontier, workers and schedules)")
	fs.DurationVar(&since, "since", 24*time.Hour, "list workers whose last heartbeat is this recent")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	s, err := st.Status(ctx, time.Now().Add(-since))
	if err != nil {
		return err
	}
	if s.Workers == nil {
		s.Workers = []store.Worker{}
	}
	if s.Schedules == nil {
		s.Schedules = []store.Schedule{}
	}
	if rf.asJSON {
		return writeJSON(e.stdout, s)
	}
	out := newTextOut(e.stdout)
	f := s.Frontier
	out.printf("frontier: %d domain(s): %d due, %d leased, %d done, %d failing, %d never crawled\n",
		f.Domains, f.Due, f.Leased, f.Done, f.Failing, f.NeverCrawled)
	if f.NextDueAt != "" {
		out.printf("next due: %s\n", shortTime(f.NextDueAt))
	}
	out.printf("hosts busy or resting: %d\n", f.HostsBusy)
	switch c := s.Crawl; {
	case c.Running && c.Holder != "":
		out.printf("crawling now: %s\n", c.Holder)
	case c.Running:
		out.printf("crawling now: a crawl (it does not say who)\n")
	}
	if len(s.Workers) > 0 {
		out.table("WORKER", "STATE", "LEADER", "CRAWLED", "STARTED", "LAST HEARTBEAT")
		for _, w := range s.Workers {
			state := "dead"
			switch {
			case w.StoppedAt != "":
				state = "stopped"
			case w.Alive:
				state = "alive"
			}
			out.row(w.ID, state, w.Leader, w.Crawled, shortTime(w.StartedAt), shortTime(w.HeartbeatAt))
		}
	} else {
		out.printf("no workers in the last %s\n", since)
	}
	for _, c := range s.Schedules {
		errText := ""
		if c.LastError != "" {
			errText = "; last error: " + truncate(c.LastError, 120)
		}
		out.printf("%s: %d run(s), last started %s by %s%s\n", c.Name, c.Runs, shortTime(c.LastStartedAt), c.LastWorker, errText)
	}
	return out.flush()
}
