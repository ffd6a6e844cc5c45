// Package category files a server under one of a directory's categories by the
// rules directories publish: from the server's own name and description first,
// and only when those match none, from its tool names. It is pure: the caller
// brings the server's text and tool names, and (for the tool rule) the tool
// sets so many servers list that they say nothing about any one of them.
//
// Rule 1, name and description (Source "name" when the winning category
// matched in the name or title, "description" otherwise). The name, title
// and description are split into words (see keywords.txt) and matched
// against each category's keywords.
// A category scores the distinct keywords it matched. When several categories
// match, the one with the most distinct keywords in the name and title wins;
// then the one with the most in all three; then the one matched earliest
// (name before title before description; no two categories match at the same
// word). So a name that says "flights" beats a description that mentions
// payments and banks, and every input has exactly one answer.
//
// Rule 2, tool names, only when rule 1 matched nothing. A server whose whole
// tool set is one of the common sets (listed identically by
// CommonToolSetServers or more servers: gateways, templates) gets no category
// from its tools. Otherwise each distinct tool name is split into words
// (snake_case, camelCase, kebab-case, dots), glued generic words are peeled off
// ("getflights" is get flights), and the tool name refers to every category one
// of its keywords names; generic words (search, get, list, …) are never
// keywords, so they count for nothing. A category wins when at least
// MinToolNames tool names refer to it, that is at least twice as many as refer
// to any other category, and at least a quarter of all the server's tools.
package category

import (
	"slices"
	"strings"
)

// ID is a category's stable machine id, as stored and as used in filters.
type ID string

// The categories (keywords.txt holds their display names and keywords, in this
// order; a test keeps both in step).
const (
	Travel        ID = "travel"
	FoodDelivery  ID = "food_delivery"
	RealEstate    ID = "real_estate"
	Health        ID = "health"
	MapsTransport ID = "maps_transport"
	Finance       ID = "finance"
	Shopping      ID = "shopping"
	Media         ID = "media"
)

// Category is a category id with the name people read.
type Category struct {
	ID   ID     `json:"id"`
	Name string `json:"name"`
}

// Source says which rule gave the category.
type Source string

const (
	// FromName: rule 1, and the winning category matched in the name or
	// title.
	FromName Source = "name"
	// FromDescription: rule 1, from the description alone.
	FromDescription Source = "description"
	// FromTools: rule 2, from tool names.
	FromTools Source = "tools"
)

// Reason says why a server got no category (Result.Reason). The tool rule's
// reasons are checked in this order, so the reason is the first test that
// failed.
type Reason string

const (
	NoTools       Reason = "no_tools"        // no keyword in name or description, and no tool names
	CommonToolSet Reason = "common_tool_set" // the tool set is one many servers list identically
	NoTopic       Reason = "no_topic"        // no tool name refers to any category
	TooFewTools   Reason = "too_few_tools"   // the leading category has fewer than MinToolNames tool names
	NotDominant   Reason = "not_dominant"    // the leader has fewer than twice the runner-up's tool names
	TooSmallShare Reason = "too_small_share" // the leader's tool names are under a quarter of all tools
)

// Thresholds of the tool rule, as the directories publish them.
const (
	// MinToolNames tool names must refer to the winning category.
	MinToolNames = 3
	// CommonToolSetServers: a tool set listed identically by this many
	// servers or more is dropped before counting.
	CommonToolSetServers = 20
)

// Server is what the rules read about one server.
type Server struct {
	Name        string
	Title       string
	Description string
	// ToolNames as the server listed them (order does not matter, duplicates
	// count once).
	ToolNames []string
	// ToolCount is how many tools the server reported, when only some names
	// were kept (a probe keeps at most 50). The quarter is taken of the larger
	// of ToolCount and the number of distinct names.
	ToolCount int
}

// Result is a server's category and how it was found. Category and Source are
// empty when no rule matched, and Reason says why.
type Result struct {
	Category ID     `json:"category,omitempty"`
	Source   Source `json:"source,omitempty"`
	// Evidence is what decided: the category's keywords found in the name
	// and description (rule 1), or the tool names that refer to it (rule 2).
	Evidence []string `json:"evidence,omitempty"`
	Reason   Reason   `json:"reason,omitempty"`
}

// Categorize applies rule 1, then rule 2. common holds the fingerprints of
// the tool sets to drop (see ToolSetCounter); nil drops none.
func (r *Rules) Categorize(s Server, common CommonSets) Result {
	if res, ok := r.fromText(s); ok {
		return res
	}
	return r.fromTools(s, common)
}

// textScore is one category's standing under rule 1.
type textScore struct {
	keywords []string // distinct keywords matched, in order of first match
	inName   int      // how many of them were first matched in name or title
	first    int      // word position of the first match
}

func (r *Rules) fromText(s Server) (Result, bool) {
	scores := make([]textScore, len(r.cats))
	var words []string
	pos := 0
	for part, text := range [...]string{s.Name, s.Title, s.Description} {
		words = appendWords(words[:0], text)
		r.scan(words, func(e *entry, at int) {
			sc := &scores[e.cat]
			if slices.Contains(sc.keywords, e.text) {
				return
			}
			if len(sc.keywords) == 0 {
				sc.first = pos + at
			}
			sc.keywords = append(sc.keywords, e.text)
			if part < 2 {
				sc.inName++
			}
		})
		pos += len(words)
	}
	best := -1
	for i := range scores {
		if len(scores[i].keywords) > 0 && (best < 0 || scores[i].beats(&scores[best])) {
			best = i
		}
	}
	if best < 0 {
		return Result{}, false
	}
	src := FromDescription
	if scores[best].inName > 0 {
		src = FromName
	}
	return Result{Category: r.cats[best].ID, Source: src, Evidence: scores[best].keywords}, true
}

