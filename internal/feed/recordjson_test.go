package feed

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cardcrawl/cardcrawl/registry/wire"
	"github.com/cardcrawl/cardcrawl/servercard"
)

// fill sets every field reachable from v (pointers allocated, slices of
// two) from the strings given in turn, so a field added to Record is set
// here without this test changing.
func fill(v reflect.Value, strs []string, n *int) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), strs, n)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), strs, n)
		}
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			q, _ := json.Marshal(strs[*n%len(strs)])
			v.SetBytes([]byte(` {"a": [1, ` + string(q) + `] } `))
			*n++
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 2, 2))
		for i := range 2 {
			fill(v.Index(i), strs, n)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		for i := range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			k.SetString(strs[(*n+i)%len(strs)] + strconv.Itoa(i))
			e := reflect.New(v.Type().Elem()).Elem()
			fill(e, strs, n)
			v.SetMapIndex(k, e)
		}
	case reflect.String:
		v.SetString(strs[*n%len(strs)])
		*n++
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int:
		v.SetInt(int64(*n * 7))
		*n++
	default:
		panic("fill: add a case for " + v.Kind().String())
	}
}

// TestRecordJSONMatchesEncodingJSON: appendRecord writes what
// encoding/json does, byte for byte, for a record with every field set,
// one with none, and strings that need escaping.
func TestRecordJSONMatchesEncodingJSON(t *testing.T) {
	tricky := []string{"plain", `quote " and \ backslash`, "ctl \x00\x01\b\f\n\r\t\x1f\x7f", "<html> & 'x'",
		"bad utf8 \xff\xfe end", "seps \u2028 \u2029", "ünïcødé ✓ 𝄞", "", "=cmd"}
	full := Record{}
	n := 0
	fill(reflect.ValueOf(&full).Elem(), tricky, &n)
	cases := map[string]Record{"full": full, "zero": {}}
	for i, s := range tricky {
		r := full
		r.Name, r.Description = s, tricky[(i+1)%len(tricky)]
		cases["string "+s] = r
	}
	empty := full
	empty.Findings, empty.ListedBy, empty.Sources = []string{}, []Listing{}, []string{}
	empty.Reconcile = &ReconcileFacts{}
	empty.Namespace = &NamespaceFacts{Found: json.RawMessage{}}
	empty.ProbeHistory = &ProbeHistory{ByOutcome: []OutcomeCount{}}
	cases["empty lists"] = empty
	for name, r := range cases {
		var want strings.Builder
		enc := newEncoder(&want)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		got := string(appendRecord(nil, &r)) + "\n"
		if diff := cmp.Diff(want.String(), got); diff != "" {
			t.Errorf("%s (-encoding/json +appendRecord):\n%s", name, diff)
		}
	}
}

// FuzzAppendJSONString: any string quotes as encoding/json quotes it.
func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "a\"b\\c", "\x00\u2028\xff", "<>&", "é\U0001F600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want strings.Builder
		enc := newEncoder(&want)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := string(appendJSONString(nil, s)) + "\n"; got != want.String() {
			t.Errorf("%q: got %s want %s", s, got, want.String())
		}
	})
}

// TestRegistryEntryJSONMatchesEncodingJSON: appendRegistryEntry writes
// what encoding/json does, for an entry with every field set (remotes with
// headers and variables, and packages, go through encoding/json), one as
// a card gives it (plain remotes, written by hand), and one with none.
func TestRegistryEntryJSONMatchesEncodingJSON(t *testing.T) {
	tricky := []string{"plain", `q " \ b`, "ctl \x00\n\t", "<a> & b", "bad \xff", "sep \u2028", "", "é✓"}
	full := RegistryEntry{}
	n := 0
	fill(reflect.ValueOf(&full).Elem(), tricky, &n)
	card := full
	card.Server.Packages, card.Server.Meta = nil, nil
	card.Server.Remotes = []wire.Remote{{Type: "streamable-http", URL: "https://a.example/mcp?x=<1>&y"}, {Type: "sse", URL: tricky[1]}}
	card.Server.Icons = append(card.Server.Icons, servercard.Icon{Src: "https://a.example/i.png"})
	card.Meta.Discovery.Removed, card.Meta.Discovery.Sources = nil, nil
	for name, e := range map[string]RegistryEntry{"full": full, "card": card, "zero": {}} {
		var want strings.Builder
		if err := newEncoder(&want).Encode(e); err != nil {
			t.Fatal(err)
		}
		got := string(appendRegistryEntry(nil, &e)) + "\n"
		if diff := cmp.Diff(want.String(), got); diff != "" {
			t.Errorf("%s (-encoding/json +appendRegistryEntry):\n%s", name, diff)
		}
	}
}

// TestServerListJSONMatchesEncodingJSON: the API's list answer, written
// without reflection, is what writeJSONResponse's encoder writes.
func TestServerListJSONMatchesEncodingJSON(t *testing.T) {
	full := wire.ServerList[RegistryEntry]{}
	n := 0
	fill(reflect.ValueOf(&full).Elem(), []string{"a", `"b\`, "<c>", "\u2028", ""}, &n)
	for name, l := range map[string]wire.ServerList[RegistryEntry]{"full": full, "empty": {Servers: []RegistryEntry{}}, "zero": {}} {
		var want strings.Builder
		if err := newEncoder(&want).Encode(l); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.String(), string(appendServerList(nil, &l))+"\n"); diff != "" {
			t.Errorf("%s (-encoding/json +appendServerList):\n%s", name, diff)
		}
	}
}
