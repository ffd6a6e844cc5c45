package feed

import (
	"slices"

	"github.com/cardcrawl/cardcrawl/servercard"
)

// The feed republishes no link that is not a web URL: a javascript:, data:
// or vbscript: websiteUrl or repository, an icon that is not https (the
// Registry's server.json schema the feed claims says HTTPS only), a remote
// URL of another scheme. The feed is served with
// Access-Control-Allow-Origin: * and read by other directories; the card's
// findings keep the record of what was dropped (see servercard/links.go).

// dropUnsafeRecordLinks removes such links from a record.
func dropUnsafeRecordLinks(r *Record) {
	if !servercard.IsWebURL(r.WebsiteURL) {
		r.WebsiteURL = ""
	}
	if r.Repository != nil && !servercard.IsWebURL(r.Repository.URL) {
		// server.json requires a repository's url: without it there is no
		// repository to publish.
		r.Repository = nil
	}
}

// dropUnsafeCardLinks removes them from the copy of a card the Registry
// JSON and the AI Catalog republish.
func dropUnsafeCardLinks(c *servercard.Card) {
	dropUnsafeLinks(&c.WebsiteURL, &c.Repository, &c.Icons, &c.Remotes)
}

// dropUnsafeLinks removes the links of a card or a server.json (the two
// share these types) that are not web URLs, icons that are not https.
func dropUnsafeLinks(website *string, repo **servercard.Repository, icons *[]servercard.Icon, remotes *[]servercard.Remote) {
	if !servercard.IsWebURL(*website) {
		*website = ""
	}
	if *repo != nil && !servercard.IsWebURL((*repo).URL) {
		*repo = nil
	}
	*icons = slices.DeleteFunc(*icons, unsafeIcon)
	*remotes = slices.DeleteFunc(*remotes, unsafeRemote)
}

func unsafeIcon(ic servercard.Icon) bool     { return !servercard.IsHTTPSURL(ic.Src) }
func unsafeRemote(rm servercard.Remote) bool { return !servercard.IsWebRemoteURL(rm.URL) }
