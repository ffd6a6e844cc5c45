package catalog

import "testing"

func BenchmarkParse5000(b *testing.B) {
	body := genCatalog(5000)
	base := mustURL(b, "https://example.com/.well-known/ai-catalog.json")
	opts := Options{MaxEntries: 5000}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		c, _, err := Parse(body, base, opts)
		if err != nil || len(c.Entries) != 5000 {
			b.Fatalf("Parse: %d entries, err %v", len(c.Entries), err)
		}
	}
}
