package fetch

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// CheckURL judges a URL before any connection is made, whatever ConnectTo
// says: https only (ErrBlockedScheme), no userinfo (ErrUserinfo), no `{` `}`
// placeholders raw or percent-encoded (ErrPlaceholderURL), no port browsers
// refuse (ErrBlockedPort, see BadPort), host neither
// "localhost" nor "*.localhost", and a host that is an IP literal in any
// spelling (dotted, decimal, hex, octal, short forms such as "127.1", IPv6,
// IPv4-mapped) not in a refused range (ErrBlockedAddress). Hostnames are
// judged again on the addresses they resolve to, at dial time.
func CheckURL(raw string) error {
	lower := strings.ToLower(raw)
	if strings.ContainsAny(raw, "{}") || strings.Contains(lower, "%7b") || strings.Contains(lower, "%7d") {
		return fmt.Errorf("%w: %q", ErrPlaceholderURL, raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidURL, err)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%w: %q is not https", ErrBlockedScheme, u.Scheme)
	}
	if u.Opaque != "" {
		return fmt.Errorf("%w: %q has no authority", ErrInvalidURL, raw)
	}
	if u.User != nil {
		// Redacted: the userinfo may be a real credential.
		return fmt.Errorf("%w: %s", ErrUserinfo, u.Redacted())
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return fmt.Errorf("%w: port %q", ErrInvalidURL, p)
		}
		if BadPort(uint16(n)) {
			return fmt.Errorf("%w: %s (port %d is on the WHATWG Fetch standard's bad-port list)", ErrBlockedPort, u.Redacted(), n)
		}
	}
	return checkHost(u.Hostname())
}

// badPorts is the WHATWG Fetch standard's list of bad ports
// (https://fetch.spec.whatwg.org/#port-blocking): the default ports of
// services that an HTTP request could be made to talk to (SSH, SMTP, POP3,
// IMAP, IRC, LDAP, NFS, SIP, X11, ...), which browsers refuse to fetch.
// cardcrawl fetches whatever URLs documents name, so it refuses them too: a
// card must not turn the crawler into a mail or shell client. Port 0,
// where nothing listens, is refused with them.
var badPorts = map[uint16]bool{
	0: true, 1: true, 7: true, 9: true, 11: true, 13: true, 15: true, 17: true, 19: true, 20: true,
	21: true, 22: true, 23: true, 25: true, 37: true, 42: true, 43: true, 53: true, 69: true, 77: true,
	79: true, 87: true, 95: true, 101: true, 102: true, 103: true, 104: true, 109: true, 110: true,
	111: true, 113: true, 115: true, 117: true, 119: true, 123: true, 135: true, 137: true, 139: true,
	143: true, 161: true, 179: true, 389: true, 427: true, 465: true, 512: true, 513: true, 514: true,
	515: true, 526: true, 530: true, 531: true, 532: true, 540: true, 548: true, 554: true, 556: true,
	563: true, 587: true, 601: true, 636: true, 989: true, 990: true, 993: true, 995: true, 1719: true,
	1720: true, 1723: true, 2049: true, 3659: true, 4045: true, 4190: true, 5060: true, 5061: true,
	6000: true, 6566: true, 6665: true, 6666: true, 6667: true, 6668: true, 6669: true, 6679: true,
	6697: true, 10080: true,
}

// BadPort reports whether port is on the WHATWG Fetch standard's bad-port
// list, which fetch refuses as browsers do (failure class blocked_port).
func BadPort(port uint16) bool { return badPorts[port] }

// checkHost judges a URL host (brackets already removed), in the form the
// transport will dial: net/http maps hosts through IDNA first, so a
// full-width "１２７.０.０.１" or "ｌｏｃａｌｈｏｓｔ" is judged as the ASCII
// name it becomes.
func checkHost(host string) error {
	h, err := asciiHost(host)
	if err != nil {
		return fmt.Errorf("%w: host %q: %w", ErrInvalidURL, host, err)
	}
	if h == "" {
		return fmt.Errorf("%w: empty host", ErrInvalidURL)
	}
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return fmt.Errorf("%w: %s", ErrBlockedAddress, host)
	}
	ip, literal, ok := parseHostIP(h)
	if !literal {
		return nil
	}
	if !ok {
		// The WHATWG URL parser refuses a host whose last label is a number
		// but which is no valid IPv4 address; resolvers might still accept
		// it in some spelling, so refuse rather than guess.
		return fmt.Errorf("%w: %s is not a valid ip address", ErrBlockedAddress, host)
	}
	if IsBlockedIP(ip) {
		return fmt.Errorf("%w: %s (%s)", ErrBlockedAddress, host, ip)
	}
	return nil
}

