package category

import "testing"

// BenchmarkCategorize times one server through each rule: a typical card
// (rule 1 decides) and a server whose 40 tool names decide (rule 2, with a
// common-set lookup).
func BenchmarkCategorize(b *testing.B) {
	r := mustLoad(b)
	byText := Server{
		Name:  "io.github.example/trip-planner",
		Title: "Trip Planner",
		Description: "Plan a trip end to end: compare flights across airlines, find hotels near " +
			"your meetings, and keep the itinerary in one place. Prices in any currency.",
	}
	byTools := Server{
		Name:        "com.example/acme-connector",
		Description: "The Acme connector for your assistant.",
		ToolNames: concat(tools("searchFlights%d", 12), tools("get_hotel_rates_%d", 8),
			tools("list-airports-%d", 5), tools("run_report_%d", 15)),
	}
	common := CommonSets{FingerprintOf([]string{"call_tool", "list_servers"}): {}}
	for _, bc := range []struct {
		name string
		s    Server
		want Source
	}{{"name", byText, FromName}, {"tool_names", byTools, FromTools}} {
		b.Run(bc.name, func(b *testing.B) {
			if got := r.Categorize(bc.s, common); got.Source != bc.want {
				b.Fatalf("Categorize: %+v, want source %s", got, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				r.Categorize(bc.s, common)
			}
		})
	}
}
