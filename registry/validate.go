package registry

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

//go:embed schemas/*.server.schema.json
var schemaFS embed.FS

// CurrentSchemaVersion is the dated server.json schema the official
// Registry treats as current; older ones only earn a warning there.
const CurrentSchemaVersion = "2025-12-11"

var (
	schemaIDPattern   = regexp.MustCompile(`/schemas/([^/]+)/server\.schema\.json$|/(draft)/server\.schema\.json$`)
	strictNamePattern = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9.-]*[a-zA-Z0-9]/[a-zA-Z0-9][a-zA-Z0-9._-]*[a-zA-Z0-9]$`)
	templateVarRe     = regexp.MustCompile(`\{([^{}]+)\}`)
	repoURLPattern    = map[string]*regexp.Regexp{
		"github": regexp.MustCompile(`^https?://(www\.)?github\.com/[\w.-]+/[\w.-]+/?$`),
		"gitlab": regexp.MustCompile(`^https?://(www\.)?gitlab\.com/[\w.-]+/[\w./-]+/?$`),
	}
	subfolderChars      = regexp.MustCompile(`^[a-zA-Z0-9\-_./]+$`)
	versionRangePattern = regexp.MustCompile(`^\s*(\^|~|>=|<=|>|<|=)|\s-\s|\|\||(^|\.)(x|X|\*)(\.|$)`)
)

// Validator checks server.json documents against the dated schema each one
// names, plus the Registry's own publish-time rules that no schema states.
// It is safe for concurrent use.
type Validator struct {
	schemas map[string]*jsonschema.Schema // by version id ("2025-12-11", "draft")
	printer *message.Printer
}

// NewValidator compiles every vendored schema.
func NewValidator() (*Validator, error) {
	names, err := fs.Glob(schemaFS, "schemas/*.server.schema.json")
	if err != nil {
		return nil, fmt.Errorf("list schemas: %w", err)
	}
	c := jsonschema.NewCompiler()
	ids := map[string]string{}
	for _, name := range names {
		body, err := schemaFS.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read schema %s: %w", name, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			return nil, fmt.Errorf("parse schema %s: %w", name, err)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(name, "schemas/"), ".server.schema.json")
		loc := "mem:///" + id + ".json"
		if err := c.AddResource(loc, doc); err != nil {
			return nil, fmt.Errorf("add schema %s: %w", name, err)
		}
		ids[id] = loc
	}
	v := &Validator{schemas: map[string]*jsonschema.Schema{}, printer: message.NewPrinter(language.English)}
	for id, loc := range ids {
		s, err := c.Compile(loc)
		if err != nil {
			return nil, fmt.Errorf("compile schema %s: %w", id, err)
		}
		v.schemas[id] = s
	}
	if v.schemas[CurrentSchemaVersion] == nil {
		return nil, fmt.Errorf("current schema %s is not vendored", CurrentSchemaVersion)
	}
	return v, nil
}

// SchemaVersions lists the vendored schema ids, sorted.
func (v *Validator) SchemaVersions() []string {
	out := make([]string, 0, len(v.schemas))
	for id := range v.schemas {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// SchemaVersionOf extracts the schema id from a $schema URL ("" if none).
func SchemaVersionOf(schemaURL string) string {
	m := schemaIDPattern.FindStringSubmatch(schemaURL)
	if m == nil {
		return ""
	}
	return m[1] + m[2]
}

// Validate reports what the Registry would object to in one server.json
// today. Findings are data: nothing here drops the entry.
func (v *Validator) Validate(raw []byte) finding.List {
	var fl finding.List
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		fl.Add(finding.Error, CodeNotJSON, "", "server.json is not JSON: "+err.Error())
		return fl
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		fl.Add(finding.Error, CodeNotObject, "", "server.json is not a JSON object")
		return fl
	}
	schemaURL, _ := obj["$schema"].(string)
	version := SchemaVersionOf(schemaURL)
	sch := v.schemas[version]
	switch {
	case schemaURL == "":
		fl.Add(finding.Error, CodeSchemaFieldRequired, "/$schema", "no $schema; the Registry requires one (validated against "+CurrentSchemaVersion+")")
		sch = v.schemas[CurrentSchemaVersion]
	case version == "draft":
		fl.Add(finding.Error, CodeSchemaVersionNotAvailable, "/$schema", "the draft schema is not accepted for publishing")
	case sch == nil:
		fl.Add(finding.Error, CodeSchemaUnknown, "/$schema", fmt.Sprintf("unknown $schema %q (validated against %s)", schemaURL, CurrentSchemaVersion))
		sch = v.schemas[CurrentSchemaVersion]
	case version != CurrentSchemaVersion:
		fl.Add(finding.Warning, CodeSchemaVersionDeprecated, "/$schema", fmt.Sprintf("schema version %s is not the current version (%s)", version, CurrentSchemaVersion))
	}
	flagged := semantic(obj, &fl)
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			v.leaves(ve, flagged, &fl)
		} else {
			fl.Add(finding.Error, CodeSchemaViolation, "", err.Error())
		}
	}
	return finding.Bound(fl)
}

