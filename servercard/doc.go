// Package servercard reads MCP Server Cards (SEP-2127, schema v1): it decodes
// a card tolerantly, validates it against the vendored JSON Schema at
// #/$defs/ServerCard, grades it, normalises remote URLs into the program's
// dedup key, and compares two cards field by field. It is pure: the only
// document it ever reads is the schema embedded from schema/ (see
// schema/SOURCES.md); `$schema` is compared as a string, never fetched.
//
// # Grades
//
// Check gives every document one Grade:
//
//   - conformant: schema-valid at #/$defs/ServerCard and no error finding
//     (so a version range, which the schema does not catch, is not conformant).
//     A non-semver version such as "github-mcp-server/remote-7835a232" and a
//     remote URL with a trailing slash are fine.
//   - near_conformant: the card has at least one usable remote (type
//     streamable-http or sse, and a URL that the schema's pattern accepts:
//     http(s)://… or a leading {template}) and every error is fixable. Fixable
//     errors are: anything about $schema (schema_missing, schema_wrong — for
//     example a date-versioned card URL —, schema_server_json for a Registry
//     server.json), version_range, url_scheme_not_allowed (a javascript: or
//     other non-http(s) link or icon), and schema errors located under
//     /description, /title, /websiteUrl, /icons, /repository or /_meta (too
//     long, missing description, wrong type…). Unknown members such as
//     packages or serverUrl are not errors at all: the schema's objects are
//     open; they are reported as nonstandard_field (info).
//   - non_conformant: everything else — not an object, a legacy shape, a
//     missing or malformed name, a missing or non-string version, any schema
//     error inside remotes (even when another remote is usable: the card is
//     broken where it matters most), or errors of any kind without a usable
//     remote. The crawler still uses whatever remotes decoded.
//
// # Shapes
//
// Result.Shape says what the document looks like, independent of the grade:
// "card" ($schema names a server-card schema, or no better guess and some card
// member is present), "server_json" ($schema ends in /server.schema.json, or
// there is a packages member), "legacy" (no remotes but SEP-1649-era or ad-hoc
// members: serverInfo, transports, endpoints, url, authentication, tools…),
// "unknown" (not an object, or nothing card-like).
//
// # Finding codes
//
// Schema errors become one finding each (error severity) with Path set to the
// JSON pointer of the offending instance value and Code "schema_" plus the
// failing keyword in snake case: schema_required (Path points at the missing
// member), schema_type, schema_enum, schema_pattern, schema_min_length,
// schema_max_length… Errors at /$schema are reported only through the
// semantic codes below. Semantic codes (see the Code* constants):
//
//	invalid_json, not_object           error   not a JSON object (Card is nil)
//	utf8_bom                           warning leading BOM, skipped
//	schema_missing                     error   no $schema (fixable)
//	schema_wrong                       error   $schema is something else; message has it (fixable)
//	schema_server_json                 error   $schema is a Registry server.schema.json (fixable)
//	version_range                      error   ^1.2.3, ~1.2.3, >=1.2.3, 1.x, 1.*, *, latest… (fixable)
//	legacy_shape                       error   pre-v1 shape
//	no_remotes                         warning nothing to connect to
//	no_usable_remote                   warning remotes, but none usable
//	remote_templated                   info    remote URL has {placeholders}
//	remote_template_undefined          warning a placeholder missing from variables
//	remote_plain_http                  warning http:// remote
//	remote_non_public_address          warning IP-literal host outside public address space
//	remote_userinfo                    warning user@host in a remote URL
//	remote_url_invalid                 warning remote URL passes the pattern but cannot be normalised
//	remote_duplicate                   info    same type and normalised URL twice
//	secret_header_value                warning isSecret header (or header variable) with a literal value: a leaked credential
//	secret_variable_value              warning isSecret URL variable with a literal value
//	invalid_uri                        warning websiteUrl, repository.url or icon src not an absolute URI
//	url_scheme_not_allowed             error   websiteUrl or repository.url not http(s), icon src neither http(s) nor base64 image data: (fixable; see links.go)
//	icon_not_https                     warning http: or data: icon: the card schema allows it, the feed leaves it out
//	nonstandard_field                  info    top-level member outside the schema
//	internal_error                     error   the validator failed on this input
//
// Format keywords ("format": "uri") are annotations under JSON Schema 2020-12
// and are not asserted by the schema check; invalid_uri covers them as a
// warning so that they do not change the grade.
package servercard
