package registry

import "github.com/cardcrawl/cardcrawl/internal/finding"

// Finding codes this package emits for Registry entries and server.json
// documents. They are stable: the store, the CLI and scripts match on them.
const (
	CodeEntryNotObject            = "entry_not_object"             // error
	CodeEntryUnreadable           = "entry_unreadable"             // error
	CodeMetaNotObject             = "meta_not_object"              // warning
	CodeNotJSON                   = "not_json"                     // error
	CodeNotObject                 = "not_object"                   // error
	CodeOfficialMetaUnreadable    = "official_meta_unreadable"     // warning
	CodeSchemaFieldRequired       = "schema_field_required"        // error
	CodeSchemaUnknown             = "schema_unknown"               // error
	CodeSchemaVersionDeprecated   = "schema_version_deprecated"    // warning
	CodeSchemaVersionNotAvailable = "schema_version_not_available" // error
	CodeSchemaViolation           = "schema_violation"             // error
	CodeServerFieldsUnreadable    = "server_fields_unreadable"     // warning
	CodeServerMissingKey          = "server_missing_key"           // error
	CodeServerNotObject           = "server_not_object"            // error
	CodeVersionInVersionDetail    = "version_in_version_detail"    // error
)

// RulesVersion names the rules of the server.json Validator and the entry parser. It is stored with every
// judgement they make; change it whenever a change to them would judge a
// stored document differently (a new finding, another severity or grade),
// so that `crawl --revalidate` and the next Registry sync re-judge stored
// documents without fetching them again.
const RulesVersion = "registry/2"

// Revalidate re-judges a stored entry's server.json with v: the findings
// the entry parser made from the response around it (old, codes below) are
// kept, and the validator's are replaced, as a sync would store them today.
func Revalidate(v *Validator, old finding.List, serverJSON []byte) finding.List {
	var fl finding.List
	for _, f := range old {
		switch f.Code {
		case CodeMetaNotObject, CodeOfficialMetaUnreadable, CodeServerFieldsUnreadable, CodeVersionInVersionDetail:
			fl = append(fl, f)
		}
	}
	return append(fl, v.Validate(serverJSON)...)
}
