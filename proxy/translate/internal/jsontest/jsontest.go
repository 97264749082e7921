// Package jsontest holds what the codecs' tests compare their hand-written
// JSON with.
package jsontest

import (
	"bytes"
	"encoding/json"
)

// Reflected is what encoding/json writes for v without HTML escaping and
// without the trailing newline — conv.Marshal's output for a value that
// does not write itself — or "null" when encoding/json fails.
func Reflected(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "null"
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}
