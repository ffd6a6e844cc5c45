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
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/category"
	"github.com/cardcrawl/cardcrawl/store"
)

// Store is what Run reads and writes.
type Store interface {
	EachLatestOKProbe(ctx context.Context, fn func(store.ProbeTools) error) error
	SaveEndpointTools(ctx context.Context, rows []store.EndpointTools) error
	CommonToolSets(ctx context.Context, minServers int) ([]string, error)
	EachCategorySubject(ctx context.Context, fn func(store.CategorySubject) error) error
	EachCategorySubjectSince(ctx context.Context, seq int64, fn func(store.CategorySubject) error) error
	SaveCategories(ctx context.Context, rows []store.CategoryRow) error
	PruneCategories(ctx context.Context) (int64, error)
	PruneCategoriesSince(ctx context.Context, seq int64) (int64, error)
	MarkCategoriesComplete(ctx context.Context) (bool, error)
	CategoryMark(ctx context.Context) (mark string, seq int64, err error)
	SwapCategoryMark(ctx context.Context, old, mark string) (bool, error)
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
	// Since: the servers looked at were those written since the last
	// pass began (and the Registry's entries), not every server.
	Since bool `json:"since"`
}

// batch is how many rows are written per transaction.
const batch = 500

// Run brings every stored category up to date. A category is computed
// from a server's text, its tool set, whether that set counts as common,
// and the rules; when the last pass recorded where it began (its mark) and
// neither the rules nor the common sets changed since, the servers written
// since and the endpoints whose tool set was stored since are the only
// ones whose inputs can differ, so only they (and the Registry's entries,
// which have no feed record) are read.
func Run(ctx context.Context, st Store, opts Options) (Result, error) {
	var res Result
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	rules := opts.Rules
	if rules == nil {
		var err error
		if rules, err = category.Load(); err != nil {
			return res, fmt.Errorf("category rules: %w", err)
		}
	}
	// Read first: whatever is written from here on is past the number.
	stored, seq, err := st.CategoryMark(ctx)
	if err != nil {
		return res, err
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
	basis := markBasis(rules.Version(), fps)
	since, ok := sinceMark(stored, basis)
	res.Since = ok

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
	each := func(s store.CategorySubject) error {
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
	}
	if res.Since {
		err = st.EachCategorySubjectSince(ctx, since, each)
	} else {
		err = st.EachCategorySubject(ctx, each)
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		return res, err
	}
	var n int64
	if res.Since {
		n, err = st.PruneCategoriesSince(ctx, since)
	} else {
		n, err = st.PruneCategories(ctx)
	}
	res.Removed = int(n)
	if err != nil {
		return res, err
	}
	// Every server the pass read has a category now; one that came during
	// it may not, and then the mark is not made.
	if _, err = st.MarkCategoriesComplete(ctx); err != nil {
		return res, err
	}
	if _, err = st.SwapCategoryMark(ctx, stored, basis+strconv.FormatInt(seq, 10)); err != nil {
		return res, err
	}
	opts.Logger.Debug("categories recomputed", "servers", res.Servers, "changed", res.Changed, "removed", res.Removed,
		"since", res.Since)
	return res, nil
}

// markBasis is what a mark holds besides its change number: the rules'
// version and the common tool sets (fps, sorted), hashed.
func markBasis(version string, fps []string) string {
	h := sha256.New()
	for _, fp := range fps {
		h.Write([]byte(strconv.Itoa(len(fp)) + ":" + fp))
	}
	return "v1 " + version + " " + hex.EncodeToString(h.Sum(nil)[:16]) + " "
}

// sinceMark returns the change number a stored mark holds when it was
// made on basis; ok false when none was or it was made on another.
func sinceMark(stored, basis string) (seq int64, ok bool) {
	rest, found := strings.CutPrefix(stored, basis)
	if !found {
		return 0, false
	}
	seq, err := strconv.ParseInt(rest, 10, 64)
	return seq, err == nil
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
