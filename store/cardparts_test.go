package store

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cardcrawl/cardcrawl/servercard"
)

// TestDecodeCardPartsInline: an inline card's parts come from the same
// decode as the card the AI Catalog carries, and dropping that card's
// unsafe links must not reach the parts (the remotes keep every entry, so
// each endpoint's record still finds its own; the parts drop what they
// drop themselves, as for a card by URL).
func TestDecodeCardPartsInline(t *testing.T) {
	cards := []string{
		`{"name":"com.example/a","websiteUrl":"javascript:alert(1)","repository":{"url":"javascript:x","source":"github"},` +
			`"icons":[{"src":"http://a.example/i.png"},{"src":"https://a.example/i.png"}],` +
			`"remotes":[{"type":"sse","url":"javascript:alert(1)"},{"type":"streamable-http","url":"https://a.example/mcp?a=1&b=<2>"}]}`,
		`{"name":"com.example/b","remotes":[{"type":"streamable-http","url":"https://b.example/mcp"}],"version":5}`,
		`{"name":`,
		``,
	}
	for _, card := range cards {
		got := decodeCardParts(card, true)
		want := decodeCardParts(card, false)
		want.catalogCard = servercard.CompactJSON(servercard.Republished(card))
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(cardParts{}), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("parts of %.40q (-want +got):\n%s", card, diff)
		}
	}
	p := decodeCardParts(cards[0], true)
	if len(p.remotes) != 2 || p.remoteJSON("https://a.example/mcp?a=1&b=<2>") == "" {
		t.Errorf("remotes of an inline card: %+v", p.remotes)
	}
	if want := `{"name":"com.example/a","icons":[{"src":"https://a.example/i.png"}],` +
		`"remotes":[{"type":"streamable-http","url":"https://a.example/mcp?a=1&b=<2>"}]}`; p.catalogCard != want {
		t.Errorf("catalog card:\n got %s\nwant %s", p.catalogCard, want)
	}
}
