package category

import (
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tools returns n tool names built from format, e.g. tools("get_flight_%d", 3).
func tools(format string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i+1)
	}
	return out
}

func concat(lists ...[]string) []string { return slices.Concat(lists...) }

func TestNameAndDescription(t *testing.T) {
	r := mustLoad(t)
	for _, tc := range []struct {
		name string
		s    Server
		want Result
	}{
		{
			name: "keyword in the name",
			s:    Server{Name: "io.github.acme/flight-finder"},
			want: Result{Category: Travel, Source: FromName, Evidence: []string{"flight"}},
		},
		{
			name: "camelCase name, plural",
			s:    Server{Name: "com.example/HotelsAndFlights"},
			want: Result{Category: Travel, Source: FromName, Evidence: []string{"hotel", "flight"}},
		},
		{
			name: "keyword in the title",
			s:    Server{Name: "com.example/acme", Title: "Acme Recipes"},
			want: Result{Category: FoodDelivery, Source: FromName, Evidence: []string{"recipe"}},
		},
		{
			name: "description only",
			s:    Server{Name: "com.example/acme", Description: "Real-time stock quotes and dividend history."},
			want: Result{Category: Finance, Source: FromDescription, Evidence: []string{"stock", "dividend"}},
		},
		{
			name: "name beats a description with more keywords",
			s: Server{Name: "com.example/flights",
				Description: "Pay for tickets with a credit card, bank transfer or wallet."},
			want: Result{Category: Travel, Source: FromName, Evidence: []string{"flight"}},
		},
		{
			name: "more distinct keywords in the name win",
			s:    Server{Name: "com.example/stock-ticker-flight", Description: "hotels, airports, resorts"},
			want: Result{Category: Finance, Source: FromName, Evidence: []string{"stock", "ticker"}},
		},
		{
			name: "equal in the name: more keywords overall win",
			s:    Server{Name: "com.example/music-hotel", Description: "Hotel booking with airport transfers."},
			want: Result{Category: Travel, Source: FromName, Evidence: []string{"hotel", "airport"}},
		},
		{
			name: "a repeated keyword counts once",
			s:    Server{Description: "Hotel, hotel, hotels and hotel deals, paid by bank payment."},
			want: Result{Category: Finance, Source: FromDescription, Evidence: []string{"bank", "payment"}},
		},
		{
			name: "full tie: the earlier match wins",
			s:    Server{Description: "Podcast charts and recipe ideas"},
			want: Result{Category: Media, Source: FromDescription, Evidence: []string{"podcast"}},
		},
		{
			name: "full tie, other order",
			s:    Server{Description: "Recipe ideas and podcast charts"},
			want: Result{Category: FoodDelivery, Source: FromDescription, Evidence: []string{"recipe"}},
		},
		{
			name: "the longer phrase wins over its first word",
			s:    Server{Description: "Order from Uber Eats"},
			want: Result{Category: FoodDelivery, Source: FromDescription, Evidence: []string{"uber eats"}},
		},
		{
			name: "the word alone is another category",
			s:    Server{Description: "Order an Uber"},
			want: Result{Category: MapsTransport, Source: FromDescription, Evidence: []string{"uber"}},
		},
		{
			name: "phrase across a line break and case",
			s:    Server{Description: "Listings and\nREAL   Estate valuations"},
			want: Result{Category: RealEstate, Source: FromDescription, Evidence: []string{"real estate"}},
		},
		{
			name: "ignored phrase hides its keyword",
			s:    Server{Name: "com.example/ops", Description: "Server health checks and a site map."},
			want: Result{Reason: NoTools},
		},
		{
			name: "whole words only",
			s:    Server{Name: "com.example/workshop", Description: "Bankruptcy filings and shopkeepers' mapping tools"},
			want: Result{Reason: NoTools},
		},
		{
			name: "name and description beat tool names",
			s: Server{Name: "com.example/payments",
				ToolNames: concat(tools("search_flights_%d", 6), tools("book_hotel_%d", 6))},
			want: Result{Category: Finance, Source: FromName, Evidence: []string{"payment"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, r.Categorize(tc.s, nil)); diff != "" {
				t.Errorf("Categorize (-want +got):\n%s", diff)
			}
		})
	}
}