// asciiHost lower-cases a host and maps it with the same IDNA profile the
// standard library's transport uses; IPv6 literals pass unchanged.
func asciiHost(host string) (string, error) {
	h := strings.ToLower(host)
	if !strings.Contains(h, ":") {
		ascii, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", err
		}
		h = ascii
	}
	return strings.TrimRight(h, "."), nil
}

// parseHostIP reports whether h is meant as an IP literal (literal) and, if
// so, whether it is a valid one (ok). IPv4 follows inet_aton, which is what
// most resolvers apply: one to four parts, each decimal, 0x-hex or 0-octal,
// the last part filling the remaining bytes ("127.1", "2130706433",
// "0x7f.1", "0177.0.0.1").
func parseHostIP(h string) (ip netip.Addr, literal, ok bool) {
	if strings.Contains(h, ":") {
		ip, err := netip.ParseAddr(h)
		return ip.WithZone(""), true, err == nil
	}
	parts := strings.Split(h, ".")
	if !isNumber(parts[len(parts)-1]) {
		return netip.Addr{}, false, false
	}
	if len(parts) > 4 {
		return netip.Addr{}, true, false
	}
	var vals []uint64
	for _, p := range parts {
		v, err := parseIPv4Part(p)
		if err != nil {
			return netip.Addr{}, true, false
		}
		vals = append(vals, v)
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 0xff {
			return netip.Addr{}, true, false
		}
		n |= v << (8 * (3 - i))
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, true, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true, true
}

// isNumber reports whether a label looks numeric in the WHATWG sense:
// decimal digits, or 0x followed by hex digits (possibly none).
func isNumber(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") {
		return strings.Trim(s[2:], "0123456789abcdef") == ""
	}
	return strings.Trim(s, "0123456789") == ""
}

func parseIPv4Part(p string) (uint64, error) {
	switch {
	case p == "":
		return 0, fmt.Errorf("empty part")
	case strings.HasPrefix(p, "0x"):
		if p == "0x" {
			return 0, nil
		}
		return strconv.ParseUint(p[2:], 16, 32)
	case len(p) > 1 && p[0] == '0':
		return strconv.ParseUint(p[1:], 8, 32)
	default:
		return strconv.ParseUint(p, 10, 32)
	}
}

// blockedPrefixes are ranges no document may make us connect to, beyond
// what netip's predicates cover: shared, reserved, documentation and
// benchmarking space, which never hosts a public server, plus deprecated
// IPv6 forms that can embed or alias internal addresses.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // CGNAT, includes 100.100.100.200 (Alibaba metadata)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
	netip.MustParsePrefix("192.88.99.0/24"),  // deprecated 6to4 relay anycast
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
	netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, includes 255.255.255.255
	netip.MustParsePrefix("::/96"),           // deprecated IPv4-compatible, ::, ::1
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001::/32"),       // Teredo: tunnels to an IPv4 address no check sees
	netip.MustParsePrefix("2001:2::/48"),     // benchmarking
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("3fff::/20"),       // documentation (RFC 9637)
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// IsBlockedIP reports whether ip is an address no fetched document may make
// us connect to: loopback, private (10/8, 172.16/12, 192.168/16, fc00::/7,
// which holds fd00:ec2::254), link-local (169.254/16 with 169.254.169.254,
// fe80::/10), CGNAT 100.64/10 (with 100.100.100.200), multicast,
// unspecified, broadcast, 0/8, reserved, documentation and benchmarking
// ranges. IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64
// 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4 address; Teredo
// 2001::/32, whose embedded addresses are obfuscated and relayed, is
// refused whole. The zero Addr is blocked.
func IsBlockedIP(ip netip.Addr) bool {
	if !ip.IsValid() {
		return true
	}
	ip = ip.WithZone("")
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			return IsBlockedIP(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			return IsBlockedIP(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
