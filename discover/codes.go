package discover

// Finding codes the crawl adds to catalog and card findings: what the walk
// itself met (bounds, nesting, fallbacks), as opposed to what a parser
// found in one document. They are stable: scripts match on them.
const (
	CodeCardURLUnresolvable       = "card_url_unresolvable"       // error
	CodeCardsTruncated            = "cards_truncated"             // warning
	CodeCatalogCycle              = "catalog_cycle"               // warning
	CodeCatalogsTruncated         = "catalogs_truncated"          // warning
	CodeDigestMismatch            = "entry_digest_mismatch"       // error
	CodeDigestUnverifiable        = "entry_digest_unverifiable"   // warning
	CodeFoundViaLink              = "found_via_link"              // info
	CodeLegacyLocation            = "legacy_location"             // warning
	CodeNestedCatalogFailed       = "nested_catalog_failed"       // error
	CodeNestedCatalogInvalid      = "nested_catalog_invalid"      // error
	CodeNestedCatalogUnresolvable = "nested_catalog_unresolvable" // error
	CodeNestingTooDeep            = "nesting_too_deep"            // warning
	CodeRemotesTruncated          = "remotes_truncated"           // warning
	CodeSignatureInvalid          = "signature_invalid"           // error
	CodeSignatureNotEndorsement   = "signature_not_endorsement"   // warning
	CodeSignatureUnverifiable     = "signature_unverifiable"      // warning
	CodeSignatureVerified         = "signature_verified"          // info
	CodeSignaturesTruncated       = "signatures_truncated"        // warning
)

// CrawlCode reports whether code is one the crawl adds (above) rather
// than one a parser found in the document: re-judging a stored document
// with newer rules replaces the parser's findings and keeps these.
func CrawlCode(code string) bool {
	switch code {
	case CodeCardURLUnresolvable, CodeCardsTruncated, CodeCatalogCycle, CodeCatalogsTruncated, CodeDigestMismatch,
		CodeDigestUnverifiable, CodeFoundViaLink,
		CodeLegacyLocation, CodeNestedCatalogFailed, CodeNestedCatalogInvalid, CodeNestedCatalogUnresolvable,
		CodeNestingTooDeep, CodeRemotesTruncated, CodeSignatureInvalid, CodeSignatureNotEndorsement,
		CodeSignatureUnverifiable, CodeSignatureVerified, CodeSignaturesTruncated:
		return true
	}
	return false
}
