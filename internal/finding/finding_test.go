package finding_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

func TestIsCode(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{"signature_verified", true},
		{finding.CodeUTF8BOM, true},
		{"a", true},
		{strings.Repeat("a", 64), true},
		{strings.Repeat("a", 65), false},
		{"", false},
		{"_x", false},
		{"9x", false},
		{"Signature_verified", false},
		{"entry digest", false},
		{"entry-digest", false},
		{"entry%", false},
		{"naïve", false},
	} {
		if got := finding.IsCode(tc.s); got != tc.want {
			t.Errorf("IsCode(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// Bound keeps a short list as it is, and cuts a long one to
// MaxPerDocument, errors first, the last place saying how many there were.
func TestBound(t *testing.T) {
	short := finding.List{{Severity: finding.Info, Code: "a"}, {Severity: finding.Error, Code: "b"}}
	if got := finding.Bound(short); len(got) != 2 || got[0].Code != "a" {
		t.Errorf("Bound(short) = %v", got)
	}
	var long finding.List
	for i := range 3 * finding.MaxPerDocument {
		sev := []finding.Severity{finding.Info, finding.Warning, finding.Warning, finding.Info, finding.Error}[i%5]
		long.Add(sev, fmt.Sprintf("c%04d", i), "", "")
	}
	got := finding.Bound(long)
	if len(got) != finding.MaxPerDocument {
		t.Fatalf("%d findings kept, want %d", len(got), finding.MaxPerDocument)
	}
	var order []string
	for i, f := range got[:len(got)-1] {
		if want := []finding.Severity{finding.Error, finding.Warning}[min(i/(3*finding.MaxPerDocument/5), 1)]; f.Severity != want {
			t.Fatalf("finding %d is %s %s, want %s: errors first, then warnings", i, f.Severity, f.Code, want)
		}
		order = append(order, f.Code)
	}
	if !slices.IsSortedFunc(order[:3*finding.MaxPerDocument/5], strings.Compare) || !slices.IsSorted(order[3*finding.MaxPerDocument/5:]) {
		t.Errorf("each severity's findings are not in their order: %v", order)
	}
	last := got[len(got)-1]
	if last.Code != finding.CodeTruncated || last.Severity != finding.Warning || !strings.Contains(last.Message, "600 findings") {
		t.Errorf("last finding %+v, want %s counting 600", last, finding.CodeTruncated)
	}
	if !got.HasError() || long[0].Code != "c0000" {
		t.Errorf("HasError %v; the input changed: %v", got.HasError(), long[0])
	}
}
