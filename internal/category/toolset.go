package category

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
)

// Fingerprint identifies a tool set regardless of the order its names were
// listed in: the first 128 bits of a SHA-256 over the sorted, distinct names,
// in hex. Store it beside a server's tools to count common sets in SQL.
type Fingerprint string

// FingerprintOf returns the fingerprint of a tool set; "" for an empty one.
func FingerprintOf(toolNames []string) Fingerprint {
	if len(toolNames) == 0 {
		return ""
	}
	names := slices.Clone(toolNames)
	slices.Sort(names)
	names = slices.Compact(names)
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, name := range names {
		// Length-prefixed, so no choice of names can run two into one.
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(name)))])
		h.Write([]byte(name))
	}
	sum := h.Sum(nil)
	return Fingerprint(hex.EncodeToString(sum[:16]))
}

// CommonSets is a set of fingerprints of tool sets to drop before counting
// topics. The nil set holds nothing.
type CommonSets map[Fingerprint]struct{}

// Has reports whether fp is in the set.
func (c CommonSets) Has(fp Fingerprint) bool {
	_, ok := c[fp]
	return ok
}

// ToolSetCounter counts how many servers list each tool set, for a caller
// that streams servers through it once each before categorising them. It
// keeps one counter per distinct tool set (about 100 bytes each), not the
// servers. The zero value is ready to use; it is not safe for concurrent use.
type ToolSetCounter struct {
	counts map[Fingerprint]int
}

// Add counts one server's tool set and returns its fingerprint. An empty set
// is not counted: a server without tools has nothing to drop.
func (c *ToolSetCounter) Add(toolNames []string) Fingerprint {
	fp := FingerprintOf(toolNames)
	c.AddFingerprint(fp)
	return fp
}

// AddFingerprint counts one server whose tool set's fingerprint is already
// known (stored, for example).
func (c *ToolSetCounter) AddFingerprint(fp Fingerprint) {
	if fp == "" {
		return
	}
	if c.counts == nil {
		c.counts = map[Fingerprint]int{}
	}
	c.counts[fp]++
}

// Count returns how many servers listed the tool set with this fingerprint.
func (c *ToolSetCounter) Count(fp Fingerprint) int { return c.counts[fp] }

// Common returns the tool sets listed by CommonToolSetServers or more servers.
func (c *ToolSetCounter) Common() CommonSets {
	out := CommonSets{}
	for fp, n := range c.counts {
		if n >= CommonToolSetServers {
			out[fp] = struct{}{}
		}
	}
	return out
}
