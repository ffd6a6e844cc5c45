package category

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendWords(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"search_hotels", []string{"search", "hotels"}},
		{"getFlightStatus", []string{"get", "flight", "status"}},
		{"GetFlightStatus", []string{"get", "flight", "status"}},
		{"book-car-rental", []string{"book", "car", "rental"}},
		{"maps.directions.v2", []string{"maps", "directions", "v2"}},
		{"HTTPServer", []string{"http", "server"}},
		{"listS3Buckets", []string{"list", "s3", "buckets"}},
		{"io.github.acme/real-estate-mcp", []string{"io", "github", "acme", "real", "estate", "mcp"}},
		{"SEARCH_FLIGHTS", []string{"search", "flights"}},
		{"  Find flights, hotels & cars!  ", []string{"find", "flights", "hotels", "cars"}},
		{"Café-Menü", []string{"café", "menü"}},
		{"ÉtatCivil", []string{"état", "civil"}},
		{"__", nil},
		{"", nil},
	} {
		if diff := cmp.Diff(tc.want, appendWords(nil, tc.in)); diff != "" {
			t.Errorf("appendWords(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestBases(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"flight", []string{"flight"}},
		{"flights", []string{"flights", "flight"}},
		{"buses", []string{"buses", "buse", "bus"}},
		{"companies", []string{"companies", "companie", "compani", "company"}},
		{"news", []string{"news", "new"}},
		{"tvs", []string{"tvs", "tv"}},
		{"us", []string{"us"}},
		{"s", []string{"s"}},
	} {
		var buf [4]string
		if diff := cmp.Diff(tc.want, bases(tc.in, &buf)); diff != "" {
			t.Errorf("bases(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestToolWordsPeelsGlueWords(t *testing.T) {
	r := mustLoad(t)
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"getflights", []string{"get", "flights"}},
		{"hotelsearch", []string{"hotel", "search"}},
		{"getflightstatus", []string{"get", "flight", "status"}},
		{"searchrealestate", []string{"search", "realestate"}},
		{"listHotelsByCity", []string{"list", "hotels", "by", "city"}},
		// Nothing to reveal: words stay whole.
		{"address", []string{"address"}},                         // add+ress
		{"forecast", []string{"forecast"}},                       // for+ecast
		{"newspaper", []string{"newspaper"}},                     // a keyword itself
		{"getall", []string{"getall"}},                           // generic glued to generic
		{"tohotel", []string{"tohotel"}},                         // "to" is too short to peel
		{"getgetgetgetflights", []string{"getgetgetgetflights"}}, // more than maxPeels
	} {
		got, _ := r.toolWords(nil, nil, tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("toolWords(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}
