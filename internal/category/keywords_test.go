package category

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func mustLoad(t testing.TB) *Rules {
	t.Helper()
	r, err := Load()
	if err != nil {
		t.Fatalf("embedded keywords.txt: %v", err)
	}
	return r
}

// The Go constants and the file agree on the categories and their order.
func TestCategoriesMatchConstants(t *testing.T) {
	r := mustLoad(t)
	want := []Category{
		{Travel, "Travel"},
		{FoodDelivery, "Food & delivery"},
		{RealEstate, "Real estate"},
		{Health, "Health"},
		{MapsTransport, "Maps & transport"},
		{Finance, "Finance"},
		{Shopping, "Shopping"},
		{Media, "Media"},
	}
	if diff := cmp.Diff(want, r.Categories()); diff != "" {
		t.Errorf("categories (-want +got):\n%s", diff)
	}
	if got := r.Name(MapsTransport); got != "Maps & transport" {
		t.Errorf("Name(maps_transport) = %q", got)
	}
	if got := r.Name("weather"); got != "" {
		t.Errorf("Name(weather) = %q, want empty", got)
	}
}

// forms are the words a keyword word matches at run time (see bases).
func forms(w string) []string {
	out := []string{w, w + "s", w + "es"}
	if strings.HasSuffix(w, "y") {
		out = append(out, strings.TrimSuffix(w, "y")+"ies")
	}
	return out
}

func overlaps(a, b string) bool {
	fa := forms(a)
	return slices.ContainsFunc(forms(b), func(f string) bool { return slices.Contains(fa, f) })
}

// phrasesOverlap reports whether some run of words matches both phrases.
func phrasesOverlap(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !overlaps(a[i], b[i]) {
			return false
		}
	}
	return true
}

func catName(r *Rules, e entry) string {
	if e.cat == ignored {
		return "[ignore]"
	}
	return string(r.cats[e.cat].ID)
}

// The embedded file's words are well chosen: what the file format cannot
// say, this test does.
func TestKeywordFileIsConsistent(t *testing.T) {
	r := mustLoad(t)
	perCat := make([]int, len(r.cats))
	ignores := 0
	for _, e := range r.entries {
		if e.cat == ignored {
			ignores++
		} else {
			perCat[e.cat]++
		}
		// Written the way the word splitter reads text: lower-case letters
		// and digits, words of two or more, single spaces.
		if got := strings.Join(appendWords(nil, e.text), " "); got != e.text {
			t.Errorf("%s %q reads as %q: write it lower-case, letters and digits only", catName(r, e), e.text, got)
		}
		for _, w := range e.words {
			if len(w) < 2 {
				t.Errorf("%s %q: one-letter word %q", catName(r, e), e.text, w)
			}
		}
	}
	for i, n := range perCat {
		if n == 0 {
			t.Errorf("category %s has no keywords", r.cats[i].ID)
		}
	}
	if ignores == 0 || len(r.generic) == 0 {
		t.Errorf("ignored phrases: %d, generic words: %d; want both", ignores, len(r.generic))
	}

	// No run of words matches two entries: a keyword belongs to one category
	// (phrases may still contain a word that is a keyword elsewhere: the
	// longer match wins, as keywords.txt documents).
	for i, a := range r.entries {
		for _, b := range r.entries[i+1:] {
			if phrasesOverlap(a.words, b.words) {
				t.Errorf("%s %q and %s %q match the same words", catName(r, a), a.text, catName(r, b), b.text)
			}
		}
	}

	// Keywords contain no generic word (in any of the keyword's forms): a
	// generic keyword would make every search tool a topic, and generic words
	// peeled off a glued tool word must never be what it refers to.
	for _, e := range r.entries {
		if e.cat == ignored {
			continue
		}
		for _, w := range e.words {
			for g := range r.generic {
				if slices.Contains(forms(w), g) {
					t.Errorf("keyword %s %q: %q is a generic word", catName(r, e), e.text, g)
				}
			}
		}
	}

	// An ignored phrase hides a keyword, or it would do nothing.
	for _, e := range r.entries {
		if e.cat != ignored {
			continue
		}
		if len(e.words) < 2 {
			t.Errorf("ignored %q is one word: leave it out of the keywords instead", e.text)
		}
		if !slices.ContainsFunc(e.words, r.isKnown) {
			t.Errorf("ignored %q contains no keyword: it hides nothing", e.text)
		}
	}
	for g := range r.generic {
		if got := strings.Join(appendWords(nil, g), " "); got != g {
			t.Errorf("generic word %q reads as %q", g, got)
		}
	}
}

// forms above is what bases inverts, so the overlap checks speak for the
// matcher.
func TestFormsAndBasesAgree(t *testing.T) {
	r := mustLoad(t)
	var buf [4]string
	for _, e := range r.entries {
		for _, w := range e.words {
			for _, f := range forms(w) {
				if !slices.Contains(bases(f, &buf), w) {
					t.Errorf("form %q of %q: bases %q miss it", f, w, bases(f, &buf))
				}
				for _, b := range bases(f, &buf) {
					if !slices.Contains(forms(b), f) {
						t.Errorf("%q has base %q, but is not one of its forms", f, b)
					}
				}
			}
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"no category", "[generic]\nget\n", "defines no category"},
		{"word before section", "flight\n[travel] Travel\n", "before any [section]"},
		{"no display name", "[travel]\nflight\n", "[id] Display name"},
		{"unclosed header", "[travel Travel\n", "section header"},
		{"category twice", "[travel] Travel\nflight\n[travel] Trips\n", "defined twice"},
		{"empty item", "[travel] Travel\nflight,, hotel\n", "empty item"},
		{"generic phrase", "[travel] Travel\nflight\n[generic]\nget all\n", "more than one word"},
		{"generic twice", "[travel] Travel\nflight\n[generic]\nget, get\n", "listed twice"},
		{"second generic section", "[travel] Travel\nflight\n[generic]\nget\n[generic]\nlist\n", "second [generic]"},
		{"named ignore", "[travel] Travel\nflight\n[ignore] Things\n", "takes no display name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.file))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	r, err := Parse([]byte(`# comment
[travel] Travel   # trailing comment
flight, car   rental,
hotel
[generic]
get
[ignore]
round trip
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range r.entries {
		got = append(got, catName(r, e)+":"+e.text)
	}
	want := []string{"travel:flight", "travel:car rental", "travel:hotel", "[ignore]:round trip"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if !r.generic["get"] || len(r.generic) != 1 {
		t.Errorf("generic = %v, want get", r.generic)
	}
}
