package registry

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// PickLatest elects, among the stored versions of one server, the version
// the Registry itself flags isLatest. cardcrawl elects it locally rather
// than keep the flag it last received, because the Registry flips an older
// version's isLatest without bumping that version's updatedAt, so a delta
// sync never brings the older row again.
//
// The Registry (v1.8.9, internal/service) decides at two moments, so the
// answer depends on the order of events, not only on the versions:
//
//   - on publish, the new version becomes latest only if it compares higher
//     than the current latest, even when that one is deleted (so after every
//     version was deleted, a lower version published stays not latest and
//     the deleted one keeps the flag);
//   - on any status change, it elects again: the highest version that is
//     not deleted, or the highest deleted one when all are; among versions
//     that compare equal, the most recently published.
//
// Versions compare by compareVersions. The history is replayed from the
// stored timestamps: the last status change (statusChangedAt) is an
// election among the versions published by then, and each later publish is
// compared with its winner. Without publishedAt times (a dump of bare
// server.json) there is no history, and the election is held over all
// versions, as the Registry's next status change would.
//
// One event leaves no trace of its own: a status call that changes only the
// message elects again without touching statusChangedAt, and bumps
// updatedAt just as an admin edit (which does not elect) does. Where such a
// moment would change the answer, the isLatest the Registry last sent
// decides between the two readings.
func PickLatest(vs []store.RegistryVersion) string {
	if len(vs) == 0 {
		return ""
	}
	h := make([]*version, len(vs))
	timed := true
	for i, v := range vs {
		h[i] = newVersion(v)
		timed = timed && !h[i].published.IsZero()
	}
	if !timed {
		return elect(h).Version
	}
	var known, maybe time.Time // the last election, and a later one that may have been
	for _, v := range h {
		switch {
		case v.changed.After(v.published):
			known = later(known, v.changed)
		case v.Status != "" && v.Status != statusActive:
			// A status changed at an unknown moment: the history is
			// incomplete, and an election over everything is the best guess.
			return elect(h).Version
		}
		if v.updated.After(v.published) && v.updated.After(v.changed) {
			maybe = later(maybe, v.updated)
		}
	}
	win := replay(h, known)
	if maybe.After(known) {
		if alt := replay(h, maybe); alt != win && alt.ReportedLatest && !win.ReportedLatest {
			return alt.Version
		}
	}
	return win.Version
}

const (
	statusActive  = "active"
	statusDeleted = "deleted"
)

// version is a stored version with its timestamps parsed and its version
// string judged once.
type version struct {
	store.RegistryVersion
	published, changed, updated time.Time
	sv                          semver
	isSemver                    bool
}

