package fetch

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url  string
		want error // nil = allowed
	}{
		{"https://example.com/x", nil},
		{"https://93.184.216.34/", nil},
		{"https://[2606:2800:220:1::1]/", nil},
		{"HTTPS://Example.COM/.well-known/ai-catalog.json", nil},
		{"https://example.com:8443/mcp", nil},
		{"https://1.1.1.1./", nil},
		{"http://example.com/", ErrBlockedScheme},
		{"ftp://example.com/", ErrBlockedScheme},
		{"//example.com/", ErrBlockedScheme},
		{"file:///etc/passwd", ErrBlockedScheme},
		{"https://user:pass@example.com/", ErrUserinfo},
		{"https://user@example.com/", ErrUserinfo},
		{"https://@example.com/", ErrUserinfo},
		{"https://{tenant}.example.com/mcp", ErrPlaceholderURL},
		{"https://example.com/{tenant}/mcp", ErrPlaceholderURL},
		{"https://example.com/%7Btenant%7D/mcp", ErrPlaceholderURL},
		{"https://example.com/%7btenant%7d/mcp", ErrPlaceholderURL},
		{"https://example.com/mcp?x=%7D", ErrPlaceholderURL},
		{"https://localhost/", ErrBlockedAddress},
		{"https://LOCALHOST./", ErrBlockedAddress},
		{"https://api.localhost/", ErrBlockedAddress},
		{"https://127.0.0.1/", ErrBlockedAddress},
		{"https://127.0.0.1:8443/", ErrBlockedAddress},
		{"https://2130706433/", ErrBlockedAddress},
		{"https://0x7f000001/", ErrBlockedAddress},
		{"https://0x7f.1/", ErrBlockedAddress},
		{"https://0177.0.0.1/", ErrBlockedAddress},
		{"https://017700000001/", ErrBlockedAddress},
		{"https://127.1/", ErrBlockedAddress},
		{"https://127.0.1/", ErrBlockedAddress},
		{"https://%31%32%37.0.0.1/", ErrInvalidURL}, // Go refuses escapes in the host
		{"https://10.0.0.5/", ErrBlockedAddress},
		{"https://172.16.3.4/", ErrBlockedAddress},
		{"https://192.168.1.1/", ErrBlockedAddress},
		{"https://169.254.169.254/latest/meta-data/", ErrBlockedAddress},
		{"https://100.64.1.1/", ErrBlockedAddress},
		{"https://100.100.100.200/", ErrBlockedAddress},
		{"https://0.0.0.0/", ErrBlockedAddress},
		{"https://0/", ErrBlockedAddress},
		{"https://255.255.255.255/", ErrBlockedAddress},
		{"https://224.0.0.1/", ErrBlockedAddress},
		{"https://[::1]/", ErrBlockedAddress},
		{"https://[::]/", ErrBlockedAddress},
		{"https://[::ffff:127.0.0.1]/", ErrBlockedAddress},
		// Full-width and ideographic spellings the transport maps through IDNA.
		{"https://１２７.０.０.１/x", ErrBlockedAddress},
		{"https://127。0。0。1/x", ErrBlockedAddress},
		{"https://ｌｏｃａｌｈｏｓｔ/x", ErrBlockedAddress},
		{"https://１０.０.０.５/x", ErrBlockedAddress},
		{"https://bücher.example/x", nil},
		{"https://[::ffff:7f00:1]/", ErrBlockedAddress},
		{"https://[::ffff:a9fe:a9fe]/", ErrBlockedAddress},
		{"https://[64:ff9b::a00:5]/", ErrBlockedAddress},
		{"https://[2002:7f00:1::]/", ErrBlockedAddress},
		{"https://[fe80::1]/", ErrBlockedAddress},
		{"https://[fe80::1%25eth0]/", ErrBlockedAddress},
		{"https://[fd00:ec2::254]/", ErrBlockedAddress},
		{"https://[ff02::1]/", ErrBlockedAddress},
		{"https://999.1.1.1/", ErrBlockedAddress},
		{"https://1.2.3.4.5/", ErrBlockedAddress},
		{"https://example.0x/", ErrBlockedAddress},
		{"https:///path", ErrInvalidURL},
		{"https:example.com", ErrInvalidURL},
		{"https://exa mple.com/", ErrInvalidURL},
		// Teredo tunnels (2001::/32) carry an obfuscated IPv4 address.
		{"https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", ErrBlockedAddress},
		// The WHATWG Fetch standard's bad ports; the usual ones pass.
		{"https://example.com:22/", ErrBlockedPort},
		{"https://example.com:25/mcp", ErrBlockedPort},
		{"https://93.184.216.34:6697/", ErrBlockedPort},
		{"https://[2606:2800:220:1::1]:10080/", ErrBlockedPort},
		{"https://example.com:0/", ErrBlockedPort},
		{"https://example.com:022/", ErrBlockedPort},
		{"https://example.com:443/", nil},
		{"https://example.com:80/", nil},
		{"https://example.com:6379/", nil}, // not on the standard's list
		{"https://example.com:65536/", ErrInvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			err := CheckURL(tt.url)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v, want nil", tt.url, err)
				}
				return
			}
			if !errors.Is(err, tt.want) {
				t.Fatalf("CheckURL(%q) = %v, want %v", tt.url, err, tt.want)
			}
		})
	}
}

