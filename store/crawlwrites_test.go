package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCrawlWrites makes the store calls a fresh `crawl --probe never`
// makes for each domain, from 64 workers at once, on a generated web's
// shape (three domains in ten have a catalog of two cards, each card one
// remote): the validator look-ups, the in-run decision look-ups, and the
// domain's save with its fetches and decisions. One op is one domain; the
// process's CPU time (user+sys) per domain is reported as cpu-µs/domain,
// the figure the crawl's CPU target is about.
func BenchmarkCrawlWrites(b *testing.B) {
	db := openBatchTest(b)
	ctx := context.Background()
	run, err := db.StartRun(ctx, RunStart{})
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, b.N)
	for i := range names {
		names[i] = fmt.Sprintf("site%d.g%08x.example", i, uint32(i)*2654435761)
	}
	for i := 0; i < len(names); i += 500 {
		if _, err := db.Enqueue(ctx, names[i:min(i+500, len(names))], EnqueueOptions{RunID: run}); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	before := cpuTime()
	b.ResetTimer()
	b.SetParallelism(32) // × GOMAXPROCS workers
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1) - 1
			if err := crawlOne(ctx, db, run, names[i], i%10 < 3); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-before).Microseconds())/float64(b.N), "cpu-µs/domain")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// crawlOne is one domain of BenchmarkCrawlWrites.
func crawlOne(ctx context.Context, db *DB, run int64, d string, catalog bool) error {
	cat := "https://" + d + "/.well-known/ai-catalog.json"
	if _, _, err := db.LastValidators(ctx, cat); err != nil {
		return err
	}
	now := time.Now()
	r := DomainResult{Domain: d, RunID: run, Definitive: true, NextFetchAfter: now.Add(24 * time.Hour)}
	if !catalog {
		r.Outcome, r.Class, r.Reason = OutcomeNoCatalog, "http_404", "404 Not Found"
		r.Fetches = []Fetched{{Observation: Observation{RunID: run, Domain: d, Kind: "catalog", URL: cat,
			FetchedAt: now, Status: 404, Class: "http_404", Reason: "404 Not Found", Duration: time.Millisecond}}}
		return db.SaveDomain(ctx, r)
	}
	r.Outcome, r.CatalogURL = OutcomeCatalog, cat
	body := func(s string) ([]byte, string) {
		b := []byte(s + strings.Repeat(" ", 600))
		h := sha256.Sum256(b)
		return b, hex.EncodeToString(h[:])
	}
	catBody, catSHA := body(`{"specVersion":"1.0","host":"` + d + `"}`)
	r.Fetches = append(r.Fetches, Fetched{Body: catBody, Observation: Observation{RunID: run, Domain: d, Kind: "catalog",
		URL: cat, FetchedAt: now, Status: 200, ContentType: "application/json", SHA256: catSHA, Size: int64(len(catBody)),
		Duration: time.Millisecond, FinalURL: cat}})
	r.Catalogs = []CatalogRecord{{URL: cat, BaseURL: cat, SpecVersion: "1.0", SHA256: catSHA, EntryCount: 2, JudgedBy: "1"}}
	for i := range 2 {
		card := fmt.Sprintf("https://%s/mcp/%d/server-card.json", d, i)
		remote := fmt.Sprintf("https://%s/mcp/%d", d, i)
		if _, _, err := db.LastValidators(ctx, card); err != nil {
			return err
		}
		cardJSON := fmt.Sprintf(`{"name":"example.%s/server-%d","version":"1.0.0","description":"a server",`+
			`"remotes":[{"type":"streamable-http","url":%q}]}`, d, i, remote)
		cardBody, cardSHA := body(cardJSON)
		r.Fetches = append(r.Fetches, Fetched{Body: cardBody, Observation: Observation{RunID: run, Domain: d, Kind: "card",
			URL: card, FetchedAt: now, Status: 200, ContentType: "application/json", SHA256: cardSHA,
			Size: int64(len(cardBody)), Duration: time.Millisecond, FinalURL: card}})
		r.Entries = append(r.Entries, EntryRecord{CatalogURL: cat, Identifier: card, Type: "mcp-server-card", URL: card,
			ResolvedURL: card, Raw: []byte(`{"identifier":"` + card + `"}`)})
		r.Cards = append(r.Cards, CardRecord{Key: card, SourceURL: card, SHA256: cardSHA, Name: "example." + d,
			Version: "1.0.0", Description: "a server", Grade: "conformant", JSON: []byte(cardJSON), JudgedBy: "1"})
		r.Remotes = append(r.Remotes, RemoteRecord{URLNorm: remote, URL: remote, Type: "streamable-http", CardKey: card,
			JSON: []byte(`{"type":"streamable-http","url":"` + remote + `"}`)})
		r.Listings = append(r.Listings, ListingRecord{CatalogURL: cat, Identifier: card, CardKey: card, RemoteNorm: remote})
		if _, err := db.DecidedInRun(ctx, run, remote); err != nil {
			return err
		}
		r.Decisions = append(r.Decisions, ProbeDecision{RunID: run, RemoteNorm: remote, URL: remote, Decision: "skip",
			Reason: "probe_never", DeclaredBy: "card:" + card})
	}
	return db.SaveDomain(ctx, r)
}
