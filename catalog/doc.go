// Package catalog reads AI Catalog documents (/.well-known/ai-catalog.json)
// and finds where a site advertises one. It is pure: bytes and headers in,
// values and findings out, no I/O.
//
// Parsing is deliberately tolerant, because catalogs in the wild span several
// revisions of the format (the older `mediaType` spelling, the interim MCP
// Catalog's specVersion "draft", ARD's extra fields). A bad entry is skipped
// and recorded; the rest of the catalog still counts. Unknown members are
// never findings: the format is open.
//
// Finding codes (stable; Path is a JSON pointer):
//
// Document level:
//   - not_json (error): empty, HTML or malformed JSON; Parse returns ErrNotJSON.
//   - not_catalog (error): JSON, but not an object with an `entries` array; ErrNotCatalog.
//   - spec_version_unsupported (error): major version above 1, or not "M.m"; ErrUnsupportedVersion.
//   - utf8_bom (warning): a byte order mark preceded the JSON; it was ignored.
//   - duplicate_json_key (warning): a member name repeats within one object
//     (I-JSON/JCS violation); the last occurrence wins, as in most parsers.
//     Path names the repeated member.
//   - spec_version_missing (warning): no specVersion; "1.0" is assumed.
//   - spec_version_draft (warning): "draft" from the interim MCP Catalog, a strict subset.
//   - spec_version_malformed (warning): major 1 but not written as a "M.m" string
//     (a JSON number, "1", "1.0.0", surrounding spaces).
//   - spec_version_minor_newer (info): 1.x with x > 0; newer minors only add optional fields.
//   - spec_version_major_older (warning): major 0, read as if it were 1.
//   - host_not_object (warning): `host` is present but not an object.
//   - entries_truncated (warning): more entries than Options.MaxEntries; the rest were not read.
//
// Entry level (Path is the entry's pointer, "/entries/N"); errors mean the entry was skipped:
//   - entry_not_object (error)
//   - entry_missing_identifier, entry_invalid_identifier (error): absent; not a non-empty string.
//   - entry_missing_type, entry_invalid_type (error): neither `type` nor `mediaType`; not a non-empty string.
//   - entry_legacy_media_type (info): the type came from the older `mediaType` member.
//   - entry_type_conflict (warning): both `type` and `mediaType`, with different essences; `type` wins.
//   - entry_url_and_data (error), entry_no_url_or_data (error): the entry needs exactly one.
//   - entry_invalid_url (error): `url` is not a non-empty string.
//   - entry_url_relative (info): a relative reference, resolved against the base.
//   - entry_url_unresolvable (warning): relative with no base, or not parseable; ResolvedURL is "".
//   - entry_invalid_field (warning): an optional member (version, displayName, description)
//     has the wrong JSON type and was ignored.
//   - duplicate_identifier (error): identifier (and version) repeat an earlier entry; the later one is skipped.
//   - duplicate_identifier_unversioned (warning): the identifier repeats, and one of the two
//     entries has no version, so they cannot be told apart reliably; both are kept.
//
// A JSON null member counts as absent throughout, since some producers emit
// nulls for every optional field.
package catalog
