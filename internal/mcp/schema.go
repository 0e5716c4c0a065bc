package mcp

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kubegap/kubegap/internal/finding"
	"github.com/kubegap/kubegap/internal/library"
)

// Input schemas are inferred from the input structs, then given what the
// struct tags cannot say: the allowed values (enums) and ranges, so that an
// agent sees them up front and the SDK refuses a bad call (page_size 0, an
// unknown severity) as a tool error before the handler runs.

// inputSchema infers T's schema and lets tune constrain its properties.
func inputSchema[T any](tune func(props map[string]*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		// The input types are fixed at compile time; a test builds every
		// server, so this cannot reach a user.
		panic(fmt.Sprintf("inferring the schema of %T: %v", *new(T), err))
	}
	// An argument is optional (absent means its default), never null: a
	// list argument is a plain array. Nullable would be anyOf [array,
	// null], and the SDK's message for a bad value would then walk both
	// branches instead of naming the value and the allowed ones.
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" && p.Types[1] == "array" {
			p.Types, p.Type = nil, "array"
		}
	}
	if tune != nil {
		tune(s.Properties)
	}
	splitNullable(s)
	return s
}

// outputSchema infers the schema of a tool's result type (of what a
// pointer points to: a handler never returns a nil result), with nullable
// types split as the input schemas are.
func outputSchema[T any]() *jsonschema.Schema {
	t := reflect.TypeFor[T]()
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, nil)
	if err != nil {
		panic(fmt.Sprintf("inferring the schema of %v: %v", t, err))
	}
	splitNullable(s)
	return s
}

// splitNullable rewrites every `"type": ["null", X]` the inference writes
// for a slice, map or pointer as `anyOf: [{"type": X, ...}, {"type":
// "null"}]`. Both say the same in JSON Schema, but clients that map tool
// schemas onto a single-type dialect (the OpenAPI subset of Gemini
// function declarations) reject a type array; MCP Inspector's --strict
// check warns about each one.
func splitNullable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		other := s.Types[0]
		if other == "null" {
			other = s.Types[1]
		}
		branch := *s
		branch.Types, branch.Type = nil, other
		// The description and title say what the property is, whichever
		// branch a value takes; they stay on the property.
		branch.Description, branch.Title = "", ""
		*s = jsonschema.Schema{Title: s.Title, Description: s.Description, AnyOf: []*jsonschema.Schema{&branch, {Type: "null"}}}
	}
	for _, m := range []map[string]*jsonschema.Schema{s.Properties, s.PatternProperties, s.Defs, s.Definitions, s.DependentSchemas} {
		for _, c := range m {
			splitNullable(c)
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AnyOf, s.AllOf, s.OneOf, s.PrefixItems, s.ItemsArray} {
		for _, c := range list {
			splitNullable(c)
		}
	}
	for _, c := range []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.AdditionalItems, s.Contains, s.Not,
		s.PropertyNames, s.UnevaluatedItems, s.UnevaluatedProperties, s.If, s.Then, s.Else} {
		splitNullable(c)
	}
}

func f64(v float64) *float64 { return &v }

// between sets an integer property's range.
func between(p *jsonschema.Schema, lo, hi float64) {
	p.Minimum = f64(lo)
	if hi > 0 {
		p.Maximum = f64(hi)
	}
}

// oneOf sets the values a string property, or the items of a string array
// property, may take.
func oneOf(p *jsonschema.Schema, values []string) {
	enum := make([]any, len(values))
	for i, v := range values {
		enum[i] = v
	}
	if p.Items != nil {
		p.Items.Enum = enum
		return
	}
	p.Enum = enum
}

func severityValues() []string {
	var out []string
	for _, s := range finding.Severities() {
		out = append(out, s.String())
	}
	return out
}

func auditSchema() *jsonschema.Schema {
	return inputSchema[AuditInput](func(p map[string]*jsonschema.Schema) {
		oneOf(p["min_severity"], severityValues())
		between(p["page_size"], 1, maxPageSize)
		between(p["page"], 1, 0)
		// A string, or a number as clients that read arguments as JSON
		// scalars send it (MinorArg says which numbers are taken).
		tv := p["target_version"]
		*tv = jsonschema.Schema{Description: tv.Description, AnyOf: []*jsonschema.Schema{{Type: "string"}, {Type: "number"}}}
		// No enum on checks and skip_checks: they take an ID in any case
		// or a unique prefix, as the CLI does, and an enum would refuse
		// one before the handler saw it; the handler names the nearest.
	})
}

// explainCheckSchema has no enum on id: explain_check takes a unique
// prefix in any case, as 'kubegap checks show' does, and an enum would
// refuse one before the handler saw it.
func explainCheckSchema() *jsonschema.Schema {
	return inputSchema[CheckIDInput](nil)
}

// searchCasesSchema lists each facet's values from the taxonomy, so an
// agent can filter without a first call to learn them.
func searchCasesSchema() *jsonschema.Schema {
	return inputSchema[SearchCasesInput](func(p map[string]*jsonschema.Schema) {
		between(p["limit"], 1, maxCaseLimit)
		between(p["offset"], 0, 0)
		lib, err := library.Default()
		if err != nil {
			return // search_cases reports the load error itself
		}
		tax := lib.Taxonomy()
		for prop, facet := range map[string]string{"root_cause": library.FacetRootCause, "component": library.FacetComponent,
			"symptom": library.FacetSymptom, "factor": library.FacetFactor} {
			var ids []string
			for _, t := range tax.Terms(facet) {
				ids = append(ids, t.ID)
			}
			oneOf(p[prop], ids)
		}
	})
}
