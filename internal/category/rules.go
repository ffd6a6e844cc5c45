package category

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
)

//go:embed keywords.txt
var keywordsTxt []byte

// Rules are the parsed keyword file: the categories in file order, each with
// its keywords, the generic words of tool names and the ignored phrases. Build
// them with Load; they are read-only and safe for concurrent use.
type Rules struct {
	cats    []Category
	byID    map[ID]int
	entries []entry          // every keyword and ignored phrase, in file order
	byFirst map[string][]int // first word of an entry → indexes into entries
	generic map[string]bool  // generic words of tool names
	known   map[string]bool  // every word of every keyword: what peeling may reveal
	peel    []string         // generic words long enough to peel off glued tool words
	version string           // hash of the keyword file
}

// entry is one keyword (cat ≥ 0) or one ignored phrase (cat == ignored).
type entry struct {
	text  string   // as written, for evidence
	words []string // text split into words
	cat   int      // index into Rules.cats, or ignored
}

const ignored = -1

// Load returns the rules of the embedded keyword file, parsed on first use.
var Load = sync.OnceValues(func() (*Rules, error) { return Parse(keywordsTxt) })

// Parse reads a keyword file (the format is described at the top of
// keywords.txt). It checks the shape of the file; whether the words are well
// chosen (lower-case, in one category only, not generic) is checked by the
// package's tests, which run on the embedded file.
func Parse(data []byte) (*Rules, error) {
	r := &Rules{
		byID:    map[ID]int{},
		byFirst: map[string][]int{},
		generic: map[string]bool{},
		known:   map[string]bool{},
	}
	sum := sha256.Sum256(data)
	r.version = hex.EncodeToString(sum[:8])
	const (
		none = iota
		inCategory
		inGeneric
		inIgnore
	)
	section, seenGeneric, seenIgnore := none, false, false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line, _, _ := strings.Cut(sc.Text(), "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			head, name, ok := strings.Cut(line[1:], "]")
			if !ok {
				return nil, fmt.Errorf("line %d: %q: a section header is [id] followed by a display name", n, line)
			}
			name = strings.TrimSpace(name)
			switch head {
			case "generic", "ignore":
				if name != "" {
					return nil, fmt.Errorf("line %d: [%s] takes no display name", n, head)
				}
				seen := &seenGeneric
				section = inGeneric
				if head == "ignore" {
					seen, section = &seenIgnore, inIgnore
				}
				if *seen {
					return nil, fmt.Errorf("line %d: second [%s] section", n, head)
				}
				*seen = true
			default:
				if head == "" || name == "" {
					return nil, fmt.Errorf("line %d: %q: a category header is [id] Display name", n, line)
				}
				if _, dup := r.byID[ID(head)]; dup {
					return nil, fmt.Errorf("line %d: category %q defined twice", n, head)
				}
				r.byID[ID(head)] = len(r.cats)
				r.cats = append(r.cats, Category{ID: ID(head), Name: name})
				section = inCategory
			}
			continue
		}
		// A list may end a line with a comma and go on below.
		for _, item := range strings.Split(strings.TrimSuffix(line, ","), ",") {
			item = strings.Join(strings.Fields(item), " ")
			if item == "" {
				return nil, fmt.Errorf("line %d: empty item in %q", n, line)
			}
			switch section {
			case none:
				return nil, fmt.Errorf("line %d: %q comes before any [section]", n, item)
			case inGeneric:
				if strings.Contains(item, " ") {
					return nil, fmt.Errorf("line %d: generic word %q is more than one word", n, item)
				}
				if r.generic[item] {
					return nil, fmt.Errorf("line %d: generic word %q listed twice", n, item)
				}
				r.generic[item] = true
			case inIgnore:
				r.add(item, ignored)
			case inCategory:
				r.add(item, len(r.cats)-1)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read keyword file: %w", err)
	}
	if len(r.cats) == 0 {
		return nil, fmt.Errorf("keyword file defines no category")
	}
	for g := range r.generic {
		if len(g) >= minPeel {
			r.peel = append(r.peel, g)
		}
	}
	// Longest first, so "update" is peeled before "up" could be, and the
	// result never depends on map order.
	slices.SortFunc(r.peel, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b))
	})
	return r, nil
}

// minPeel is the shortest generic word peeled off a glued tool word: shorter
// ones ("to", "on", "by") start too many real words.
const minPeel = 3

func (r *Rules) add(text string, cat int) {
	e := entry{text: text, words: strings.Fields(text), cat: cat}
	r.byFirst[e.words[0]] = append(r.byFirst[e.words[0]], len(r.entries))
	r.entries = append(r.entries, e)
	if cat != ignored {
		for _, w := range e.words {
			r.known[w] = true
		}
	}
}

// Categories returns the categories in the file's order.
func (r *Rules) Categories() []Category { return append([]Category(nil), r.cats...) }

// Name returns the display name of a category id, or "" for an unknown id.
func (r *Rules) Name(id ID) string {
	if i, ok := r.byID[id]; ok {
		return r.cats[i].Name
	}
	return ""
}

// Version identifies the keyword file the rules were parsed from, so stored
// categories can be recomputed when the words change.
func (r *Rules) Version() string { return r.version }
