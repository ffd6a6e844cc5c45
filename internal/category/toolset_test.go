package category

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFingerprintOf(t *testing.T) {
	a := FingerprintOf([]string{"search_flights", "book_hotel", "get_weather"})
	for _, tc := range []struct {
		name  string
		tools []string
		same  bool
	}{
		{"same set", []string{"search_flights", "book_hotel", "get_weather"}, true},
		{"other order", []string{"get_weather", "search_flights", "book_hotel"}, true},
		{"a name twice", []string{"get_weather", "search_flights", "book_hotel", "get_weather"}, true},
		{"one name more", []string{"search_flights", "book_hotel", "get_weather", "ping"}, false},
		{"one name less", []string{"search_flights", "book_hotel"}, false},
		{"case differs", []string{"Search_flights", "book_hotel", "get_weather"}, false},
	} {
		if got := FingerprintOf(tc.tools) == a; got != tc.same {
			t.Errorf("%s: same fingerprint = %v, want %v", tc.name, got, tc.same)
		}
	}
	// Names are length-prefixed: moving a letter from one name to the next
	// is another set.
	if FingerprintOf([]string{"ab", "c"}) == FingerprintOf([]string{"a", "bc"}) {
		t.Error("[ab c] and [a bc] share a fingerprint")
	}
	if got := FingerprintOf(nil); got != "" {
		t.Errorf("FingerprintOf(nil) = %q, want empty", got)
	}
	if len(a) != 32 {
		t.Errorf("fingerprint %q: want 32 hex digits", a)
	}
}

func TestToolSetCounter(t *testing.T) {
	var c ToolSetCounter
	gateway := []string{"call_tool", "list_servers", "search_hotels"}
	for i := range 19 {
		// Each server lists the set in its own order.
		c.Add([]string{gateway[i%3], gateway[(i+1)%3], gateway[(i+2)%3]})
	}
	c.Add(nil)
	c.Add([]string{"search_hotels"})
	fp := FingerprintOf(gateway)
	if got := c.Count(fp); got != 19 {
		t.Fatalf("Count = %d, want 19", got)
	}
	if got := c.Common(); len(got) != 0 {
		t.Errorf("19 servers: Common() = %v, want none", got)
	}
	if got := c.Add(gateway); got != fp {
		t.Errorf("Add returned %q, want %q", got, fp)
	}
	if diff := cmp.Diff(CommonSets{fp: {}}, c.Common()); diff != "" {
		t.Errorf("20 servers: Common() (-want +got):\n%s", diff)
	}
	if got := c.Count(""); got != 0 {
		t.Errorf("an empty tool set was counted %d times", got)
	}
}

// The 20-server rule end to end: a tool set that 19 servers list still
// decides a category; at 20 it is a gateway's and decides nothing, though the
// name and description still do.
func TestCommonToolSetIsDropped(t *testing.T) {
	r := mustLoad(t)
	gateway := []string{"search_flights", "book_hotel", "list_airports", "call_tool"}
	for _, tc := range []struct {
		servers int
		s       Server
		want    Result
	}{
		{19, Server{ToolNames: gateway},
			Result{Category: Travel, Source: FromTools, Evidence: gateway[:3]}},
		{20, Server{ToolNames: gateway}, Result{Reason: CommonToolSet}},
		{20, Server{ToolNames: []string{"list_airports", "call_tool", "book_hotel", "search_flights"}},
			Result{Reason: CommonToolSet}},
		{20, Server{ToolNames: gateway[:3]},
			Result{Category: Travel, Source: FromTools, Evidence: gateway[:3]}},
		{20, Server{Name: "com.example/music", ToolNames: gateway},
			Result{Category: Media, Source: FromName, Evidence: []string{"music"}}},
	} {
		t.Run(fmt.Sprint(tc.servers, tc.s.Name, tc.s.ToolNames), func(t *testing.T) {
			var c ToolSetCounter
			for range tc.servers {
				c.Add(gateway)
			}
			if diff := cmp.Diff(tc.want, r.Categorize(tc.s, c.Common())); diff != "" {
				t.Errorf("Categorize (-want +got):\n%s", diff)
			}
		})
	}
}