func newVersion(v store.RegistryVersion) *version {
	h := &version{RegistryVersion: v}
	h.published, _ = time.Parse(time.RFC3339Nano, v.PublishedAt)
	h.changed, _ = time.Parse(time.RFC3339Nano, v.StatusChangedAt)
	h.updated, _ = time.Parse(time.RFC3339Nano, v.UpdatedAt)
	h.sv, h.isSemver = parseSemver(v.Version)
	return h
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// replay is the latest version after an election at cut (none when cut is
// zero) followed by every publish after it, in publishing order.
func replay(h []*version, cut time.Time) *version {
	var before, after []*version
	for _, v := range h {
		if !cut.IsZero() && !v.published.After(cut) {
			before = append(before, v)
		} else {
			after = append(after, v)
		}
	}
	var win *version
	if len(before) > 0 {
		win = elect(before)
	}
	slices.SortStableFunc(after, func(a, b *version) int {
		return cmp.Or(a.published.Compare(b.published), strings.Compare(a.Version, b.Version))
	})
	for _, v := range after {
		// A publish wins only by comparing higher; between two non-semver
		// versions the newcomer is the later published, which the Registry
		// stamps with the current time, so it wins even on equal stored
		// times.
		if c := compareVersions(v, win); c > 0 || (c == 0 && !v.isSemver && !win.isSemver) {
			win = v
		}
	}
	return win
}

// elect is the Registry's election on a status change: the highest version
// not deleted, or the highest deleted one when all are. Versions are visited
// as the Registry lists them, newest first, and a later one wins only by
// comparing higher, so among equals the newest wins. Equal publishing times
// (or none) fall back to the flag the Registry sent, then the version.
func elect(h []*version) *version {
	order := slices.Clone(h)
	slices.SortStableFunc(order, func(a, b *version) int {
		return cmp.Or(b.published.Compare(a.published), boolOrder(b.ReportedLatest, a.ReportedLatest), strings.Compare(b.Version, a.Version))
	})
	for _, deleted := range []bool{false, true} {
		var win *version
		for _, v := range order {
			if (v.Status == statusDeleted) != deleted {
				continue
			}
			if win == nil || compareVersions(v, win) > 0 {
				win = v
			}
		}
		if win != nil {
			return win
		}
	}
	return nil // not reached: every version is deleted or not
}

func boolOrder(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareVersions is the Registry's order of versions: two semantic
// versions compare by semantic-version precedence, a semantic version ranks
// above any other string, and two other strings compare by when they were
// published. A nil b ranks below everything.
func compareVersions(a, b *version) int {
	switch {
	case b == nil:
		return 1
	case a.isSemver && b.isSemver:
		return a.sv.compare(b.sv)
	case a.isSemver:
		return 1
	case b.isSemver:
		return -1
	}
	return a.published.Compare(b.published)
}

// semver is a version string the Registry treats as a semantic version:
// exactly MAJOR.MINOR.PATCH, optionally after one lower-case "v", with an
// optional pre-release and build as Semantic Versioning 2.0.0 defines them
// (the Registry checks with golang.org/x/mod/semver and then requires all
// three numbers). So "v1.0.0" is one, while "1.0", "1.0.0-01", "1.0.0-rc_1",
// "1.0.0+" and "1.0.0-a..b" are not. Numbers are kept as digit strings:
// any length compares correctly.
type semver struct {
	major, minor, patch string
	pre                 []string // nil for a release
}

func parseSemver(s string) (semver, bool) {
	var v semver
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		if !identifiers(s[i+1:], false) {
			return v, false
		}
		s = s[:i]
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		if !identifiers(s[i+1:], true) {
			return v, false
		}
		v.pre = strings.Split(s[i+1:], ".")
		s = s[:i]
	}
	nums := strings.Split(s, ".")
	if len(nums) != 3 {
		return v, false
	}
	for _, n := range nums {
		if !numeric(n) || (len(n) > 1 && n[0] == '0') {
			return v, false
		}
	}
	v.major, v.minor, v.patch = nums[0], nums[1], nums[2]
	return v, true
}

// identifiers reports whether s is a dot-separated series of non-empty
// identifiers of ASCII letters, digits and hyphens; in a pre-release, an
// all-digit identifier must not have a leading zero.
func identifiers(s string, pre bool) bool {
	for id := range strings.SplitSeq(s, ".") {
		if id == "" || strings.TrimLeft(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
			return false
		}
		if pre && numeric(id) && len(id) > 1 && id[0] == '0' {
			return false
		}
	}
	return true
}

func numeric(s string) bool {
	return s != "" && strings.TrimLeft(s, "0123456789") == ""
}

// compareDigits orders two digit strings without leading zeros as numbers.
func compareDigits(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
}

func (a semver) compare(b semver) int {
	if c := cmp.Or(compareDigits(a.major, b.major), compareDigits(a.minor, b.minor), compareDigits(a.patch, b.patch)); c != 0 {
		return c
	}
	switch {
	case a.pre == nil && b.pre == nil:
		return 0
	case a.pre == nil:
		return 1 // a release ranks above its pre-releases
	case b.pre == nil:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, y := a.pre[i], b.pre[i]
		xn, yn := numeric(x), numeric(y)
		var c int
		switch {
		case xn && yn:
			c = compareDigits(x, y)
		case xn:
			c = -1 // numeric identifiers rank below alphanumeric ones
		case yn:
			c = 1
		default:
			c = strings.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a.pre), len(b.pre))
}
