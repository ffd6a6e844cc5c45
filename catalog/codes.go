package catalog

// Finding codes this package emits. They are stable: the store, the CLI and
// scripts match on them. (utf8_bom is finding.CodeUTF8BOM, shared with
// servercard.)
const (
	CodeDigestMalformed        = "entry_digest_malformed"   // warning
	CodeDigestUnsupported      = "entry_digest_unsupported" // info
	CodeDigestWeak             = "entry_digest_weak"        // warning
	CodeDuplicateJSONKey       = "duplicate_json_key"       // warning
	CodeEntriesTruncated       = "entries_truncated"        // warning
	CodeEntryInvalidIdentifier = "entry_invalid_identifier" // error
	CodeEntryInvalidType       = "entry_invalid_type"       // error
	CodeEntryInvalidURL        = "entry_invalid_url"        // error
	CodeEntryMissingIdentifier = "entry_missing_identifier" // error
	CodeEntryMissingType       = "entry_missing_type"       // error
	CodeEntryNoURLOrData       = "entry_no_url_or_data"     // error
	CodeEntryNotObject         = "entry_not_object"         // error
	CodeEntryURLAndData        = "entry_url_and_data"       // error
	CodeHostNotObject          = "host_not_object"          // warning
	CodeNotCatalog             = "not_catalog"              // error
	CodeNotJSON                = "not_json"                 // error
	CodeSpecVersionDraft       = "spec_version_draft"       // warning
	CodeSpecVersionMajorOlder  = "spec_version_major_older" // warning
	CodeSpecVersionMalformed   = "spec_version_malformed"   // warning
	CodeSpecVersionMinorNewer  = "spec_version_minor_newer" // info
	CodeSpecVersionMissing     = "spec_version_missing"     // warning
	CodeSpecVersionUnsupported = "spec_version_unsupported" // error
)

// RulesVersion names the rules of catalog.Parse. It is stored with every
// judgement they make; change it whenever a change to them would judge a
// stored document differently (a new finding, another severity or grade),
// so that `crawl --revalidate` and the next Registry sync re-judge stored
// documents without fetching them again.
const RulesVersion = "catalog/2"
