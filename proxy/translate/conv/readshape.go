package conv

import (
	"errors"
	"fmt"
)

// The shapes below are the ones the request decoders of several codecs
// read alike with a Reader; what differs (the members, the part type,
// the error wording) stays in each codec.

// Fields reads an object, calling member with each key, and again with
// its lower-case form when member knows no key of that spelling (the
// match encoding/json makes without regard to case); member reports
// whether it read the value. A value no call read is skipped.
func (r *Reader) Fields(member func(key string) (bool, error)) error {
	return r.Object(func(key []byte) error {
		ok, err := member(string(key))
		if f, folded := FoldKey(key); !ok && err == nil && folded {
			ok, err = member(string(f))
		}
		if !ok && err == nil {
			err = r.Skip()
		}
		return err
	})
}

// Body reads a request body, an object whose members member reads, to
// its end; a null body is refused with notObject, as each codec words it.
func (r *Reader) Body(member func(key []byte) error, notObject string) error {
	if r.Kind() == 'n' {
		if err := r.Skip(); err != nil {
			return err
		}
		return errors.New(notObject)
	}
	if err := r.Object(member); err != nil {
		return err
	}
	return r.End()
}

// ObjectInto reads an object's members into *dst with Fields, making
// *dst when it is nil (a duplicate member updates what the first made,
// as encoding/json does); a null sets *dst to nil. member reads into
// *dst, which is set before it is called.
func ObjectInto[T any](r *Reader, dst **T, member func(key string) (bool, error)) error {
	if null, err := r.Null(); null || err != nil {
		*dst = nil
		return err
	}
	if *dst == nil {
		*dst = new(T)
	}
	return r.Fields(member)
}

// BoolPtr reads a boolean into a new *dst; a null sets *dst to nil.
func (r *Reader) BoolPtr(dst **bool) error {
	if null, err := r.Null(); null || err != nil {
		*dst = nil
		return err
	}
	var b bool
	if err := r.Bool(&b); err != nil {
		return err
	}
	*dst = &b
	return nil
}

// StringPtr reads a string into a new *dst; a null sets *dst to nil.
func (r *Reader) StringPtr(dst **string) error {
	if null, err := r.Null(); null || err != nil {
		*dst = nil
		return err
	}
	var s string
	*dst = &s
	return r.String(&s)
}

// Try reads a value with fn. When fn fails the value is skipped from its
// start, and so checked to be JSON: refused is fn's error, for the
// caller to keep (a body with a member of the wrong type is still read
// to its end), and err the skip's, which ends the read.
func (r *Reader) Try(fn func() error) (refused, err error) {
	m := r.Mark()
	if refused = fn(); refused == nil {
		return nil, nil
	}
	r.Rewind(m)
	return refused, r.Skip()
}

// Refusals holds, by top-level member, why its last occurrence was
// refused; a later duplicate replaces it as it replaces the value.
type Refusals map[string]error

// Read reads member name with fn (see Try): a refusal is kept under name,
// a success forgets an earlier occurrence's refusal; the error returned
// is only one that ends the read.
func (e *Refusals) Read(r *Reader, name string, fn func() error) error {
	refused, err := r.Try(fn)
	switch {
	case err != nil:
		return err
	case refused == nil:
		delete(*e, name)
	default:
		if *e == nil {
			*e = make(Refusals)
		}
		(*e)[name] = refused
	}
	return nil
}

// Content is a message's content as read, in one pass: a string, an
// array of parts of the codec's wire type P, or neither.
type Content[P any] struct {
	IsText, IsArray bool
	Text            string
	Wire            []P
	Err             error // neither a string nor an array of parts
}

// Read reads the content with part reading each element of an array.
// Content that is neither a string nor an array of parts is skipped and
// kept as Err, wrapped as what says, for the codec to report when it
// translates the message.
func (c *Content[P]) Read(r *Reader, part func(*Reader, *P) error, what string) error {
	*c = Content[P]{}
	switch r.Kind() {
	case 'n':
		return r.Skip()
	case '"':
		c.IsText = true
		return r.String(&c.Text)
	}
	refused, err := r.Try(func() error {
		if k := r.Kind(); k != '[' {
			return TypeError(k, "an array of parts")
		}
		c.IsArray = true
		c.Wire = []P{}
		return r.Array(func(int) error {
			var zero P
			c.Wire = append(c.Wire, zero)
			return part(r, &c.Wire[len(c.Wire)-1])
		})
	})
	if refused != nil && err == nil {
		*c = Content[P]{Err: fmt.Errorf("%s: %w", what, refused)}
	}
	return err
}

// Parts is the content as parts: a string is one text part (none when
// empty), an array is what wire makes of its parts; Err is returned as it
// is.
func (c *Content[P]) Parts(wire func([]P) ([]Part, error)) ([]Part, error) {
	switch {
	case c.Err != nil:
		return nil, c.Err
	case c.IsText && c.Text == "":
		return nil, nil
	case c.IsText:
		return []Part{{Kind: PartText, Text: c.Text}}, nil
	case !c.IsArray:
		return nil, nil
	}
	return wire(c.Wire)
}