func TestToolNames(t *testing.T) {
	r := mustLoad(t)
	travel3 := []string{"search_flights", "bookHotel", "list-airports"}
	for _, tc := range []struct {
		name string
		s    Server
		want Result
	}{
		{
			name: "no tools",
			s:    Server{Name: "com.example/acme"},
			want: Result{Reason: NoTools},
		},
		{
			name: "2 names: too few",
			s:    Server{ToolNames: travel3[:2]},
			want: Result{Reason: TooFewTools},
		},
		{
			name: "3 names: a category",
			s:    Server{ToolNames: travel3},
			want: Result{Category: Travel, Source: FromTools, Evidence: travel3},
		},
		{
			name: "a duplicated name counts once",
			s:    Server{ToolNames: []string{"search_flights", "search_flights", "bookHotel"}},
			want: Result{Reason: TooFewTools},
		},
		{
			name: "exactly twice the runner-up wins",
			s:    Server{ToolNames: concat(tools("get_flight_%d", 4), tools("get_invoice_%d", 2))},
			want: Result{Category: Travel, Source: FromTools, Evidence: tools("get_flight_%d", 4)},
		},
		{
			name: "just under twice the runner-up",
			s:    Server{ToolNames: concat(tools("get_flight_%d", 5), tools("get_invoice_%d", 3))},
			want: Result{Reason: NotDominant},
		},
		{
			name: "3 against 2 is not twice",
			s:    Server{ToolNames: concat(tools("get_flight_%d", 3), tools("get_invoice_%d", 2))},
			want: Result{Reason: NotDominant},
		},
		{
			name: "exactly a quarter of the tools",
			s:    Server{ToolNames: concat(travel3, tools("run_job_%d", 9))},
			want: Result{Category: Travel, Source: FromTools, Evidence: travel3},
		},
		{
			name: "just under a quarter",
			s:    Server{ToolNames: concat(travel3, tools("run_job_%d", 10))},
			want: Result{Reason: TooSmallShare},
		},
		{
			name: "a quarter of the reported count, names capped",
			s:    Server{ToolNames: travel3, ToolCount: 12},
			want: Result{Category: Travel, Source: FromTools, Evidence: travel3},
		},
		{
			name: "under a quarter of the reported count",
			s:    Server{ToolNames: travel3, ToolCount: 13},
			want: Result{Reason: TooSmallShare},
		},
		{
			name: "a name referring to two topics counts for both",
			// travel 3, finance 3; were each counted for one topic only,
			// travel would have 3 against 0 and win.
			s:    Server{ToolNames: []string{"flight_payment", "hotelInvoice", "airfare-payment"}},
			want: Result{Reason: NotDominant},
		},
		{
			name: "generic words alone refer to nothing",
			s:    Server{ToolNames: []string{"search", "fetch", "get", "list_all", "query"}},
			want: Result{Reason: NoTopic},
		},
		{
			name: "generic words glued to keywords are peeled",
			s:    Server{ToolNames: []string{"getflights", "hotelsearch", "listairlines", "getall"}},
			want: Result{Category: Travel, Source: FromTools,
				Evidence: []string{"getflights", "hotelsearch", "listairlines"}},
		},
		{
			name: "every separator style",
			s:    Server{ToolNames: []string{"maps.directions", "get-geocode", "parkingSpots", "TRANSIT_TIMES"}},
			want: Result{Category: MapsTransport, Source: FromTools,
				Evidence: []string{"maps.directions", "get-geocode", "parkingSpots", "TRANSIT_TIMES"}},
		},
		{
			name: "ignored phrases count for nothing",
			s:    Server{ToolNames: []string{"health_check", "get_server_health", "systemHealth", "heat_map"}},
			want: Result{Reason: NoTopic},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, r.Categorize(tc.s, nil)); diff != "" {
				t.Errorf("Categorize (-want +got):\n%s", diff)
			}
		})
	}
}
