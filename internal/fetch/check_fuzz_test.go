package fetch

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// FuzzCheckURL checks the pre-connection guard on any URL a document can
// hold: a refusal names one of the classified errors, and a URL it lets
// through is https, carries no userinfo or placeholder, names no bad port,
// and has a host that no IP parser of the standard library reads as a
// refused address.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://example.com/.well-known/ai-catalog.json", "https://mcp.example.com:8443/mcp", "https://[2606:2800:220:1::1]/",
		// The spellings the guard's tests list, and more.
		"https://0x7f.1/", "https://017700000001/", "https://[::ffff:127.0.0.1]/", "https://[64:ff9b::a9fe:a9fe]/",
		"https://[2002:7f00:1::]/", "https://[fe80::1%25eth0]/", "https://１２７.０.０.１/", "https://ｌｏｃａｌｈｏｓｔ/",
		"https://127.0.0.1./", "https://LOCALHOST../", "https://0x7F000001/", "https://0X7f.1/", "https://1.2.3.4.5/",
		"https://[::127.0.0.1]/", "https://%31.1/", "https:/\\127.0.0.1/", "https://example.com%00.127.0.0.1/",
		"https://u@x.example/", "https://x.example/%7B", "HTTPS://[0:0:0:0:0:ffff:7f00:1]/", "https://[::ffff:a9fe:a9fe]:443/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := CheckURL(raw)
		if err != nil {
			for _, e := range []error{ErrBlockedAddress, ErrBlockedPort, ErrBlockedScheme, ErrPlaceholderURL, ErrUserinfo, ErrInvalidURL} {
				if errors.Is(err, e) {
					return
				}
			}
			t.Fatalf("CheckURL(%q) = %v, which is not classified", raw, err)
		}
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "https" || u.User != nil || u.Opaque != "" || strings.ContainsAny(raw, "{}") ||
			strings.Contains(strings.ToLower(raw), "%7b") || strings.Contains(strings.ToLower(raw), "%7d") {
			t.Fatalf("CheckURL(%q) let through a URL it should refuse (%v)", raw, err)
		}
		if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil && BadPort(uint16(p)) {
			t.Fatalf("CheckURL(%q) let through port %d", raw, p)
		}
		h, err := asciiHost(u.Hostname())
		if err != nil || h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") {
			t.Fatalf("CheckURL(%q) let through host %q (%v)", raw, h, err)
		}
		if ip, err := netip.ParseAddr(h); err == nil && IsBlockedIP(ip) {
			t.Fatalf("CheckURL(%q) let through %s", raw, ip)
		}
		if ip, ok := netip.AddrFromSlice(net.ParseIP(h)); ok && IsBlockedIP(ip) {
			t.Fatalf("CheckURL(%q) let through %s (net.ParseIP)", raw, ip)
		}
	})
}

// FuzzParseHostIP writes a random IPv4 address in one of the spellings
// inet_aton accepts (one to four parts, each decimal, octal or hex in
// either case) and checks that the guard reads that very address, and
// refuses the spelling exactly when it refuses the address.
func FuzzParseHostIP(f *testing.F) {
	f.Add(uint32(0x7f000001), uint8(0), uint8(0))
	f.Add(uint32(0x7f000001), uint8(1), uint8(0xff))
	f.Add(uint32(0xa9fea9fe), uint8(3), uint8(0x5a))
	f.Add(uint32(0x5db8d822), uint8(2), uint8(0x21))
	f.Add(uint32(0), uint8(3), uint8(0x92))
	f.Fuzz(func(t *testing.T, v uint32, nparts, bases uint8) {
		n := int(nparts%4) + 1
		vals := make([]uint64, n)
		for i := range n - 1 {
			vals[i] = uint64(v>>(8*(3-i))) & 0xff
		}
		vals[n-1] = uint64(v) & (1<<(8*(5-n)) - 1)
		parts := make([]string, n)
		for i, x := range vals {
			switch (bases >> (2 * i)) & 3 {
			case 0, 1:
				parts[i] = strconv.FormatUint(x, 10)
			case 2:
				parts[i] = "0" + strconv.FormatUint(x, 8)
			case 3:
				parts[i] = "0x" + strconv.FormatUint(x, 16)
				if bases&0x80 != 0 {
					parts[i] = strings.ToUpper(parts[i])
				}
			}
		}
		host := strings.Join(parts, ".")
		want := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		if ip, literal, ok := parseHostIP(strings.ToLower(host)); ip != want || !literal || !ok {
			t.Fatalf("parseHostIP(%q) = %v, %v, %v; want %v", host, ip, literal, ok, want)
		}
		err := checkHost(host)
		if blocked := IsBlockedIP(want); blocked != errors.Is(err, ErrBlockedAddress) || (!blocked && err != nil) {
			t.Fatalf("checkHost(%q) = %v for %v (blocked %v)", host, err, want, blocked)
		}
	})
}
