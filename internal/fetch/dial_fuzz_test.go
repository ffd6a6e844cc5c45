package fetch

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseConnectTo checks the --connect-to reader: an error comes with no
// value, an accepted value has ports a dialled address can match (canonical
// decimal, 1-65535, or empty for any), and it writes back to a string that
// reads back the same.
func FuzzParseConnectTo(f *testing.F) {
	for _, s := range []string{
		// What the README, the demo and the tests pass.
		"a.example:443:127.0.0.1:8443", "::127.0.0.1:8443", ":443:b.example:", "[2001:db8::1]:443:[::1]:8443", ":::",
		// Hostile: unclosed or empty brackets, unbracketed IPv6, signs and
		// leading zeros in ports, a zone, spaces, too many fields.
		"[::1:443:x:1", "[]:443:x:1", "a:443:::1:8443", "a:+443:b:1", "a:0443:b:1", "a:443:b:-1", "[fe80::1%eth0]:443:b:1",
		" a :443:b:1", "a:1:b:2:c", "a:99999999999999999999:b:1", "[a]:1:b:2", "[:]:1:[:]:2", "A.EXAMPLE:1:B.EXAMPLE:2",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConnectTo(s)
		if err != nil {
			if c != (ConnectTo{}) {
				t.Fatalf("error %v with value %+v", err, c)
			}
			return
		}
		for _, p := range []string{c.FromPort, c.ToPort} {
			if n, err := strconv.Atoi(p); p != "" && (err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != p) {
				t.Fatalf("%q accepted with port %q, which no dialled port equals", s, p)
			}
		}
		if c.FromHost != strings.ToLower(c.FromHost) {
			t.Fatalf("from-host %q is not lower-case", c.FromHost)
		}
		back := writeHost(c.FromHost) + ":" + c.FromPort + ":" + writeHost(c.ToHost) + ":" + c.ToPort
		again, err := ParseConnectTo(back)
		if err != nil {
			t.Fatalf("%q accepted as %+v, written back as %q, which fails: %v", s, c, back, err)
		}
		if diff := cmp.Diff(c, again); diff != "" {
			t.Fatalf("%q read back from %q differently (-first +second):\n%s", s, back, diff)
		}
	})
}

// writeHost brackets a host that holds a colon, as the flag wants IPv6.
func writeHost(h string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]"
	}
	return h
}
