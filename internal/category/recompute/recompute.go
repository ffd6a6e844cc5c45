// Package recompute keeps the stored categories in step with what they are
// computed from: card and Registry names and descriptions, and the tool
// names of each endpoint's latest ok probe. It streams every pass (a page of
// servers at a time), writes only the categories whose inputs changed, and
// counts the tool sets many servers list identically in SQL, so memory does
// not grow with the number of servers.
package recompute

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/cardcrawl/cardcrawl/internal/category"
	"github.com/cardcrawl/cardcrawl/store"
)

// Store is what Run reads and writes.
type Store interface {
	EachLatestOKProbe(ctx context.Context, fn func(store.ProbeTools) error) error
	SaveEndpointTools(ctx context.Context, rows []store.EndpointTools) error
	CommonToolSets(ctx context.Context, minServers int) ([]string, error)
	EachCategorySubject(ctx context.Context, fn func(store.CategorySubject) error) error
	SaveCategories(ctx context.Context, rows []store.CategoryRow) error
	PruneCategories(ctx context.Context) (int64, error)
	MarkCategoriesComplete(ctx context.Context) (bool, error)
}

// Options configure Run.
type Options struct {
	// Rules default to the embedded keyword file.
	Rules  *category.Rules
	Logger *slog.Logger
}

// Result counts what a run did.
type Result struct {
	ToolSets   int `json:"toolSets"`   // endpoints whose tool set was (re)read from a new ok probe
	CommonSets int `json:"commonSets"` // tool sets dropped as common
	Servers    int `json:"servers"`    // servers looked at
	Changed    int `json:"changed"`    // categories written
	Removed    int `json:"removed"`    // categories of servers no longer listed
}

// batch is how many rows are written per transaction.
const batch = 500

// Run brings every stored category up to date.
func Run(ctx context.Context, st Store, opts Options) (Result, error) {
	var res Result
	rules := opts.Rules
	if rules == nil {
		var err error
		if rules, err = category.Load(); err != nil {
			return res, fmt.Errorf("category rules: %w", err)
		}
	}
	if err := toolSets(ctx, st, &res); err != nil {
		return res, err
	}
	fps, err := st.CommonToolSets(ctx, category.CommonToolSetServers)
	if err != nil {
		return res, err
	}
	common := category.CommonSets{}
	for _, fp := range fps {
		common[category.Fingerprint(fp)] = struct{}{}
	}
	res.CommonSets = len(common)

	var pending []store.CategoryRow
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := st.SaveCategories(ctx, pending)
		res.Changed += len(pending)
		pending = pending[:0]
		return err
	}
	err = st.EachCategorySubject(ctx, func(s store.CategorySubject) error {
		res.Servers++
		srv := serverOf(s)
		fp := category.Fingerprint(s.Fingerprint)
		inputs := inputsHash(rules.Version(), srv, fp, common.Has(fp))
		if inputs == s.StoredInputs {
			return nil
		}
		r := rules.Categorize(srv, common)
		pending = append(pending, store.CategoryRow{Kind: s.Kind, Registry: s.Registry, Subject: s.Subject,
			Category: string(r.Category), Source: string(r.Source), Reason: string(r.Reason), Evidence: r.Evidence,
			Inputs: inputs})
		if len(pending) >= batch {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return res, err
	}
	n, err := st.PruneCategories(ctx)
	res.Removed = int(n)
	if err != nil {
		return res, err
	}
	// Every server the pass read has a category now; one that came during
	// it may not, and then the mark is not made.
	_, err = st.MarkCategoriesComplete(ctx)
	return res, err
}

// toolSets records the tool set of every endpoint whose latest ok probe is
// new since the last run.
func toolSets(ctx context.Context, st Store, res *Result) error {
	var pending []store.EndpointTools
	flush := func() error {
		if len(pending) == 0 {
			return nil
		}
		err := st.SaveEndpointTools(ctx, pending)
		res.ToolSets += len(pending)
		pending = pending[:0]
		return err
	}
	err := st.EachLatestOKProbe(ctx, func(p store.ProbeTools) error {
		var rec struct {
			ToolNames []string `json:"toolNames"`
			ToolCount *int     `json:"toolCount"`
		}
		// A record that does not decode has no tools to offer; it still
		// gets a row, so it is not read again until a newer probe.
		_ = json.Unmarshal([]byte(p.Result), &rec)
		t := store.EndpointTools{RemoteNorm: p.RemoteNorm, ProbeID: p.ProbeID, ToolNames: rec.ToolNames,
			Fingerprint: string(category.FingerprintOf(rec.ToolNames))}
		if rec.ToolCount != nil {
			t.ToolCount = *rec.ToolCount
		}
		pending = append(pending, t)
		if len(pending) >= batch {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// serverOf is what the rules read about one subject; a Registry entry's
// title and description are in its server.json.
func serverOf(s store.CategorySubject) category.Server {
	srv := category.Server{Name: s.Name, Title: s.Title, Description: s.Description, ToolNames: s.ToolNames,
		ToolCount: s.ToolCount}
	if s.ServerJSON != "" {
		var doc struct {
			Title       string `json:"title"`
			Description string `json:"description"`
		}
		if json.Unmarshal([]byte(s.ServerJSON), &doc) == nil {
			srv.Title, srv.Description = doc.Title, doc.Description
		}
	}
	return srv
}

// inputsHash identifies everything a category is computed from: the rules'
// version, the text, the tool set and its size, and whether the set counts
// as common now.
func inputsHash(version string, s category.Server, fp category.Fingerprint, common bool) string {
	h := sha256.New()
	for _, part := range []string{version, s.Name, s.Title, s.Description, string(fp), strconv.Itoa(s.ToolCount),
		strconv.FormatBool(common)} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
