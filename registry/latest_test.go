package registry

import (
	"fmt"
	"testing"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// step is one event in a server's history on the Registry.
type step struct {
	op      string // publish, status (a status change), message (same status, new message), edit (admin edit)
	version string
	status  string
}

func publish(v string) step           { return step{op: "publish", version: v} }
func setStatus(v, status string) step { return step{op: "status", version: v, status: status} }
func messageOnly(v string) step       { return step{op: "message", version: v} }
func adminEdit(v string) step         { return step{op: "edit", version: v} }
func deleteVersion(v string) step     { return setStatus(v, statusDeleted) }
func reactivate(v string) step        { return setStatus(v, statusActive) }
func deprecate(v string) step         { return setStatus(v, "deprecated") }

// listing is what a sync stores after the steps, one second apart: the
// timestamps the Registry keeps for each version (publishing stamps all
// three; a status change stamps statusChangedAt and updatedAt; a change of
// message alone, or an admin edit, only updatedAt). reported is the
// version whose isLatest the Registry last sent as true.
func listing(t *testing.T, reported string, steps ...step) []store.RegistryVersion {
	t.Helper()
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 123456000, time.UTC)
	var out []store.RegistryVersion
	find := func(v string) *store.RegistryVersion {
		for i := range out {
			if out[i].Version == v {
				return &out[i]
			}
		}
		t.Fatalf("no version %q published before it is changed", v)
		return nil
	}
	for i, s := range steps {
		at := t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)
		switch s.op {
		case "publish":
			out = append(out, store.RegistryVersion{Version: s.version, Status: statusActive, PublishedAt: at, StatusChangedAt: at, UpdatedAt: at})
		case "status":
			v := find(s.version)
			v.Status, v.StatusChangedAt, v.UpdatedAt = s.status, at, at
		case "message", "edit":
			find(s.version).UpdatedAt = at
		}
	}
	for i := range out {
		out[i].ReportedLatest = out[i].Version == reported
	}
	return out
}

// TestPickLatestHistories replays histories and wants the version the
// Registry itself flags latest. The first group is what the official
// Registry v1.8.9 answered when each history was played against it (issue
// 12); the rest follow from its rules (internal/service: CompareVersions on
// publish, recalculateLatest on every status change).
func TestPickLatestHistories(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
		want  string
	}{
		// Observed on the real server.
		{"a leading v is semver", []step{publish("0.9.0"), publish("v1.0.0")}, "v1.0.0"},
		{"a leading v compares as semver", []step{publish("v2.0.0"), publish("1.5.0")}, "v2.0.0"},
		{"leading zero in a pre-release is not semver", []step{publish("1.0.0-01"), publish("0.5.0")}, "0.5.0"},
		{"underscore in a pre-release is not semver", []step{publish("1.0.0-rc_1"), publish("0.5.0")}, "0.5.0"},
		{"empty build is not semver", []step{publish("1.0.0+"), publish("0.5.0")}, "0.5.0"},
		{"empty pre-release identifier is not semver", []step{publish("1.0.0-a..b"), publish("0.5.0")}, "0.5.0"},
		{"all deleted, then a lower version: the deleted one stays latest",
			[]step{publish("0.0.1-seed"), deleteVersion("0.0.1-seed"), publish("0.0.0")}, "0.0.1-seed"},

		// Plain cases.
		{"semver, not string order", []step{publish("1.10.0"), publish("1.9.0")}, "1.10.0"},
		{"a release beats its pre-release", []step{publish("2.0.0"), publish("2.0.0-rc.1")}, "2.0.0"},
		{"numeric pre-release identifiers compare as numbers", []step{publish("2.0.0-rc.10"), publish("2.0.0-rc.9")}, "2.0.0-rc.10"},
		{"a lower version published later is not latest", []step{publish("2.0.0"), publish("1.0.0")}, "2.0.0"},
		{"semver beats a later non-semver", []step{publish("0.1.0"), publish("2024.1")}, "0.1.0"},
		{"semver beats an earlier non-semver", []step{publish("2024.1"), publish("0.1.0")}, "0.1.0"},
		{"two non-semvers: the later published", []step{publish("b"), publish("a")}, "a"},
		{"build metadata is ignored: the first stays", []step{publish("1.0.0+a"), publish("1.0.0+b")}, "1.0.0+a"},
		{"v and no v are equal: the first stays", []step{publish("1.0.0"), publish("v1.0.0")}, "1.0.0"},
		{"numbers of any length", []step{publish("1.0.99999999999999999999"), publish("1.0.9")}, "1.0.99999999999999999999"},
		{"a capital V is not semver", []step{publish("V9.0.0"), publish("0.1.0")}, "0.1.0"},
		{"two digits of a version only is not semver", []step{publish("3.0"), publish("0.1.0")}, "0.1.0"},
		{"deleting the latest elects the next", []step{publish("1.0.0"), publish("2.0.0"), deleteVersion("2.0.0")}, "1.0.0"},
		{"after a deletion a publish competes with the new latest",
			[]step{publish("1.0.0"), publish("2.0.0"), deleteVersion("2.0.0"), publish("1.5.0")}, "1.5.0"},
		{"deprecated versions can be latest", []step{publish("1.0.0"), publish("2.0.0"), deprecate("2.0.0")}, "2.0.0"},
		{"all deleted, then a higher version", []step{publish("1.0.0"), deleteVersion("1.0.0"), publish("1.1.0")}, "1.1.0"},
		{"all deleted: the highest deleted", []step{publish("1.0.0"), publish("2.0.0"), deleteVersion("1.0.0"), deleteVersion("2.0.0")}, "2.0.0"},
		{"a restored version is elected again",
			[]step{publish("1.0.0"), publish("2.0.0"), deleteVersion("2.0.0"), reactivate("2.0.0")}, "2.0.0"},
		{"a status change elects among all, deleted lower ones aside",
			[]step{publish("0.0.1-seed"), deleteVersion("0.0.1-seed"), publish("0.0.0"), deprecate("0.0.0")}, "0.0.0"},
		{"equal versions at an election: the newest", []step{publish("1.0.0+a"), publish("1.0.0+b"), deprecate("1.0.0+a")}, "1.0.0+b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PickLatest(listing(t, "", tt.steps...)); got != tt.want {
				t.Errorf("PickLatest = %q, want %q", got, tt.want)
			}
		})
	}
}

