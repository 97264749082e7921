package tsgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
)

// The rendering of declarations: a renderer walks the roots and writes each
// type as TypeScript text (named declarations, inline types, unions).

type decl struct{ name, text string }

type renderer struct {
	g          *Generator
	declared   map[reflect.Type]string // type → its TypeScript name
	byName     map[string]string       // TypeScript name → what claimed it, for collisions
	queue      []reflect.Type
	usedUnions map[string]bool
	unionOut   []decl
	out        []decl
	errs       []error
}

func (r *renderer) errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("tsgen: "+format, args...))
}

// claim records that what uses the TypeScript name, and reports a
// collision with anything else that uses it.
func (r *renderer) claim(name, what string) {
	if old, ok := r.byName[name]; ok && old != what {
		r.errorf("the name %s is used by both %s and %s: Add one of them under another name", name, old, what)
		return
	}
	r.byName[name] = what
}

// goName is the qualified Go name of t, as in error messages.
func goName(t reflect.Type) string {
	if t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// declare returns the name of t's declaration, queueing it on first use.
func (r *renderer) declare(t reflect.Type) string {
	if name, ok := r.declared[t]; ok {
		return name
	}
	name, ok := r.g.names[t]
	if !ok {
		name = t.Name()
	}
	if !validIdent(name) {
		r.errorf("%s has no usable TypeScript name: Add it under one", goName(t))
		name = "invalid"
	}
	r.declared[t] = name
	r.claim(name, goName(t))
	r.queue = append(r.queue, t)
	return name
}

// hasDecl reports whether references to t use a declared name.
func (r *renderer) hasDecl(t reflect.Type) bool {
	if _, ok := r.g.names[t]; ok {
		return true
	}
	if _, ok := r.g.enums[t]; ok {
		return true
	}
	return t.Name() != "" && isObject(r.g, t)
}

func (r *renderer) render(t reflect.Type) {
	name := r.declared[t]
	doc := ""
	if t.Name() != "" {
		doc = "/** Go: " + t.String() + " */\n"
	}
	if values, ok := r.g.enums[t]; ok {
		r.unionOut = append(r.unionOut, decl{name, doc + unionText(name, values)})
		return
	}
	if isObject(r.g, t) && len(jsonFields(t)) > 0 {
		r.out = append(r.out, decl{name, doc + "export interface " + name + " " + r.object(t, true) + "\n"})
		return
	}
	r.out = append(r.out, decl{name, doc + "export type " + name + " = " + r.inline(t, "string") + ";\n"})
}

// isObject reports whether t is declared as an interface: a struct that
// encoding/json writes field by field.
func isObject(g *Generator, t reflect.Type) bool {
	_, overridden := g.overrides[t]
	return t.Kind() == reflect.Struct && !overridden && !isTextMarshaler(t) && !hasMarshalJSON(t)
}

func hasMarshalJSON(t reflect.Type) bool {
	return t.Implements(marshalerType) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType))
}

func unionText(name string, values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = quote(v)
	}
	return fmt.Sprintf("export type %s = %s;\n", name, strings.Join(quoted, " | "))
}

// ref is the TypeScript type of a use of t. str is what a Go string
// becomes (a union name for FieldEnum).
func (r *renderer) ref(t reflect.Type, str string) string {
	if r.hasDecl(t) {
		return r.declare(t)
	}
	return r.inline(t, str)
}

