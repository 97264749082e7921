package tsgen

import (
	"reflect"
	"slices"
	"sort"
	"strings"
)

// The reflection walk of a struct's JSON members, as encoding/json finds
// them: embedded structs, tags, omitempty and the dominant field of a name.

// field is one JSON member of a struct, as encoding/json finds it.
type field struct {
	name      string
	tagged    bool         // the name comes from a json tag
	index     []int        // path of field indexes from the outer struct
	typ       reflect.Type // the Go field's type
	owner     reflect.Type // the struct declaring it
	omitEmpty bool
	omitZero  bool
	quoted    bool // ,string on a scalar
	viaPtr    bool // reached through an embedded pointer, which may be nil
}

// optional reports whether encoding/json can leave the field out.
func (f field) optional() bool { return f.omits() || f.viaPtr }

// omits reports whether the field's tag lets encoding/json leave out some
// of its values (a nil pointer among them).
func (f field) omits() bool {
	if f.omitZero {
		return true
	}
	if !f.omitEmpty {
		return false
	}
	switch f.typ.Kind() {
	case reflect.Struct:
		return false // omitempty never omits a struct
	case reflect.Array:
		return f.typ.Len() == 0
	}
	return true
}

// jsonFields lists the fields encoding/json writes for struct t, in its
// order, applying its rules for embedded structs: the shallowest field of
// a name wins, a tagged one wins among equals, and otherwise the name is
// dropped.
func jsonFields(t reflect.Type) []field {
	type level struct {
		typ    reflect.Type
		index  []int
		viaPtr bool
	}
	var fields []field
	current, next := []level{}, []level{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, lv := range current {
			if visited[lv.typ] {
				continue
			}
			visited[lv.typ] = true
			for i := 0; i < lv.typ.NumField(); i++ {
				sf := lv.typ.Field(i)
				if sf.Anonymous {
					et := sf.Type
					if et.Kind() == reflect.Pointer {
						et = et.Elem()
					}
					if !sf.IsExported() && et.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				index := append(slices.Clone(lv.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{
						name:      name,
						tagged:    name != "",
						index:     index,
						typ:       sf.Type,
						owner:     lv.typ,
						omitEmpty: hasOpt(opts, "omitempty"),
						omitZero:  hasOpt(opts, "omitzero"),
						viaPtr:    lv.viaPtr,
					}
					if f.name == "" {
						f.name = sf.Name
					}
					if hasOpt(opts, "string") {
						switch ft.Kind() {
						case reflect.Bool, reflect.Float32, reflect.Float64, reflect.String:
							f.quoted = true
						default:
							f.quoted = isInteger(ft.Kind())
						}
					}
					fields = append(fields, f)
					if count[lv.typ] > 1 {
						// The struct is embedded twice at this depth: its
						// fields annihilate each other below.
						fields = append(fields, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, index: index, viaPtr: lv.viaPtr || sf.Type.Kind() == reflect.Pointer})
				}
			}
		}
	}

	sort.SliceStable(fields, func(i, j int) bool {
		a, b := fields[i], fields[j]
		if a.name != b.name {
			return a.name < b.name
		}
		if len(a.index) != len(b.index) {
			return len(a.index) < len(b.index)
		}
		if a.tagged != b.tagged {
			return a.tagged
		}
		return slices.Compare(a.index, b.index) < 0
	})
	var out []field
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].name == fields[i].name {
			j++
		}
		if f, ok := dominant(fields[i:j]); ok {
			out = append(out, f)
		}
		i = j
	}
	slices.SortFunc(out, func(a, b field) int { return slices.Compare(a.index, b.index) })
	return out
}

// dominant picks the field that wins among fields of one name, sorted by
// depth and then tagged first.
func dominant(fs []field) (field, bool) {
	if len(fs) > 1 && len(fs[0].index) == len(fs[1].index) && fs[0].tagged == fs[1].tagged {
		return field{}, false
	}
	return fs[0], true
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}
