package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/ccmesh/ccmesh/app/apierr"
)

// CodeOutOfRange is the code of a number outside its range tag's range in
// an endpoint's fields or another input without a code of its own.
const CodeOutOfRange = "out_of_range"

// Range is the range of one number the admin API takes: the field's range
// tag, "min,max" or "min,max,the range in words"
// (docs/BEHAVIOUR.md#bad-input-and-faults). Every integer field of the
// admin API's inputs has one (the app's TestRangesCoverEveryNumber),
// beside the field it bounds: settings in the app, endpoint orders and
// the price multiplier in the store, breaker parameters in
// breaker.Overrides. A float field's range has decimal ends.
type Range struct {
	Min, Max   int64   // an integer field's
	FMin, FMax float64 // a float field's
	Words      string  // the range as a person says it, or ""
}

// IsFloat reports whether t, or what it points to, is a float.
func IsFloat(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64
}

// RangeOf parses f's range tag; ok is false when it has none.
func RangeOf(f reflect.StructField) (r Range, ok bool, err error) {
	tag, ok := f.Tag.Lookup("range")
	if !ok {
		return Range{}, false, nil
	}
	parts := strings.SplitN(tag, ",", 3)
	if len(parts) < 2 {
		return Range{}, true, fmt.Errorf("range tag of %s: %q is not min,max[,words]", f.Name, tag)
	}
	if IsFloat(f.Type) {
		if r.FMin, err = strconv.ParseFloat(parts[0], 64); err == nil {
			r.FMax, err = strconv.ParseFloat(parts[1], 64)
		}
		if err != nil || !(r.FMin <= r.FMax) {
			return Range{}, true, fmt.Errorf("range tag of %s: %q is not min,max[,words]", f.Name, tag)
		}
	} else {
		if r.Min, err = strconv.ParseInt(parts[0], 10, 64); err == nil {
			r.Max, err = strconv.ParseInt(parts[1], 10, 64)
		}
		if err != nil || r.Min > r.Max {
			return Range{}, true, fmt.Errorf("range tag of %s: %q is not min,max[,words]", f.Name, tag)
		}
	}
	if len(parts) == 3 {
		r.Words = parts[2]
	}
	return r, true, nil
}

// CheckRanges checks each number field that v, a struct, sets (a nil
// pointer sets nothing) against its range tag, in field order. A
// rejection has code and the field prefix + its JSON name. Every integer
// field of the admin API's inputs has a range; a float field is checked
// when it has one.
func CheckRanges(code, prefix string, v any) *apierr.Error {
	rv := reflect.ValueOf(v)
	for i := range rv.NumField() {
		f, fv := rv.Type().Field(i), rv.Field(i)
		if fv.Kind() == reflect.Pointer {
			if fv.IsNil() {
				continue
			}
			fv = fv.Elem()
		}
		if !fv.CanInt() && !fv.CanFloat() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		r, ok, err := RangeOf(f)
		if err != nil {
			panic(err) // a tag written wrong; the app's TestRangesCoverEveryNumber reads them all
		}
		if !ok {
			continue
		}
		words := ""
		if r.Words != "" {
			words = " (" + r.Words + ")"
		}
		if fv.CanFloat() {
			// Written so that NaN fails too (JSON has none, but a Go caller might).
			if x := fv.Float(); !(x >= r.FMin && x <= r.FMax) {
				return apierr.Rejected(code, prefix+name, "%s must be from %g to %g%s, got %g", name, r.FMin, r.FMax, words, x)
			}
			continue
		}
		if n := fv.Int(); n < r.Min || n > r.Max {
			return apierr.Rejected(code, prefix+name, "%s must be from %d to %d%s, got %d", name, r.Min, r.Max, words, n)
		}
	}
	return nil
}
