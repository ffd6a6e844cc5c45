package feed

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cardcrawl/cardcrawl/servercard"
	"github.com/cardcrawl/cardcrawl/store"
)

// bigCardServers is what the store hands the feed for one large card that
// declares n remotes: n servers sharing one card row.
func bigCardServers(tb testing.TB, n int) []store.Server {
	tb.Helper()
	card := servercard.Card{Name: "com.example/big", Version: "1.0.0", Description: strings.Repeat("x", 64<<10)}
	for i := range n {
		card.Remotes = append(card.Remotes, servercard.Remote{Type: "streamable-http", URL: fmt.Sprintf("https://m%d.example/mcp", i)})
	}
	raw, err := json.Marshal(card)
	if err != nil {
		tb.Fatal(err)
	}
	row := store.CardRow{Key: "https://big.example/card", Name: card.Name, Version: card.Version, Grade: "conformant",
		JSON: string(raw)}
	out := make([]store.Server, n)
	for i := range n {
		u := card.Remotes[i].URL
		out[i] = store.Server{EndpointNorm: u, Endpoint: u, Transport: "streamable-http", Card: row}
	}
	return out
}

// TestRecordsDecodeEachCardOnce: a card with thousands of remotes is
// decoded once, not once per remote (which made memory grow with remotes ×
// card size: 3,000 remotes of a 1 MiB card took 1.5 GB).
func TestRecordsDecodeEachCardOnce(t *testing.T) {
	servers := bigCardServers(t, 3000)
	decodes := 0
	recs := records(servers, func(raw string) *servercard.Card {
		decodes++
		return decodeCard(raw)
	})
	if decodes != 1 {
		t.Errorf("%d card decodes for one card with %d remotes, want 1", decodes, len(servers))
	}
	if len(recs) != len(servers) || recs[len(recs)-1].card == nil || len(recs[0].card.Remotes) != 3000 {
		t.Fatalf("records = %d, want one per remote, each with its card", len(recs))
	}
}

// BenchmarkRecordsBigCard reports the bytes allocated to turn 3,000
// remotes of one 64 KiB card into feed records (go test -bench RecordsBigCard
// -benchmem ./internal/feed).
func BenchmarkRecordsBigCard(b *testing.B) {
	servers := bigCardServers(b, 3000)
	b.ReportAllocs()
	for b.Loop() {
		Records(servers)
	}
}