// A status call that changes only the message elects again but leaves
// only updatedAt behind, like an admin edit that does not elect. When the
// two readings differ, the flag the Registry sent decides.
func TestPickLatestUntracedElection(t *testing.T) {
	steps := []step{publish("0.0.1-seed"), deleteVersion("0.0.1-seed"), publish("0.0.0")}
	tests := []struct {
		name     string
		last     step
		reported string
		want     string
	}{
		{"message changed, the Registry flags the newer", messageOnly("0.0.0"), "0.0.0", "0.0.0"},
		{"admin edit, the Registry flags the deleted", adminEdit("0.0.0"), "0.0.1-seed", "0.0.1-seed"},
		{"no flag to go by: the traced history", adminEdit("0.0.0"), "", "0.0.1-seed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PickLatest(listing(t, tt.reported, append(steps, tt.last)...)); got != tt.want {
				t.Errorf("PickLatest = %q, want %q", got, tt.want)
			}
		})
	}
}

// Without publishing times (a dump of bare server.json) the election is
// held over all versions; the Registry's flag breaks ties it cannot.
func TestPickLatestWithoutTimes(t *testing.T) {
	tests := []struct {
		name string
		vs   []store.RegistryVersion
		want string
	}{
		{"none", nil, ""},
		{"semver", []store.RegistryVersion{{Version: "1.9.0"}, {Version: "1.10.0"}}, "1.10.0"},
		{"deleted skipped", []store.RegistryVersion{{Version: "2.0.0", Status: "deleted"}, {Version: "1.0.0", Status: "active"}}, "1.0.0"},
		{"all deleted", []store.RegistryVersion{{Version: "1.0.0", Status: "deleted"}, {Version: "2.0.0", Status: "deleted"}}, "2.0.0"},
		{"non-semvers: the reported one", []store.RegistryVersion{{Version: "a"}, {Version: "b", ReportedLatest: true}, {Version: "c"}}, "b"},
		{"one time missing", []store.RegistryVersion{{Version: "2024.1", PublishedAt: "2026-01-01T00:00:00Z"}, {Version: "0.1.0"}}, "0.1.0"},
		{"a status without its time", []store.RegistryVersion{
			{Version: "1.0.0", Status: "active", PublishedAt: "2026-01-01T00:00:00Z"},
			{Version: "2.0.0", Status: "deleted", PublishedAt: "2026-01-02T00:00:00Z"}}, "1.0.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PickLatest(tt.vs); got != tt.want {
				t.Errorf("PickLatest = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseSemver(t *testing.T) {
	for v, want := range map[string]bool{
		"1.0.0": true, "v1.0.0": true, "0.0.0": true, "1.0.0-rc.1": true, "1.0.0-0": true, "1.0.0-x-y.z": true,
		"1.0.0+build.01": true, "1.0.0-rc.1+b": true, "1.0.0+b-1": true, "0.0.1-seed": true,
		"": false, "v": false, "1": false, "1.0": false, "v1.2": false, "1.0.0.0": false, "01.0.0": false,
		"1.00.0": false, "1.0.0-01": false, "1.0.0-rc_1": false, "1.0.0+": false, "1.0.0-": false,
		"1.0.0-a..b": false, "1.0.0+a+b": false, "V1.0.0": false, "vv1.0.0": false, " 1.0.0": false,
		"1.0.0 ": false, "latest": false, "2024.1": false, "1.2.x": false, "-1.0.0": false,
	} {
		if _, got := parseSemver(v); got != want {
			t.Errorf("parseSemver(%q) = %v, want %v", v, got, want)
		}
	}
}

// Semantic Versioning 2.0.0's own example of precedence, lowest first.
func TestSemverPrecedence(t *testing.T) {
	order := []string{"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
		"1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0", "10.0.0"}
	for i, a := range order {
		for j, b := range order {
			sa, _ := parseSemver(a)
			sb, _ := parseSemver(b)
			want := 0
			switch {
			case i < j:
				want = -1
			case i > j:
				want = 1
			}
			if got := sa.compare(sb); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
	}
	x, _ := parseSemver("1.0.0+x")
	y, _ := parseSemver("v1.0.0+y")
	if x.compare(y) != 0 {
		t.Errorf("build metadata and a leading v must not count")
	}
}

// BenchmarkPickLatest elects among 50 versions with full histories, the
// work the store does for each name a page touches.
func BenchmarkPickLatest(b *testing.B) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	vs := make([]store.RegistryVersion, 50)
	for i := range vs {
		at := t0.Add(time.Duration(i) * time.Hour).Format(time.RFC3339Nano)
		vs[i] = store.RegistryVersion{Version: fmt.Sprintf("1.%d.0-rc.%d", i%7, i), Status: statusActive, PublishedAt: at, StatusChangedAt: at, UpdatedAt: at}
	}
	vs[10].Status, vs[10].StatusChangedAt, vs[10].UpdatedAt = statusDeleted, t0.Add(100*time.Hour).Format(time.RFC3339Nano), t0.Add(100*time.Hour).Format(time.RFC3339Nano)
	for b.Loop() {
		PickLatest(vs)
	}
}
