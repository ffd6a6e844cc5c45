package registry

import (
	"strconv"
	"strings"
	"time"

	"github.com/cardcrawl/cardcrawl/store"
)

// PickLatest elects the latest version among all stored versions of one
// server the way the Registry does (service/versioning.go): two semvers
// compare as semver, a semver beats a non-semver, two non-semvers compare
// by publishedAt. Deleted versions are only considered when nothing else
// is left, since the Registry re-elects when the latest one is deleted.
// Ties fall back to the Registry's own flag, then to the version string, so
// the election is deterministic.
func PickLatest(vs []store.RegistryVersion) string {
	best := -1
	for _, deletedToo := range []bool{false, true} {
		for i, v := range vs {
			if !deletedToo && v.Status == "deleted" {
				continue
			}
			if best < 0 || newer(v, vs[best]) {
				best = i
			}
		}
		if best >= 0 {
			return vs[best].Version
		}
	}
	return ""
}

func newer(a, b store.RegistryVersion) bool {
	sa, aok := parseSemver(a.Version)
	sb, bok := parseSemver(b.Version)
	switch {
	case aok && bok:
		if c := compareSemver(sa, sb); c != 0 {
			return c > 0
		}
	case aok != bok:
		return aok
	default:
		ta, _ := time.Parse(time.RFC3339Nano, a.PublishedAt)
		tb, _ := time.Parse(time.RFC3339Nano, b.PublishedAt)
		if !ta.Equal(tb) {
			return ta.After(tb)
		}
	}
	if a.ReportedLatest != b.ReportedLatest {
		return a.ReportedLatest
	}
	return a.Version > b.Version
}

type semver struct {
	nums [3]int64
	pre  []string
}

// parseSemver accepts MAJOR.MINOR.PATCH[-pre][+build], no leading "v",
// matching what the Registry treats as semver.
func parseSemver(v string) (semver, bool) {
	var s semver
	if i := strings.IndexByte(v, '+'); i >= 0 {
		v = v[:i]
	}
	if i := strings.IndexByte(v, '-'); i >= 0 {
		if i == len(v)-1 {
			return s, false
		}
		s.pre = strings.Split(v[i+1:], ".")
		v = v[:i]
	}
	parts := strings.Split(v, ".")
	if len(parts) != 3 {
		return s, false
	}
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') {
			return s, false
		}
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil || n < 0 {
			return s, false
		}
		s.nums[i] = n
	}
	return s, true
}

func compareSemver(a, b semver) int {
	for i := range a.nums {
		if a.nums[i] != b.nums[i] {
			if a.nums[i] > b.nums[i] {
				return 1
			}
			return -1
		}
	}
	// A release outranks its pre-releases.
	switch {
	case len(a.pre) == 0 && len(b.pre) == 0:
		return 0
	case len(a.pre) == 0:
		return 1
	case len(b.pre) == 0:
		return -1
	}
	for i := 0; i < len(a.pre) && i < len(b.pre); i++ {
		x, y := a.pre[i], b.pre[i]
		xn, xerr := strconv.ParseInt(x, 10, 64)
		yn, yerr := strconv.ParseInt(y, 10, 64)
		switch {
		case xerr == nil && yerr == nil:
			if xn != yn {
				if xn > yn {
					return 1
				}
				return -1
			}
		case xerr == nil:
			return -1
		case yerr == nil:
			return 1
		case x != y:
			if x > y {
				return 1
			}
			return -1
		}
	}
	switch {
	case len(a.pre) > len(b.pre):
		return 1
	case len(a.pre) < len(b.pre):
		return -1
	}
	return 0
}
