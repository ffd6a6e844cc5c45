package fetch_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/cardcrawl/cardcrawl/internal/fetch"
)

// A catalog fetch with revalidation; the example is compiled, not run,
// because it would touch the network.
func ExampleClient_Get() {
	ct, err := fetch.ParseConnectTo("example.com:443:127.0.0.1:8443") // --connect-to
	if err != nil {
		panic(err)
	}
	c, err := fetch.New(fetch.Options{ConnectTo: []fetch.ConnectTo{ct}, Logger: slog.Default()})
	if err != nil {
		panic(err)
	}
	r := c.Get(context.Background(), fetch.Request{
		URL:         "https://example.com/.well-known/ai-catalog.json",
		Accept:      "application/ai-catalog+json, application/json;q=0.5",
		IfNoneMatch: `"v1"`, // the ETag stored from the last crawl
	})
	switch {
	case r.Class != "":
		fmt.Println("failed:", r.Class, r.Err)
	case r.NotModified:
		fmt.Println("unchanged")
	default:
		fmt.Println(len(r.Body), "bytes, sha256", r.SHA256)
	}
}
