package store

import (
	"encoding/json"
	"fmt"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

// Findings are stored as a JSON array of finding.Finding; callers see only
// finding.List. These two helpers are the only place that knows the column's
// encoding.

// findingsText encodes findings for a findings column ("[]" when none).
func findingsText(l finding.List) (string, error) {
	if len(l) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return "", fmt.Errorf("encode findings: %w", err)
	}
	return string(b), nil
}

// findingsScan decodes a findings column into dst. A value that is not a
// findings array (never written by this package) reads as no findings
// rather than failing a whole listing.
type findingsScan struct{ dst *finding.List }

func (s findingsScan) Scan(v any) error {
	var raw []byte
	switch t := v.(type) {
	case string:
		raw = []byte(t)
	case []byte:
		raw = t
	case nil:
		*s.dst = nil
		return nil
	default:
		return fmt.Errorf("findings column holds %T", v)
	}
	var l finding.List
	if json.Unmarshal(raw, &l) != nil || len(l) == 0 {
		l = nil
	}
	*s.dst = l
	return nil
}
