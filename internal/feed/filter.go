package feed

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cardcrawl/cardcrawl/internal/category"
	"github.com/cardcrawl/cardcrawl/internal/failure"
	"github.com/cardcrawl/cardcrawl/internal/finding"
	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// NotProbed is the outcome filter's word for an endpoint never probed.
const NotProbed = "none"

// FilterParams are the feed's filters as the CLI's flags and serve's query
// parameters spell them ("" for none).
type FilterParams struct {
	Grade, Outcome string
	// Source defaults to card.
	Source string
	// Category is a category id, or "none" for the servers without one.
	Category string
	// ListingFinding is a finding code a listing of the server carries.
	ListingFinding string
}

// ListingFindingParam is the listing-finding filter's name: the CLI's
// flag (with "--") and serve's query parameter.
const ListingFindingParam = "listing-finding"

// ParseFilter checks the filters and makes them a store filter. The error
// names the parameter and the values it takes, so a caller can show it as
// is (the CLI puts "--" before it).
func ParseFilter(p FilterParams) (store.FeedFilter, error) {
	var f store.FeedFilter
	grade, outcome, source := p.Grade, p.Outcome, p.Source
	if source != "" {
		if !slices.Contains(store.FeedSources, source) {
			return f, fmt.Errorf("source must be one of %s, not %q", strings.Join(store.FeedSources, ", "), source)
		}
		f.Source = source
	}
	switch p.Category {
	case "":
	case "none":
		f.NoCategory = true
	default:
		rules, err := category.Load()
		if err != nil {
			return f, err
		}
		var ids []string
		for _, c := range rules.Categories() {
			ids = append(ids, string(c.ID))
		}
		if !slices.Contains(ids, p.Category) {
			return f, fmt.Errorf("category must be one of %s or none, not %q", strings.Join(ids, ", "), p.Category)
		}
		f.Category = p.Category
	}
	if grade != "" {
		if !slices.Contains(servercard.Grades(), servercard.Grade(grade)) {
			return f, fmt.Errorf("grade must be one of %s, not %q", Grades(), grade)
		}
		f.Grade = grade
	}
	switch {
	case outcome == NotProbed:
		f.NotProbed = true
	case outcome != "":
		if !failure.Outcome(outcome).Known() {
			return f, fmt.Errorf("outcome must be one of %s or %s, not %q", join(failure.Outcomes()), NotProbed, outcome)
		}
		f.Outcome = outcome
	}
	if err := finding.CheckCode(ListingFindingParam, p.ListingFinding); err != nil {
		return f, err
	}
	f.ListingFinding = p.ListingFinding
	return f, nil
}

// Grades lists the grade filter's values, for help text.
func Grades() string { return join(servercard.Grades()) }

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}
