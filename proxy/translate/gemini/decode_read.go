package gemini

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ccmesh/ccmesh/proxy/translate/conv"
)

// The request decoder reads the wire shapes (wire.go) with a conv.Reader,
// as encoding/json decoded them: members match their names without regard
// to ASCII case, null leaves a value unset (a pointer or slice nil), and a
// duplicate member is read over the first — a pointer's struct updated, a
// slice's elements read over the earlier ones'.

// wireNames are the wire's member names that are not in lower case, by
// their lower-case form: what conv.Reader.Fields gives a member of
// another spelling as.
var wireNames = map[string]string{}

func init() {
	for _, name := range []string{
		"thoughtSignature", "inlineData", "fileData", "functionCall", "functionResponse",
		"mimeType", "fileUri", "functionDeclarations", "parametersJsonSchema",
		"functionCallingConfig", "allowedFunctionNames",
		"includeThoughts", "thinkingBudget", "thinkingLevel",
	} {
		wireNames[strings.ToLower(name)] = name
	}
}

// camel gives member a key under the wire's spelling of the member name
// it matches without regard to case, as encoding/json matches it: in ASCII
// (conv.Reader.Fields folds that), and with the runes outside ASCII whose
// case folds to an ASCII letter (foldRunes).
func camel(member func(name string) (bool, error)) func(string) (bool, error) {
	return func(key string) (bool, error) {
		ok, err := member(wireName(key))
		if !ok && err == nil {
			if f, folded := foldRunes(key); folded {
				return member(wireName(f))
			}
		}
		return ok, err
	}
}

func wireName(key string) string {
	if name, ok := wireNames[key]; ok {
		return name
	}
	return key
}

