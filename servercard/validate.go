package servercard

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cardcrawl/cardcrawl/internal/finding"
)

//go:embed schema/server-card.schema.json
var schemaBytes []byte

// Shapes a document can have (Result.Shape).
const (
	ShapeCard       = "card"        // a Server Card, conformant or not
	ShapeServerJSON = "server_json" // a Registry server.json used as a card
	ShapeLegacy     = "legacy"      // SEP-1649-era or ad-hoc "MCP manifest" shapes
	ShapeUnknown    = "unknown"     // not an object, or nothing card-like in it
)

// Validator checks card documents against the vendored schema. Build it once
// with NewValidator; it is safe for concurrent use.
type Validator struct {
	schema  *jsonschema.Schema
	printer *message.Printer
}

// NewValidator compiles the embedded schema at #/$defs/ServerCard. It knows no
// other document: every URL loader is disabled, so nothing is ever fetched.
func NewValidator() (*Validator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaBytes))
	if err != nil {
		return nil, fmt.Errorf("decode embedded server card schema: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(SchemaURL, doc); err != nil {
		return nil, fmt.Errorf("add embedded server card schema: %w", err)
	}
	sch, err := c.Compile(SchemaURL + "#/$defs/ServerCard")
	if err != nil {
		return nil, fmt.Errorf("compile server card schema: %w", err)
	}
	return &Validator{schema: sch, printer: message.NewPrinter(language.English)}, nil
}

// refuseLoader replaces jsonschema's default file loader so that a $ref or
// $schema the embedded document does not resolve is an error, never a read.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("servercard: refusing to load %q: only the embedded schema is known", url)
}

// Result is the outcome of checking one card document.
type Result struct {
	// Card is nil only when the bytes are not a JSON object at all.
	Card  *Card
	Grade Grade
	// Findings are the schema errors (Path = instance JSON pointer, Code
	// "schema_<keyword>") plus the semantic findings listed in the package doc.
	Findings finding.List
	// Shape is one of ShapeCard, ShapeServerJSON, ShapeLegacy, ShapeUnknown.
	Shape string
}

// Check parses and validates one card document. It never panics and never
// returns a nil Card for a JSON object.
func (v *Validator) Check(raw []byte) (res Result) {
	res = Result{Grade: NonConformant, Shape: ShapeUnknown}
	defer func() {
		// A validator bug must cost one card, not the crawl.
		if r := recover(); r != nil {
			res.Grade = NonConformant
			res.Findings.Add(finding.Error, CodeInternalError, "", fmt.Sprintf("validator panic: %v", r))
		}
	}()

	body := raw
	if b, ok := bytes.CutPrefix(body, []byte("\xef\xbb\xbf")); ok {
		body = b
		res.Findings.AddUTF8BOM()
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		var anyv any
		if json.Unmarshal(body, &anyv) != nil {
			res.Findings.Add(finding.Error, CodeInvalidJSON, "", "document is not valid JSON")
		} else {
			res.Findings.Add(finding.Error, CodeNotObject, "", fmt.Sprintf("document is a JSON %s, not an object", jsonKind(anyv)))
		}
		return res
	}
	res.Card = decodeCard(obj)
	res.Shape = detectShape(obj, res.Card)

	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		// encoding/json accepted it; the two decoders disagree only on edge cases.
		res.Findings.Add(finding.Error, CodeInvalidJSON, "", fmt.Sprintf("document could not be decoded for validation: %v", err))
		return res
	}
	schemaValid := true
	if err := v.schema.Validate(inst); err != nil {
		schemaValid = false
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			var schemaFindings finding.List
			v.flatten(ve, &schemaFindings)
			// The library walks properties in map order; sort for stable output.
			slices.SortStableFunc(schemaFindings, func(a, b finding.Finding) int {
				return cmp.Or(strings.Compare(a.Path, b.Path), strings.Compare(a.Code, b.Code), strings.Compare(a.Message, b.Message))
			})
			res.Findings = append(res.Findings, schemaFindings...)
		} else {
			res.Findings.Add(finding.Error, "schema_error", "", err.Error())
		}
	}
	semantic(obj, res.Card, res.Shape, &res.Findings)
	res.Grade = grade(res.Card, res.Shape, schemaValid, res.Findings)
	res.Findings = finding.Bound(res.Findings) // graded on all of them
	return res
}

// flatten turns the validation error tree into one finding per leaf. Errors on
// /$schema are dropped because semantic() reports $schema once, with a more
// useful code (schema_missing, schema_wrong, schema_server_json).
func (v *Validator) flatten(e *jsonschema.ValidationError, out *finding.List) {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			v.flatten(c, out)
		}
		return
	}
	loc := pointer(e.InstanceLocation)
	code := "schema_" + snake(kindName(e.ErrorKind))
	msg := e.ErrorKind.LocalizedString(v.printer)
	if req, ok := e.ErrorKind.(*kind.Required); ok {
		// One finding per missing member, located at the member itself, so
		// grading can tell a missing name from a missing $schema.
		for _, p := range req.Missing {
			path := loc + "/" + escapePointer(p)
			if path == "/$schema" {
				continue
			}
			out.Add(finding.Error, code, path, fmt.Sprintf("missing required member %q", p))
		}
		return
	}
	if loc == "/$schema" {
		return
	}
	out.Add(finding.Error, code, loc, msg)
}

func kindName(k jsonschema.ErrorKind) string {
	t := reflect.TypeOf(k)
	if t == nil {
		return "error"
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// snake turns a Go type name (MaxLength) into a finding code part (max_length).
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapePointer(t))
	}
	return b.String()
}

func escapePointer(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64, json.Number:
		return "number"
	}
	return "value"
}