func TestCheckURLRedactsUserinfo(t *testing.T) {
	err := CheckURL("https://user:s3cret@example.com/")
	if err == nil {
		t.Fatal("userinfo accepted")
	}
	if got := err.Error(); strings.Contains(got, "s3cret") {
		t.Errorf("error %q leaks the password", got)
	}
}

func TestIsBlockedIP(t *testing.T) {
	tests := []struct {
		ip   string
		want bool
	}{
		{"93.184.216.34", false},
		{"1.1.1.1", false},
		{"8.8.8.8", false},
		{"100.63.255.255", false},
		{"100.128.0.0", false},
		{"172.32.0.1", false},
		{"2606:2800:220:1::1", false},
		{"2001:4860:4860::8888", false},
		{"::ffff:93.184.216.34", false},
		{"64:ff9b::5db8:d822", false}, // NAT64 of 93.184.216.34
		{"2002:5db8:d822::1", false},  // 6to4 of 93.184.216.34
		{"127.0.0.1", true},
		{"127.255.255.254", true},
		{"10.0.0.5", true},
		{"172.16.0.1", true},
		{"172.31.255.255", true},
		{"192.168.0.1", true},
		{"169.254.169.254", true},
		{"169.254.1.1", true},
		{"100.64.1.1", true},
		{"100.100.100.200", true},
		{"0.0.0.0", true},
		{"0.1.2.3", true},
		{"255.255.255.255", true},
		{"224.0.0.251", true},
		{"239.255.255.250", true},
		{"240.0.0.1", true},
		{"192.0.2.1", true},
		{"198.18.0.1", true},
		{"198.51.100.7", true},
		{"203.0.113.9", true},
		{"::", true},
		{"::1", true},
		{"::127.0.0.1", true},
		{"::ffff:127.0.0.1", true},
		{"::ffff:10.0.0.5", true},
		{"::ffff:169.254.169.254", true},
		{"64:ff9b::7f00:1", true},
		{"64:ff9b:1::1", true},
		{"2002:a00:5::1", true},
		{"fc00::1", true},
		{"fd00:ec2::254", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fec0::1", true},
		{"ff02::1", true},
		{"2001:db8::1", true},
		{"100::1", true},
		{"2001::1", true},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", true}, // Teredo
		{"2001:4860:4860::8888", false},                // public, next to Teredo
	}
	for _, tt := range tests {
		if got := IsBlockedIP(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("IsBlockedIP(%s) = %v, want %v", tt.ip, got, tt.want)
		}
	}
	if !IsBlockedIP(netip.Addr{}) {
		t.Error("IsBlockedIP(zero Addr) = false, want true")
	}
}

func TestCheckSocketAddress(t *testing.T) {
	tests := []struct {
		address string
		blocked bool
	}{
		{"93.184.216.34:443", false},
		{"[2606:2800:220:1::1]:443", false},
		{"127.0.0.1:443", true},
		{"10.0.0.5:8443", true},
		{"[::ffff:169.254.169.254]:80", true},
		{"[fe80::1%eth0]:443", true},
		{"not an address", true},
	}
	for _, tt := range tests {
		err := checkSocketAddress(tt.address)
		if got := errors.Is(err, ErrBlockedAddress); got != tt.blocked {
			t.Errorf("checkSocketAddress(%q) = %v, want blocked %v", tt.address, err, tt.blocked)
		}
	}
}

// TestSlotKeyFoldsSpellings: the per-host slot is one per host however the
// name is written, so politeness cannot be dodged with full-width letters.
func TestSlotKeyFoldsSpellings(t *testing.T) {
	want := slotKey(mustURL(t, "https://example.com/"))
	for _, raw := range []string{"https://EXAMPLE.com/a", "https://example.com./b", "https://ｅｘａｍｐｌｅ.com/c"} {
		if got := slotKey(mustURL(t, raw)); got != want {
			t.Errorf("slotKey(%s) = %q, want %q", raw, got, want)
		}
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