// foldRunes is key in lower case when it has runes outside ASCII that all
// fold to ASCII letters, as encoding/json matches member names (with
// bytes.EqualFold's case folding: ſ is s, the Kelvin sign k); folded is
// false otherwise.
func foldRunes(key string) (f string, folded bool) {
	i := 0
	for i < len(key) && key[i] < utf8.RuneSelf {
		i++
	}
	if i == len(key) {
		return key, false
	}
	b := make([]byte, 0, len(key))
	for _, r := range key {
		if r >= utf8.RuneSelf {
			if r = smallestFold(r); r >= utf8.RuneSelf {
				return key, false
			}
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		b = append(b, byte(r))
	}
	return string(b), true
}

// smallestFold is the smallest rune r folds to.
func smallestFold(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// fields reads an object's members as encoding/json reads a struct's.
func fields(rd *conv.Reader, member func(name string) (bool, error)) error {
	return rd.Fields(camel(member))
}

// readSlice reads an array into *dst, each element with elem, as
// encoding/json reads a slice: a null sets it to nil, and the elements
// are read over what *dst already holds within its capacity (a
// duplicate member's elements over the earlier one's).
func readSlice[T any](rd *conv.Reader, dst *[]T, elem func(*T) error) error {
	if null, err := rd.Null(); null || err != nil {
		*dst = nil
		return err
	}
	s := (*dst)[:0]
	err := rd.Array(func(int) error {
		if len(s) < cap(s) {
			s = s[:len(s)+1]
		} else {
			var zero T
			s = append(s, zero)
		}
		return elem(&s[len(s)-1])
	})
	if len(s) == 0 {
		s = []T{}
	}
	*dst = s
	return err
}

// resultText is a FunctionResponse's response as the request decoder read
// it (readResponse); ok is false in one decoded from an answer, whose
// Response holds it.
type resultText struct {
	text        string
	isError, ok bool
}

// readContent reads a Content; a null leaves c as it is.
func readContent(rd *conv.Reader, c *wireContent) error {
	return fields(rd, func(name string) (bool, error) {
		switch name {
		case "role":
			return true, rd.String(&c.Role)
		case "parts":
			return true, readParts(rd, &c.Parts)
		}
		return false, nil
	})
}

func readParts(rd *conv.Reader, dst *[]wirePart) error {
	return readSlice(rd, dst, func(w *wirePart) error { return readPart(rd, w) })
}

// readPart reads a Part over w.
func readPart(rd *conv.Reader, w *wirePart) error {
	return fields(rd, func(name string) (bool, error) {
		switch name {
		case "text":
			return true, rd.StringPtr(&w.Text)
		case "thought":
			return true, rd.Bool(&w.Thought)
		case "thoughtSignature":
			return true, rd.String(&w.ThoughtSignature)
		case "inlineData":
			return true, conv.ObjectInto(rd, &w.InlineData, camel(func(name string) (bool, error) {
				switch name {
				case "mimeType":
					return true, rd.String(&w.InlineData.MimeType)
				case "data":
					return true, rd.String(&w.InlineData.Data)
				}
				return false, nil
			}))
		case "fileData":
			return true, conv.ObjectInto(rd, &w.FileData, camel(func(name string) (bool, error) {
				switch name {
				case "mimeType":
					return true, rd.String(&w.FileData.MimeType)
				case "fileUri":
					return true, rd.String(&w.FileData.FileURI)
				}
				return false, nil
			}))
		case "functionCall":
			return true, conv.ObjectInto(rd, &w.FunctionCall, camel(func(name string) (ok bool, err error) {
				fc := w.FunctionCall
				switch name {
				case "id":
					return true, rd.String(&fc.ID)
				case "name":
					return true, rd.String(&fc.Name)
				case "args":
					fc.Args, err = rd.Raw()
					return true, err
				}
				return false, nil
			}))
		case "functionResponse":
			return true, conv.ObjectInto(rd, &w.FunctionResponse, camel(func(name string) (bool, error) {
				return readResult(rd, w.FunctionResponse, name)
			}))
		}
		return false, nil
	})
}

// readResult reads member name of a FunctionResponse.
func readResult(rd *conv.Reader, fr *wireResult, name string) (bool, error) {
	switch name {
	case "id":
		return true, rd.String(&fr.ID)
	case "name":
		return true, rd.String(&fr.Name)
	case "response":
		return true, readResponse(rd, &fr.read)
	case "parts":
		return true, readParts(rd, &fr.Parts)
	}
	return false, nil
}

// readResponse reads a FunctionResponse's response into what resultIn
// makes of it (responseText): the text of a string member "output" or
// "error" when it is the object's only member (by name: a duplicate's
// value replaces the first's), else the response's JSON text as it is.
// The text is copied once, not kept raw first.
func readResponse(rd *conv.Reader, out *resultText) error {
	*out = resultText{ok: true}
	start := rd.Offset()
	var only string // "output" or "error" while it is the only name seen
	single := rd.Kind() == '{'
	isString := false
	if single {
		first := true
		err := rd.Object(func(key []byte) error {
			switch {
			case first && string(key) == "output":
				only = "output"
			case first && string(key) == "error":
				only = "error"
			case first || string(key) != only:
				single = false
			}
			first = false
			if !single {
				return rd.Skip()
			}
			isString, out.text = false, ""
			if k := rd.Kind(); k != '"' && k != 'n' {
				return rd.Skip()
			}
			isString = true
			return rd.String(&out.text)
		})
		if err != nil {
			return err
		}
		single = single && only != ""
	} else if err := rd.Skip(); err != nil {
		return err
	}
	if single && isString {
		out.isError = only == "error"
		return nil
	}
	out.text = string(rd.RawSince(start))
	return nil
}

// readTool reads a Tool; hosted names an entry without function
// declarations by its first member (Google Search, code execution, URL
// context), for the debug line.
func readTool(rd *conv.Reader, t *wireTool) (hosted string, err error) {
	hosted = "tool"
	first := true
	declarations := camel(func(name string) (bool, error) {
		if name != "functionDeclarations" {
			return false, nil
		}
		return true, readSlice(rd, &t.FunctionDeclarations, func(f *wireFunction) error {
			return readFunction(rd, f)
		})
	})
	err = rd.Fields(func(key string) (bool, error) {
		if first { // the key as it is, before a call with its folded form
			hosted, first = "tool "+key, false
		}
		return declarations(key)
	})
	return hosted, err
}

func readFunction(rd *conv.Reader, f *wireFunction) error {
	return fields(rd, func(name string) (ok bool, err error) {
		switch name {
		case "name":
			return true, rd.String(&f.Name)
		case "description":
			return true, rd.String(&f.Description)
		case "parameters":
			f.Parameters, err = rd.Raw()
			return true, err
		case "parametersJsonSchema":
			f.ParametersJSONSchema, err = rd.Raw()
			return true, err
		}
		return false, nil
	})
}

func readToolConfig(rd *conv.Reader, tc *wireToolConfig) error {
	return fields(rd, func(name string) (bool, error) {
		if name != "functionCallingConfig" {
			return false, nil
		}
		return true, conv.ObjectInto(rd, &tc.FunctionCallingConfig, camel(func(name string) (bool, error) {
			fc := tc.FunctionCallingConfig
			switch name {
			case "mode":
				return true, rd.String(&fc.Mode)
			case "allowedFunctionNames":
				return true, readSlice(rd, &fc.AllowedFunctionNames, rd.String)
			}
			return false, nil
		}))
	})
}

// thinkingMember reads the members of a thinkingConfig into *t.
func thinkingMember(rd *conv.Reader, t **wireThinking) func(string) (bool, error) {
	return camel(func(name string) (bool, error) {
		switch name {
		case "includeThoughts":
			return true, rd.BoolPtr(&(*t).IncludeThoughts)
		case "thinkingBudget":
			return true, rd.Int64(&(*t).ThinkingBudget)
		case "thinkingLevel":
			return true, rd.String(&(*t).ThinkingLevel)
		}
		return false, nil
	})
}
