package finding_test

import (
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
