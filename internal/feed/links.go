package feed

import "github.com/cardcrawl/cardcrawl/servercard"

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
