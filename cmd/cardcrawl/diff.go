package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/jsonstream"
	"github.com/cardcrawl/cardcrawl/internal/termsafe"
	"github.com/cardcrawl/cardcrawl/registry/reconcile"
)

func init() {
	register(&command{name: "diff", summary: "card ↔ Registry: matched pairs and their differences, card-only, registry-only", run: runDiff})
}

func runDiff(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "diff", "[flags]", joinLines(
		"Reconcile crawled Server Cards with the latest Registry entries and print the result:",
		"matched pairs (by remote URL, else server name, else namespace ↔ listing domain) with the",
		"fields that differ, then cards the Registry lacks, then Registry servers no card matched.",
		"Run 'cardcrawl registry sync' first to have Registry entries to compare with."))
	var (
		rf  readFlags
		all bool
	)
	rf.register(fs, "print JSON: {pairs, cardOnly, registryOnly}")
	fs.BoolVar(&all, "all", false, "also list matched pairs whose fields all agree")
	if err := parseNoArgs(fs, args); err != nil {
		return err
	}
	log := rf.lf.logger(e)
	st, err := rf.open(ctx, e)
	if err != nil {
		return err
	}
	defer st.Close()
	// Recomputing guarantees the answer reflects the latest crawl and sync,
	// and only reads, so diff works on a read-only database. The cards
	// stream through the matcher in key order, each giving pairs or a
	// card the Registry lacks, while the output lists every pair first:
	// both go to temporary files as they come (memory holds the Registry
	// and one card whatever the number of cards), and are printed after.
	pairs, err := newSpool[reconcile.Pair]()
	if err != nil {
		return err
	}
	defer pairs.remove()
	cardOnly, err := newSpool[reconcile.CardOnly]()
	if err != nil {
		return err
	}
	defer cardOnly.remove()
	var rest []reconcile.RegistryOnly
	same := 0
	err = reconcile.Walk(ctx, st, reconcile.Options{Logger: log}, func(ps []reconcile.Pair, only *reconcile.CardOnly) error {
		for _, p := range ps {
			if len(p.Diffs) == 0 {
				same++
			}
			if err := pairs.add(p); err != nil {
				return err
			}
		}
		if only != nil {
			return cardOnly.add(*only)
		}
		return nil
	}, func(r []reconcile.RegistryOnly) error {
		rest = r
		return nil
	})
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	if rf.asJSON {
		return writeDiffJSON(e.stdout, pairs, cardOnly, rest)
	}
	out := newTextOut(e.stdout)
	out.printf("MATCHED (%d)\n", pairs.n)
	out.table("CARD", "REGISTRY", "BASIS", "DIFFERENT FIELDS")
	err = pairs.each(func(p reconcile.Pair) error {
		if len(p.Diffs) == 0 && !all {
			return nil
		}
		fields := make([]string, 0, len(p.Diffs))
		for _, d := range p.Diffs {
			fields = append(fields, d.Field)
		}
		reg := p.Name + "@" + p.Version
		if p.Status != "" && p.Status != "active" {
			reg += " (" + p.Status + ")"
		}
		out.row(p.CardKey, reg, p.Basis, dash(truncate(strings.Join(fields, ", "), 100)))
		return nil
	})
	if err != nil {
		return err
	}
	if same > 0 && !all {
		out.printf("(%d pairs agree on every field; --all lists them)\n", same)
	}
	out.printf("\nCARD ONLY (%d)\n", cardOnly.n)
	out.table("CARD", "NAME", "LISTED BY")
	err = cardOnly.each(func(c reconcile.CardOnly) error {
		out.row(c.CardKey, dash(c.CardName), dash(strings.Join(c.Domains, " ")))
		return nil
	})
	if err != nil {
		return err
	}
	out.printf("\nREGISTRY ONLY (%d)\n", len(rest))
	out.table("NAME", "VERSION", "STATUS", "REGISTRY")
	for _, r := range rest {
		out.row(r.Name, dash(r.Version), dash(r.Status), r.Source)
	}
	return out.flush()
}

// writeDiffJSON writes what writeJSON writes of a reconcile.Result with
// these parts, the spooled ones element by element.
func writeDiffJSON(stdout io.Writer, pairs *spool[reconcile.Pair], cardOnly *spool[reconcile.CardOnly], rest []reconcile.RegistryOnly) error {
	w := termsafe.NewJSONWriter(stdout)
	member := func(prefix string, fill func(a *jsonstream.Array) error) error {
		if _, err := io.WriteString(w, prefix); err != nil {
			return err
		}
		a := jsonstream.New(w, "  ")
		if err := fill(a); err != nil {
			return err
		}
		return a.Close()
	}
	err := member("{\n  \"pairs\": ", func(a *jsonstream.Array) error { return pairs.eachRaw(a.AddRaw) })
	if err == nil {
		err = member(",\n  \"cardOnly\": ", func(a *jsonstream.Array) error { return cardOnly.eachRaw(a.AddRaw) })
	}
	if err == nil {
		err = member(",\n  \"registryOnly\": ", func(a *jsonstream.Array) error {
			for _, r := range rest {
				if err := a.Add(r); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n}\n")
	return err
}

// spool keeps a sequence of values in a temporary file, one compact JSON
// line each, to be read back in order.
type spool[T any] struct {
	f   *os.File
	w   *bufio.Writer
	enc *json.Encoder
	n   int
}

func newSpool[T any]() (*spool[T], error) {
	f, err := os.CreateTemp("", "cardcrawl-diff-*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("temporary file: %w", err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return &spool[T]{f: f, w: w, enc: enc}, nil
}

func (s *spool[T]) add(v T) error {
	s.n++
	if err := s.enc.Encode(v); err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	return nil
}

// eachRaw calls fn with each value's compact JSON, in the order added.
func (s *spool[T]) eachRaw(fn func([]byte) error) error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("temporary file: %w", err)
	}
	r := bufio.NewReader(s.f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			if err := fn(line[:len(line)-1]); err != nil {
				return err
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("temporary file: %w", err)
		}
	}
}

// each calls fn with each value, in the order added.
func (s *spool[T]) each(fn func(T) error) error {
	return s.eachRaw(func(line []byte) error {
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return fmt.Errorf("temporary file: %w", err)
		}
		return fn(v)
	})
}

func (s *spool[T]) remove() {
	s.f.Close()
	os.Remove(s.f.Name())
}
