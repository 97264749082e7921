package conv

import "testing"

// TestContentRead holds Content.Read to the shapes the codecs' content
// members take: a string, an array of parts, null, or a value of another
// type, which is skipped and kept as Err.
func TestContentRead(t *testing.T) {
	type part struct{ Text string }
	readPart := func(r *Reader, p *part) error {
		return r.Fields(func(key string) (bool, error) {
			if key == "text" {
				return true, r.String(&p.Text)
			}
			return false, nil
		})
	}
	for _, tc := range []struct {
		in              string
		isText, isArray bool
		text            string
		parts           int
		keptErr         string
		readErr         bool
	}{
		{in: `"hi"`, isText: true, text: "hi"},
		{in: `null`},
		{in: `[{"TEXT":"a"},{"text":"b","x":1}]`, isArray: true, parts: 2},
		{in: `[]`, isArray: true},
		{in: `5`, keptErr: "content: cannot unmarshal number into an array of parts"},
		{in: `[{"text":1}]`, keptErr: "content: cannot unmarshal number into a string"},
		{in: `[{"text":1}`, readErr: true},
		{in: `{"a":}`, readErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var c Content[part]
			r := NewReader([]byte(tc.in))
			err := c.Read(r, readPart, "content")
			if err == nil {
				err = r.End()
			}
			if got := err != nil; got != tc.readErr {
				t.Fatalf("read error: got %v, want error %v", err, tc.readErr)
			}
			if tc.readErr {
				return
			}
			gotErr := ""
			if c.Err != nil {
				gotErr = c.Err.Error()
			}
			if gotErr != tc.keptErr {
				t.Errorf("Err: got %q, want %q", gotErr, tc.keptErr)
			}
			if c.IsText != tc.isText || c.IsArray != tc.isArray || c.Text != tc.text || len(c.Wire) != tc.parts {
				t.Errorf("got text %v array %v %q %d parts, want %v %v %q %d",
					c.IsText, c.IsArray, c.Text, len(c.Wire), tc.isText, tc.isArray, tc.text, tc.parts)
			}
		})
	}
}

// TestObjectInto checks that a null clears the pointer and an object
// fills a new one, or the one already there.
func TestObjectInto(t *testing.T) {
	type opts struct{ A, B string }
	for _, tc := range []struct {
		in   string
		had  *opts
		want *opts
	}{
		{in: `null`, had: &opts{A: "x"}, want: nil},
		{in: `{"a":"1"}`, want: &opts{A: "1"}},
		{in: `{"b":"2"}`, had: &opts{A: "x"}, want: &opts{A: "x", B: "2"}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			dst := tc.had
			r := NewReader([]byte(tc.in))
			err := ObjectInto(r, &dst, func(key string) (bool, error) {
				switch key {
				case "a":
					return true, r.String(&dst.A)
				case "b":
					return true, r.String(&dst.B)
				}
				return false, nil
			})
			if err != nil {
				t.Fatalf("ObjectInto: %v", err)
			}
			if (dst == nil) != (tc.want == nil) || dst != nil && *dst != *tc.want {
				t.Errorf("got %+v, want %+v", dst, tc.want)
			}
		})
	}
}

// TestRefusalsRead checks that a member of the wrong type is skipped and
// its error kept, that a later good duplicate forgets it, and that a
// body that is not JSON ends the read.
func TestRefusalsRead(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string // the refusal kept for "a"
		readErr bool
	}{
		{in: `{"a":"x"}`},
		{in: `{"a":1}`, want: "cannot unmarshal number into a string"},
		{in: `{"a":1,"a":"x"}`},
		{in: `{"a":"x","a":[1]}`, want: "cannot unmarshal array into a string"},
		{in: `{"a":[1,}`, readErr: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var e Refusals
			r := NewReader([]byte(tc.in))
			err := r.Body(func(key []byte) error {
				var s string
				return e.Read(r, string(key), func() error { return r.String(&s) })
			}, "not an object")
			if got := err != nil; got != tc.readErr {
				t.Fatalf("read error: got %v, want error %v", err, tc.readErr)
			}
			got := ""
			if e["a"] != nil {
				got = e["a"].Error()
			}
			if !tc.readErr && got != tc.want {
				t.Errorf("refusal: got %q, want %q", got, tc.want)
			}
		})
	}
}