// inline is t's TypeScript type written out (not by its declared name at
// the top level).
func (r *renderer) inline(t reflect.Type, str string) string {
	if ts, ok := r.g.overrides[t]; ok {
		return ts
	}
	if _, ok := r.g.enums[t]; ok {
		return unionValues(r.g.enums[t])
	}
	if t.Kind() != reflect.Pointer && t.Kind() != reflect.Interface {
		if hasMarshalJSON(t) {
			r.errorf("%s has its own MarshalJSON: give it an Override", goName(t))
			return "unknown"
		}
		if isTextMarshaler(t) {
			return "string"
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return "number"
	case reflect.String:
		return str
	case reflect.Interface:
		return "unknown"
	case reflect.Pointer:
		return nullable(r.ref(t.Elem(), str))
	case reflect.Slice:
		if e := t.Elem(); e.Kind() == reflect.Uint8 && !isTextMarshaler(e) && !hasMarshalJSON(e) {
			return "string" // base64
		}
		return arrayOf(r.ref(t.Elem(), str))
	case reflect.Array:
		return arrayOf(r.ref(t.Elem(), str))
	case reflect.Map:
		k := t.Key()
		switch {
		case k.Kind() == reflect.String, isInteger(k.Kind()), isTextMarshaler(k):
		default:
			r.errorf("%s: encoding/json cannot encode map keys of type %s", t, k)
		}
		return "Record<string, " + r.ref(t.Elem(), str) + ">"
	case reflect.Struct:
		return r.object(t, false)
	}
	r.errorf("%s cannot be encoded as JSON", t)
	return "never"
}

// object writes the fields of struct t: one per line for a declaration,
// on one line inline.
func (r *renderer) object(t reflect.Type, multiline bool) string {
	fs := jsonFields(t)
	if len(fs) == 0 {
		return "Record<string, never>" // {} would admit any value
	}
	var b strings.Builder
	b.WriteString("{")
	for i, f := range fs {
		line := propName(f.name)
		if f.optional() {
			line += "?"
		}
		line += ": " + r.fieldType(t, f)
		if multiline {
			b.WriteString("\n  " + line + ";")
		} else {
			if i > 0 {
				b.WriteString(";")
			}
			b.WriteString(" " + line)
		}
	}
	if multiline {
		b.WriteString("\n}")
	} else {
		b.WriteString(" }")
	}
	return b.String()
}

// rule finds the field rule for f, set on the struct being written or
// on the struct that declares f.
func (r *renderer) rule(outer reflect.Type, f field) *fieldRule {
	for _, owner := range []reflect.Type{outer, f.owner} {
		if fr := r.g.fields[fieldKey{owner, f.name}]; fr != nil {
			fr.used = true
			return fr
		}
	}
	return nil
}

func (r *renderer) fieldType(outer reflect.Type, f field) string {
	fr := r.rule(outer, f)
	if fr == nil {
		fr = &fieldRule{}
	}
	var ts string
	str := "string"
	if fr.union != "" {
		r.usedUnions[fr.union] = true
		str = fr.union
		if !hasStringLeaf(f.typ) {
			r.errorf("FieldEnum on %s.%s: %s holds no string", goName(f.owner), f.name, f.typ)
		}
	}
	switch {
	case fr.text != "":
		ts = fr.text
	case fr.typ != nil:
		ts = r.ref(fr.typ, str)
	case f.quoted:
		ts = "string"
		if f.typ.Kind() == reflect.Pointer && !f.omits() {
			ts = nullable(ts)
		}
	case f.typ.Kind() == reflect.Pointer && f.omits() && !r.hasDecl(f.typ):
		// A nil pointer is left out, so the value is never null.
		ts = r.ref(f.typ.Elem(), str)
	default:
		ts = r.ref(f.typ, str)
	}
	if fr.nullable {
		ts = nullable(ts)
	}
	return ts
}

// hasStringLeaf reports whether t is a string, possibly under pointers,
// slices, arrays and map values.
func hasStringLeaf(t reflect.Type) bool {
	for {
		switch t.Kind() {
		case reflect.String:
			return true
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		default:
			return false
		}
	}
}

// nullable adds "| null" to ts unless it is there already.
func nullable(ts string) string {
	if slices.Contains(topLevelUnion(ts), "null") || ts == "unknown" {
		return ts
	}
	return ts + " | null"
}

func arrayOf(ts string) string {
	if len(topLevelUnion(ts)) > 1 {
		return "(" + ts + ")[]"
	}
	return ts + "[]"
}

// topLevelUnion splits ts at the "|" that are not inside brackets.
func topLevelUnion(ts string) []string {
	var parts []string
	depth, start := 0, 0
	inString := false
	for i := 0; i < len(ts); i++ {
		switch c := ts[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '(' || c == '{' || c == '[' || c == '<':
			depth++
		case c == ')' || c == '}' || c == ']' || c == '>':
			depth--
		case c == '|' && depth == 0:
			parts = append(parts, strings.TrimSpace(ts[start:i]))
			start = i + 1
		}
	}
	return append(parts, strings.TrimSpace(ts[start:]))
}

func unionValues(values []string) string {
	quoted := make([]string, len(values))
	for i, v := range values {
		quoted[i] = quote(v)
	}
	return strings.Join(quoted, " | ")
}

// quote writes s as a TypeScript string literal.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

var identRE = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$]*$`)

func validIdent(s string) bool { return identRE.MatchString(s) }

// propName is a property name, quoted when it is not an identifier.
func propName(s string) string {
	if validIdent(s) {
		return s
	}
	return quote(s)
}

func isInteger(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return true
	}
	return false
}

func isTextMarshaler(t reflect.Type) bool {
	if t == timeType {
		return false // handled by the default override; it has MarshalJSON
	}
	return t.Implements(textMarshalType) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textMarshalType))
}

func dedupe(values []string) []string {
	var out []string
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func dedupeErrs(errs []error) []error {
	var out []error
	for i, e := range errs {
		if i == 0 || e.Error() != errs[i-1].Error() {
			out = append(out, e)
		}
	}
	return out
}

// constText is the declaration of a Const: compact JSON, but a map with
// string keys one member a line.
func constText(name string, v any) (string, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		js, err := compactJSON(v)
		if err != nil {
			return "", err
		}
		return "export const " + name + " = " + js + " as const;\n", nil
	}
	keys := make([]string, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("export const " + name + " = {\n")
	for _, k := range keys {
		js, err := compactJSON(rv.MapIndex(reflect.ValueOf(k).Convert(rv.Type().Key())).Interface())
		if err != nil {
			return "", err
		}
		b.WriteString("  " + propName(k) + ": " + js + ",\n")
	}
	b.WriteString("} as const;\n")
	return b.String(), nil
}

// compactJSON is v as JSON on one line, with a space after each comma and
// colon between values, as TypeScript is written.
func compactJSON(v any) (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	var out strings.Builder
	inString, escaped := false, false
	for _, c := range bytes.TrimSuffix(b.Bytes(), []byte("\n")) {
		out.WriteByte(c)
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == ':'):
			out.WriteByte(' ')
		}
	}
	return out.String(), nil
}
