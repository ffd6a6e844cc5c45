package probe

import (
	"slices"
	"strings"
	"time"
)

// DefaultMaxAge is how long a probe result stays fresh.
const DefaultMaxAge = 24 * time.Hour

// Probe modes as given by --probe.
const (
	ModeAuto   = "auto"
	ModeAlways = "always"
	ModeNever  = "never"
)

// Decision reasons.
const (
	ReasonWarranted            = "warranted"
	ReasonForced               = "forced"
	ReasonProbeDisabled        = "probe_disabled"
	ReasonUnsupportedTransport = "unsupported_transport"
	ReasonPlaceholder          = "placeholder"
	ReasonPlainHTTP            = "plain_http"
	ReasonUserinfo             = "userinfo"
	ReasonBlockedAddress       = "blocked_address"
	ReasonBlockedPort          = "blocked_port"
	ReasonInvalidURL           = "invalid_url"
	ReasonFresh                = "fresh"
)

// RemoteFacts is what the crawler knows about one remote when deciding.
type RemoteFacts struct {
	Type, URL        string
	LastProbedAt     time.Time // zero = never
	CardChangedSince bool      // the card changed after the last probe
	Mode             string    // "auto" | "always" | "never"; "" = auto
	MaxAge           time.Duration
	Now              time.Time
}

// Decision says whether to probe, and why (one of the Reason constants).
type Decision struct {
	Probe  bool
	Reason string
}

// Decide is the pure "is a probe warranted" rule; it does no I/O. Where a
// host resolves is the caller's to check before probing (the crawl uses
// fetch.Client.CheckHost), and the dialer checks it again at connect time.
func Decide(f RemoteFacts) Decision {
	no := func(r string) Decision { return Decision{Reason: r} }
	if strings.EqualFold(f.Mode, ModeNever) {
		return no(ReasonProbeDisabled)
	}
	switch normTransport(f.Type) {
	case TransportStreamable, TransportSSE:
	default:
		return no(ReasonUnsupportedTransport)
	}
	if reason := checkTarget(f.URL); reason != "" {
		code, _, _ := strings.Cut(reason, ":")
		if !slices.Contains([]string{ReasonPlaceholder, ReasonPlainHTTP, ReasonUserinfo, ReasonBlockedAddress, ReasonBlockedPort}, code) {
			code = ReasonInvalidURL
		}
		return no(code)
	}
	if strings.EqualFold(f.Mode, ModeAlways) {
		return Decision{Probe: true, Reason: ReasonForced}
	}
	maxAge := f.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	if !f.LastProbedAt.IsZero() && !f.CardChangedSince && f.Now.Sub(f.LastProbedAt) < maxAge {
		return no(ReasonFresh)
	}
	return Decision{Probe: true, Reason: ReasonWarranted}
}

// Mismatch is one difference between a card and the live server.
type Mismatch struct {
	Field string `json:"field"`
	Card  string `json:"card"`
	Live  string `json:"live"`
}

// CompareCard compares what the server said live with what its card
// declared; the live values win, so callers store these as differences.
// Fields: name, version, protocolVersion and transport.
//
// protocolVersion is compared only when the card lists
// supportedProtocolVersions, and only as far as the probe can know:
//   - after server/discover the server's own list is known, so the
//     mismatch names the versions the card lists that the server does not
//     support (Live is the server's list). A card listing a subset is not
//     flagged: a card need not promise every version;
//   - after initialize only one version is known, the one the server chose
//     from our single offer. If it is the one we offered, the server may
//     well speak the card's newer versions too, so nothing is flagged; if it
//     chose another, that is flagged when the card does not list it.
func CompareCard(r Result, cardName, cardVersion, declaredTransport string, cardProtocolVersions []string) []Mismatch {
	var out []Mismatch
	diff := func(field, card, live string) {
		card, live = strings.TrimSpace(card), strings.TrimSpace(live)
		if card != "" && live != "" && card != live {
			out = append(out, Mismatch{Field: field, Card: card, Live: live})
		}
	}
	diff("name", cardName, r.ServerName)
	diff("version", cardVersion, r.ServerVersion)
	if m, ok := compareVersions(r, cardProtocolVersions); ok {
		out = append(out, m)
	}
	if dt := normTransport(declaredTransport); dt != "" {
		diff("transport", dt, r.Transport)
	}
	return out
}

// compareVersions applies CompareCard's protocolVersion rule.
func compareVersions(r Result, card []string) (Mismatch, bool) {
	if len(card) == 0 {
		return Mismatch{}, false
	}
	if r.Discover != nil && len(r.Discover.SupportedVersions) > 0 {
		var unsupported []string
		for _, v := range card {
			if !slices.Contains(r.Discover.SupportedVersions, strings.TrimSpace(v)) {
				unsupported = append(unsupported, v)
			}
		}
		if len(unsupported) == 0 {
			return Mismatch{}, false
		}
		return Mismatch{Field: "protocolVersion", Card: strings.Join(unsupported, ","),
			Live: strings.Join(r.Discover.SupportedVersions, ",")}, true
	}
	if r.ProtocolVersion == "" || r.ProtocolVersion == ProtocolVersion || slices.Contains(card, r.ProtocolVersion) {
		return Mismatch{}, false
	}
	return Mismatch{Field: "protocolVersion", Card: strings.Join(card, ","), Live: r.ProtocolVersion}, true
}
