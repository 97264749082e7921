package gemini

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// A function's parameters come to Gemini in one of two members
// (ai.google.dev/api/caching#FunctionDeclaration): parameters, a "select
// subset" of the OpenAPI 3.0 schema object (type names in upper case,
// nullable instead of a type list, no additionalProperties, $ref or
// $schema — the API answers "Unknown name" for them), or
// parametersJsonSchema, JSON Schema, which must describe an object whose
// properties are the parameters. The encoder always writes
// parametersJsonSchema (the clients of the other protocols declare JSON
// Schema, and Gemini CLI sends it too), cleaned of what Gemini refuses
// there: $schema, and anything but an object at the top.
// additionalProperties stays — the reference's own parametersJsonSchema
// example carries "additionalProperties": false; only parameters refuses
// it, and the encoder never writes that member. The decoder turns an OpenAPI parameters schema into JSON Schema,
// which every other protocol takes.

// schemaMaps are the keywords whose value maps names to schemas.
var schemaMaps = map[string]bool{"properties": true, "$defs": true, "definitions": true, "patternProperties": true}

// schemaLists are the keywords whose value is a list of schemas.
var schemaLists = map[string]bool{"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}

// schemaOne are the keywords whose value is one schema.
var schemaOne = map[string]bool{"items": true, "additionalProperties": true, "not": true, "contains": true}

func parseSchema(raw json.RawMessage) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v map[string]any
	if dec.Decode(&v) != nil || v == nil {
		return nil, false
	}
	return v, true
}

// walkSchema applies f to s and to every schema inside it.
func walkSchema(s map[string]any, f func(map[string]any)) {
	f(s)
	for k, v := range s {
		switch {
		case schemaMaps[k]:
			if m, ok := v.(map[string]any); ok {
				for _, sub := range m {
					if ss, ok := sub.(map[string]any); ok {
						walkSchema(ss, f)
					}
				}
			}
		case schemaLists[k]:
			if l, ok := v.([]any); ok {
				for _, sub := range l {
					if ss, ok := sub.(map[string]any); ok {
						walkSchema(ss, f)
					}
				}
			}
		case schemaOne[k]:
			if ss, ok := v.(map[string]any); ok {
				walkSchema(ss, f)
			}
		}
	}
}

// schemaOut is a tool's schema as parametersJsonSchema: $schema removed
// everywhere, and the top an object — a union at the top (anyOf, oneOf)
// becomes one object with the properties of every alternative and none
// required (any alternative's call still fits), an allOf one object with
// the properties and requirements of all.
func schemaOut(raw json.RawMessage) json.RawMessage {
	s, ok := parseSchema(conv.Schema(raw))
	if !ok {
		return conv.EmptySchema
	}
	walkSchema(s, func(m map[string]any) { delete(m, "$schema") })
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		alts, ok := s[k].([]any)
		if !ok {
			continue
		}
		delete(s, k)
		mergeAlternatives(s, alts, k == "allOf")
	}
	if t, _ := s["type"].(string); t != "object" {
		s["type"] = "object"
	}
	if _, ok := s["properties"].(map[string]any); !ok {
		s["properties"] = map[string]any{}
	}
	return conv.Marshal(s)
}

// mergeAlternatives adds the properties of the object alternatives alts
// to s; with all, their requirements too.
func mergeAlternatives(s map[string]any, alts []any, all bool) {
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	required, _ := s["required"].([]any)
	if !all {
		required = nil
	}
	for _, a := range alts {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		if p, ok := m["properties"].(map[string]any); ok {
			for name, sub := range p {
				if _, seen := props[name]; !seen {
					props[name] = sub
				}
			}
		}
		if r, ok := m["required"].([]any); ok && all {
			required = append(required, r...)
		}
	}
	s["properties"] = props
	if len(required) > 0 {
		s["required"] = required
	} else {
		delete(s, "required")
	}
}

// schemaIn is a declaration's schema in JSON Schema: parametersJsonSchema
// as it is; an OpenAPI parameters schema with its type names in lower
// case, nullable folded into the type ("type":["string","null"]) and
// Gemini's own propertyOrdering left out.
func schemaIn(f *wireFunction) json.RawMessage {
	if !isNull(f.ParametersJSONSchema) {
		return conv.Schema(f.ParametersJSONSchema)
	}
	if isNull(f.Parameters) {
		return conv.EmptySchema
	}
	s, ok := parseSchema(f.Parameters)
	if !ok {
		return conv.Schema(f.Parameters)
	}
	walkSchema(s, func(m map[string]any) {
		t, isString := m["type"].(string)
		if isString {
			t = strings.ToLower(t)
			m["type"] = t
		}
		if n, _ := m["nullable"].(bool); n && isString {
			m["type"] = []any{t, "null"}
		}
		delete(m, "nullable")
		delete(m, "propertyOrdering")
	})
	return conv.Schema(conv.Marshal(s))
}