// beats reports whether a ranks above b (both matched something). Their first
// matches are never at the same word, since a word is used up by one keyword.
func (a *textScore) beats(b *textScore) bool {
	switch {
	case a.inName != b.inName:
		return a.inName > b.inName
	case len(a.keywords) != len(b.keywords):
		return len(a.keywords) > len(b.keywords)
	default:
		return a.first < b.first
	}
}

func (r *Rules) fromTools(s Server, common CommonSets) Result {
	if len(s.ToolNames) == 0 {
		return Result{Reason: NoTools}
	}
	if common.Has(FingerprintOf(s.ToolNames)) {
		return Result{Reason: CommonToolSet}
	}
	counts := make([]int, len(r.cats))
	refs := make([][]string, len(r.cats))
	refers := make([]bool, len(r.cats))
	seen := make(map[string]bool, len(s.ToolNames))
	var words, raw []string
	for _, name := range s.ToolNames {
		if seen[name] {
			continue
		}
		seen[name] = true
		clear(refers)
		words, raw = r.toolWords(words[:0], raw, name)
		r.scan(words, func(e *entry, _ int) { refers[e.cat] = true })
		for c, ok := range refers {
			if ok {
				counts[c]++
				refs[c] = append(refs[c], name)
			}
		}
	}
	lead, second := -1, 0
	for c, n := range counts {
		switch {
		case n == 0:
		case lead < 0 || n > counts[lead]:
			if lead >= 0 {
				second = counts[lead]
			}
			lead = c
		case n > second:
			second = n
		}
	}
	total := max(s.ToolCount, len(seen))
	switch {
	case lead < 0:
		return Result{Reason: NoTopic}
	case counts[lead] < MinToolNames:
		return Result{Reason: TooFewTools}
	case counts[lead] < 2*second:
		return Result{Reason: NotDominant}
	case 4*counts[lead] < total:
		return Result{Reason: TooSmallShare}
	}
	return Result{Category: r.cats[lead].ID, Source: FromTools, Evidence: refs[lead]}
}

// scan calls visit for every keyword in words. At each word the longest
// keyword or ignored phrase starting there wins and uses up its words; ignored
// phrases are not reported.
func (r *Rules) scan(words []string, visit func(e *entry, pos int)) {
	var buf [4]string
	for i := 0; i < len(words); {
		best := -1
		for _, b := range bases(words[i], &buf) {
			for _, ei := range r.byFirst[b] {
				e := &r.entries[ei]
				if (best < 0 || len(e.words) > len(r.entries[best].words)) && matchRest(e.words[1:], words[i+1:]) {
					best = ei
				}
			}
		}
		if best < 0 {
			i++
			continue
		}
		if e := &r.entries[best]; e.cat != ignored {
			visit(e, i)
		}
		i += len(r.entries[best].words)
	}
}

// matchRest reports whether words begins with the keyword words kw.
func matchRest(kw, words []string) bool {
	if len(words) < len(kw) {
		return false
	}
	var buf [4]string
	for j, k := range kw {
		if !slices.Contains(bases(words[j], &buf), k) {
			return false
		}
	}
	return true
}

// toolWords appends the words of a tool name to dst, with generic words glued
// to a keyword peeled off ("getflights" → get flights, "hotelsearch" → hotel
// search): tool names are often written without separators. raw is scratch
// space, returned for reuse.
func (r *Rules) toolWords(dst, raw []string, name string) (words, scratch []string) {
	raw = appendWords(raw[:0], name)
	for _, w := range raw {
		dst = r.peelInto(dst, w, maxPeels)
	}
	return dst, raw
}

// maxPeels bounds how many generic words are peeled off one glued word.
const maxPeels = 3

// peelInto appends w to dst, split into generic words and one keyword word
// when it is glued from them; otherwise whole.
func (r *Rules) peelInto(dst []string, w string, depth int) []string {
	if parts, ok := r.peelParts(w, depth); ok {
		return append(dst, parts...)
	}
	return append(dst, w)
}

// peelParts splits w into generic words around a keyword word, if it can.
func (r *Rules) peelParts(w string, depth int) ([]string, bool) {
	if r.isKnown(w) {
		return []string{w}, true
	}
	if depth == 0 || r.generic[w] {
		return nil, false
	}
	for _, g := range r.peel {
		if len(w)-len(g) < minPeel {
			continue
		}
		if rest, ok := strings.CutPrefix(w, g); ok {
			if parts, ok := r.peelParts(rest, depth-1); ok {
				return append([]string{g}, parts...), true
			}
		}
		if rest, ok := strings.CutSuffix(w, g); ok {
			if parts, ok := r.peelParts(rest, depth-1); ok {
				return append(parts, g), true
			}
		}
	}
	return nil, false
}

// isKnown reports whether w (or its singular) is a word of some keyword.
func (r *Rules) isKnown(w string) bool {
	var buf [4]string
	for _, b := range bases(w, &buf) {
		if r.known[b] {
			return true
		}
	}
	return false
}