// leaves reports the innermost schema errors, which name the actual field;
// the outer ones only repeat "allOf failed".
func (v *Validator) leaves(ve *jsonschema.ValidationError, flagged map[string]bool, fl *finding.List) {
	if len(ve.Causes) == 0 {
		path := pointer(ve.InstanceLocation)
		if flagged[path] {
			return
		}
		flagged[path] = true
		fl.Add(finding.Error, CodeSchemaViolation, path, ve.ErrorKind.LocalizedString(v.printer))
		return
	}
	for _, c := range ve.Causes {
		v.leaves(c, flagged, fl)
	}
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// topLevel are the members the Registry's API accepts; it answers 422
// "unexpected property" to anything else.
var topLevel = map[string]bool{"$schema": true, "name": true, "title": true, "description": true, "version": true,
	"websiteUrl": true, "repository": true, "icons": true, "packages": true, "remotes": true, "_meta": true}

// packageMembers are the members the Registry's API accepts in a package.
var packageMembers = map[string]bool{"registryType": true, "registryBaseUrl": true, "identifier": true, "version": true,
	"fileSha256": true, "runtimeHint": true, "transport": true, "runtimeArguments": true, "packageArguments": true,
	"environmentVariables": true}

// publisherMetaKey is the only _meta key a publisher may send.
const publisherMetaKey = "io.modelcontextprotocol.registry/publisher-provided"

// semantic applies the Registry's rules beyond the schema (research notes
// §1.3). It returns the paths it flagged so schema errors at the same place
// are not reported twice.
func semantic(obj map[string]any, fl *finding.List) map[string]bool {
	flagged := map[string]bool{}
	add := func(code, path, msg string) {
		flagged[path] = true
		fl.Add(finding.Error, code, path, msg)
	}
	for _, k := range sortedKeys(obj) {
		if !topLevel[k] {
			add("unexpected_property", pointer([]string{k}), fmt.Sprintf("unknown member %q; the Registry rejects it", k))
		}
	}
	if meta, ok := obj["_meta"].(map[string]any); ok {
		for _, k := range sortedKeys(meta) {
			if k != publisherMetaKey {
				add("unexpected_property", pointer([]string{"_meta", k}), fmt.Sprintf("_meta key %q; the Registry accepts only %s", k, publisherMetaKey))
			}
		}
		// Checked when publishing, on the value encoded again as JSON.
		if pp, ok := meta[publisherMetaKey]; ok {
			if b, err := json.Marshal(pp); err == nil && len(b) > maxPublisherMeta {
				add("publisher_meta_too_large", pointer([]string{"_meta", publisherMetaKey}),
					fmt.Sprintf("publisher-provided _meta is %d bytes of JSON; the Registry accepts at most %d when publishing", len(b), maxPublisherMeta))
			}
		}
	}
	if title, ok := obj["title"].(string); ok && title != "" && strings.TrimSpace(title) == "" {
		add("title_whitespace_only", "/title", "title is only whitespace")
	}
	if d, ok := obj["description"].(string); ok && len([]rune(d)) > 100 {
		add("description_too_long", "/description", fmt.Sprintf("description is %d characters; the Registry accepts at most 100", len([]rune(d))))
	}
	if n, ok := obj["name"].(string); ok && !strictNamePattern.MatchString(n) {
		add("invalid_server_name", "/name", fmt.Sprintf("server name %q is invalid: namespace/name, each at least 2 characters, starting and ending alphanumeric", n))
	}
	if ver, ok := obj["version"].(string); ok {
		if ver == "latest" {
			add("reserved_version_string", "/version", "version \"latest\" is reserved")
		} else if versionRangePattern.MatchString(ver) {
			add("version_looks_like_range", "/version", fmt.Sprintf("version must be a specific version, not a range: %q", ver))
		}
	}
	if pkgs, ok := obj["packages"].([]any); ok {
		for i, p := range pkgs {
			m, _ := p.(map[string]any)
			path := "/packages/" + strconv.Itoa(i)
			for _, k := range sortedKeys(m) {
				if !packageMembers[k] {
					add("unexpected_property", path+pointer([]string{k}), fmt.Sprintf("unknown package member %q; the Registry rejects it", k))
				}
			}
			if id, ok := m["identifier"].(string); ok && strings.Contains(id, " ") {
				add("package_name_has_spaces", path+"/identifier", fmt.Sprintf("package identifier %q contains a space", id))
			}
			if ver, ok := m["version"].(string); ok {
				if ver == "latest" {
					add("reserved_version_string", path+"/version", "package version \"latest\" is reserved")
				} else if versionRangePattern.MatchString(ver) {
					add("version_looks_like_range", path+"/version", fmt.Sprintf("package version must be a specific version, not a range: %q", ver))
				}
			}
			packageArguments(m, path, add)
			packageTransport(m, path, add)
		}
	}
	if w, ok := obj["websiteUrl"].(string); ok && !isHTTPS(w) {
		add("website_url_invalid_scheme", "/websiteUrl", "websiteUrl must be an absolute https URL: "+w)
	}
	if icons, ok := obj["icons"].([]any); ok {
		for i, ic := range icons {
			m, _ := ic.(map[string]any)
			if src, ok := m["src"].(string); ok && !isHTTPS(src) {
				add("icon_src_invalid_scheme", "/icons/"+strconv.Itoa(i)+"/src", "icon src must be an absolute https URL: "+src)
			}
		}
	}
	if repo, ok := obj["repository"].(map[string]any); ok {
		u, _ := repo["url"].(string)
		src, _ := repo["source"].(string)
		if re := repoURLPattern[src]; u != "" && (re == nil || !re.MatchString(u)) {
			add("invalid_repository_url", "/repository/url", fmt.Sprintf("repository must be on github or gitlab with a matching source: %s (source %q)", u, src))
		}
		if sf, ok := repo["subfolder"].(string); ok && !subfolderOK(sf) {
			add("invalid_subfolder_path", "/repository/subfolder", "subfolder must be a plain relative path: "+sf)
		}
	}
	if remotes, ok := obj["remotes"].([]any); ok {
		for i, r := range remotes {
			m, _ := r.(map[string]any)
			path := "/remotes/" + strconv.Itoa(i)
			typ, _ := m["type"].(string)
			if typ != "streamable-http" && typ != "sse" {
				add("unsupported_remote_transport_type", path+"/type", fmt.Sprintf("remote type %q is not streamable-http or sse", typ))
			}
			u, _ := m["url"].(string)
			if u == "" {
				if typ == "streamable-http" || typ == "sse" {
					add("remote_transport_url_required", path+"/url", fmt.Sprintf("a %s remote needs a url", typ))
				}
				continue
			}
			vars, _ := m["variables"].(map[string]any)
			if undefined := undefinedVariables(u, func(v string) bool { _, ok := vars[v]; return ok }); len(undefined) > 0 {
				add("invalid_templated_url", path+"/url", fmt.Sprintf("template variables %v in %s are not defined in variables", undefined, u))
			}
			if !remoteURLOK(u) {
				add("invalid_remote_url", path+"/url", "remote URL must be https and not local: "+u)
			}
		}
	}
	return flagged
}

// maxPublisherMeta is the most JSON the Registry accepts under
// publisherMetaKey when publishing.
const maxPublisherMeta = 4096

// packageArguments applies the Registry's rules for named arguments: a
// name, without '<', '>', ' ' or '$' (a value or a description written into
// it), and a value and default that do not repeat it.
func packageArguments(pkg map[string]any, path string, add func(code, path, msg string)) {
	for _, list := range []string{"runtimeArguments", "packageArguments"} {
		args, _ := pkg[list].([]any)
		for i, a := range args {
			m, _ := a.(map[string]any)
			if m["type"] != "named" {
				continue
			}
			apath := path + "/" + list + "/" + strconv.Itoa(i)
			name, _ := m["name"].(string)
			switch {
			case name == "":
				add("named_argument_name_required", apath+"/name", "a named argument needs a name")
				continue
			case strings.ContainsAny(name, "<> $"):
				add("invalid_named_argument_name", apath+"/name", fmt.Sprintf("named argument name %q holds '<', '>', a space or '$'", name))
			}
			for _, field := range []string{"value", "default"} {
				if v, _ := m[field].(string); v != "" && strings.HasPrefix(v, name) {
					add("argument_"+field+"_starts_with_name", apath+"/"+field,
						fmt.Sprintf("%s %q starts with the argument's name %q", field, v, name))
				}
			}
		}
	}
}

// packageTransport applies the Registry's rules for a package's transport:
// stdio has no url, streamable-http and sse need one whose template
// variables name an environment variable or an argument's name or value
// hint, and no other type is supported.
func packageTransport(pkg map[string]any, path string, add func(code, path, msg string)) {
	tr, ok := pkg["transport"].(map[string]any)
	if !ok {
		return // the schema's finding
	}
	path += "/transport"
	typ, _ := tr["type"].(string)
	u, _ := tr["url"].(string)
	switch typ {
	case "stdio":
		if u != "" {
			add("stdio_transport_url_not_empty", path+"/url", "a stdio transport has no url: "+u)
		}
	case "streamable-http", "sse":
		if u == "" {
			add("streamable_transport_url_required", path+"/url", fmt.Sprintf("a %s transport needs a url", typ))
			return
		}
		known := map[string]bool{}
		if envs, ok := pkg["environmentVariables"].([]any); ok {
			for _, e := range envs {
				m, _ := e.(map[string]any)
				if n, _ := m["name"].(string); n != "" {
					known[n] = true
				}
			}
		}
		for _, list := range []string{"runtimeArguments", "packageArguments"} {
			args, _ := pkg[list].([]any)
			for _, a := range args {
				m, _ := a.(map[string]any)
				for _, k := range []string{"name", "valueHint"} {
					if n, _ := m[k].(string); n != "" {
						known[n] = true
					}
				}
			}
		}
		undefined := undefinedVariables(u, func(v string) bool { return known[v] })
		parsed, err := url.Parse(untemplated(u))
		if len(undefined) > 0 || err != nil || parsed.Scheme == "" || parsed.Host == "" {
			msg := "transport url is not an absolute URL: " + u
			if len(undefined) > 0 {
				msg = fmt.Sprintf("template variables %v in %s name no environment variable or argument", undefined, u)
			}
			add("invalid_templated_url", path+"/url", msg)
		}
	default:
		add("unsupported_transport_type", path+"/type", fmt.Sprintf("package transport type %q is not stdio, streamable-http or sse", typ))
	}
}

func subfolderOK(p string) bool {
	if p == "" || !subfolderChars.MatchString(p) || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func isHTTPS(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Scheme == "https" && u.Host != "" && !strings.ContainsAny(raw, "\"'<> \t\r\n")
}

// undefinedVariables are the {variables} of a templated URL that defined
// does not know, in order.
func undefinedVariables(u string, defined func(string) bool) []string {
	var out []string
	for _, mm := range templateVarRe.FindAllStringSubmatch(u, -1) {
		if !defined(mm[1]) {
			out = append(out, mm[1])
		}
	}
	return out
}

// untemplated is a URL with each {variable} replaced by a value that fits
// a host or a port, so the rest of it can be parsed.
func untemplated(raw string) string { return templateVarRe.ReplaceAllString(raw, "1") }

func remoteURLOK(raw string) bool {
	// Templates are checked as written, with placeholder hosts allowed.
	u, err := url.Parse(untemplated(raw))
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	return h != "localhost" && h != "127.0.0.1" && !strings.HasSuffix(h, ".localhost")
}
