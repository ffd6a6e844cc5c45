package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPruneKeepsFreshHistory: on the demo's database, whose history is all
// from today, a prune of what is older than a day finds nothing, says so
// as JSON, and leaves the feed as it was; ageFlag reads days and Go
// durations alike.
func TestPruneKeepsFreshHistory(t *testing.T) {
	db := filepath.Join(t.TempDir(), "demo.db")
	if code, _, stderr := run(t, "", "demo", "--db", db); code != exitOK {
		t.Fatalf("demo: exit %d: %s", code, stderr)
	}
	_, before, _ := run(t, "", "export", "--db", db, "--format", "jsonl")
	code, stdout, stderr := run(t, "", "prune", "--db", db, "--older-than", "1d", "--json")
	if code != exitOK {
		t.Fatalf("prune: exit %d: %s", code, stderr)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("prune --json: %v\n%s", err, stdout)
	}
	delete(got, "before")
	want := map[string]any{"dryRun": false, "observations": 0.0, "decisions": 0.0, "probes": 0.0, "documents": 0.0,
		"documentBytes": 0.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("prune --json (-want +got):\n%s", diff)
	}
	if _, after, _ := run(t, "", "export", "--db", db, "--format", "jsonl"); after != before {
		t.Errorf("the feed changed with a prune that dropped nothing")
	}
	for in, want := range map[string]string{"90d": "90d", "36h": "36h0m0s", "48h": "2d"} {
		var a ageFlag
		if err := a.Set(in); err != nil || a.String() != want {
			t.Errorf("age %q: %q, %v; want %q", in, a.String(), err, want)
		}
	}
}
