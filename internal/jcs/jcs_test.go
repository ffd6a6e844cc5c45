package jcs

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFormatDouble: RFC 8785 Appendix B's number serialization samples,
// by their IEEE 754 bits.
func TestFormatDouble(t *testing.T) {
	for _, tc := range []struct {
		bits uint64
		want string
	}{
		{0x0000000000000000, "0"},
		{0x8000000000000000, "0"},
		{0x0000000000000001, "5e-324"},
		{0x8000000000000001, "-5e-324"},
		{0x7fefffffffffffff, "1.7976931348623157e+308"},
		{0xffefffffffffffff, "-1.7976931348623157e+308"},
		{0x4340000000000000, "9007199254740992"},
		{0xc340000000000000, "-9007199254740992"},
		{0x4430000000000000, "295147905179352830000"},
		{0x44b52d02c7e14af5, "9.999999999999997e+22"},
		{0x44b52d02c7e14af6, "1e+23"},
		{0x44b52d02c7e14af7, "1.0000000000000001e+23"},
		{0x444b1ae4d6e2ef4e, "999999999999999700000"},
		{0x444b1ae4d6e2ef4f, "999999999999999900000"},
		{0x444b1ae4d6e2ef50, "1e+21"},
		{0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"},
		{0x3eb0c6f7a0b5ed8d, "0.000001"},
		{0x41b3de4355555553, "333333333.3333332"},
		{0x41b3de4355555554, "333333333.33333325"},
		{0x41b3de4355555555, "333333333.3333333"},
		{0x41b3de4355555556, "333333333.3333334"},
		{0x41b3de4355555557, "333333333.33333343"},
		{0xbecbf647612f3696, "-0.0000033333333333333333"},
		{0x43143ff3c1cb0959, "1424953923781206.2"},
	} {
		if got := FormatDouble(math.Float64frombits(tc.bits)); got != tc.want {
			t.Errorf("%016x: %s, want %s", tc.bits, got, tc.want)
		}
	}
}

func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{ // RFC 8785, section 3.2.2
			"rfc example",
			`{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			`{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{ // RFC 8785, section 3.2.3: names sort by UTF-16 code units
			"rfc sorting",
			`{"\u20ac": "Euro Sign", "\r": "Carriage Return", "\ufb33": "Hebrew Letter Dalet With Dagesh", "1": "One",
			  "\ud83d\ude00": "Emoji: Grinning Face", "\u0080": "Control", "\u00f6": "Latin Small Letter O With Diaeresis"}`,
			"{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin Small Letter O With Diaeresis\"," +
				"\"€\":\"Euro Sign\",\"😀\":\"Emoji: Grinning Face\",\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{"nested", ` [ 56 , { "d" : true , "10" : null , "1" : [ ] } ] `, `[56,{"1":[],"10":null,"d":true}]`},
		{"html not escaped", `{"a":"<b>&</b>\u2028"}`, "{\"a\":\"<b>&</b>\u2028\"}"},
		{"integers", `[1.0, -0, 100, 1e2, 12345678901234567890]`, `[1,0,100,100,12345678901234567000]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Canonicalize([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	for _, in := range []string{
		``, `{`, `{"a":1,}`, `[1] [2]`, `{"a":1,"a":2}`, `{"b":{"x":1,"x":1}}`, `1e400`, "\"\xff\"",
	} {
		if got, err := Canonicalize([]byte(in)); !errors.Is(err, ErrNotCanonicalizable) {
			t.Errorf("Canonicalize(%q) = %q, %v; want ErrNotCanonicalizable", in, got, err)
		}
	}
}
