package store

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// An endpoint's stored fields are listed once, in endpointFields: each
// entry is the column, how a row's value lands in Endpoint, how Endpoint's
// value is written, and how EndpointPatch sets it. The SELECT list, the
// scan, the INSERT and UPDATE statements and applyPatch all come from it,
// so a new field is one line here, its column in a migration, and its
// place in the two types (docs/ARCHITECTURE.md#where-to-change-what).
type endpointField struct {
	column string
	// scan gives the destination of the column's value for e, and what to
	// do once it is read (nil: nothing).
	scan func(e *Endpoint) (dest any, finish func() error)
	// value is what is stored for e.
	value func(e *Endpoint) (any, error)
	// patch copies the field from p into e when p sets it; toPatch sets it
	// in p to a copy of e's.
	patch   func(e *Endpoint, p *EndpointPatch)
	toPatch func(e *Endpoint, p *EndpointPatch)
}

// plain is a field stored as it is.
func plain[T any](column string, field func(*Endpoint) *T, set func(*EndpointPatch) **T) endpointField {
	return endpointField{
		column:  column,
		scan:    func(e *Endpoint) (any, func() error) { return field(e), nil },
		value:   func(e *Endpoint) (any, error) { return *field(e), nil },
		patch:   patchWith(field, set, func(v T) T { return v }),
		toPatch: toPatchWith(field, set, func(v T) T { return v }),
	}
}

// patchWith copies a set patch field into e through clone.
func patchWith[T any](field func(*Endpoint) *T, set func(*EndpointPatch) **T, clone func(T) T) func(*Endpoint, *EndpointPatch) {
	return func(e *Endpoint, p *EndpointPatch) {
		if v := *set(p); v != nil {
			*field(e) = clone(*v)
		}
	}
}

// toPatchWith sets the patch field to a copy of e's.
func toPatchWith[T any](field func(*Endpoint) *T, set func(*EndpointPatch) **T, clone func(T) T) func(*Endpoint, *EndpointPatch) {
	return func(e *Endpoint, p *EndpointPatch) {
		v := clone(*field(e))
		*set(p) = &v
	}
}

// encoded is a field stored as JSON text; empty is its value when the
// field is nil (the API shows [] or {}, never null), and clone copies the
// patch's value so the stored endpoint never aliases the caller's input.
func encoded[T any](column string, field func(*Endpoint) *T, set func(*EndpointPatch) **T, empty func() T, isNil func(T) bool, clone func(T) T) endpointField {
	return endpointField{
		column: column,
		scan: func(e *Endpoint) (any, func() error) {
			var raw string
			return &raw, func() error {
				v := field(e)
				if err := json.Unmarshal([]byte(raw), v); err != nil {
					return fmt.Errorf("decode %s of endpoint %d: %w", column, e.ID, err)
				}
				if isNil(*v) {
					*v = empty()
				}
				return nil
			}
		},
		value: func(e *Endpoint) (any, error) {
			v := *field(e)
			if isNil(v) {
				v = empty()
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("encode %s: %w", column, err)
			}
			return string(b), nil
		},
		patch:   patchWith(field, set, clone),
		toPatch: toPatchWith(field, set, clone),
	}
}

func list[T any](column string, field func(*Endpoint) *[]T, set func(*EndpointPatch) **[]T) endpointField {
	return encoded(column, field, set, func() []T { return []T{} }, func(v []T) bool { return v == nil }, slices.Clone[[]T])
}

func dict(column string, field func(*Endpoint) *map[string]string, set func(*EndpointPatch) **map[string]string) endpointField {
	return encoded(column, field, set, func() map[string]string { return map[string]string{} },
		func(v map[string]string) bool { return v == nil }, maps.Clone[map[string]string])
}

// document is a JSON object the store keeps without reading it; {} when
// empty.
func document(column string, field func(*Endpoint) *json.RawMessage, set func(*EndpointPatch) **json.RawMessage) endpointField {
	return endpointField{
		column: column,
		scan: func(e *Endpoint) (any, func() error) {
			var raw string
			return &raw, func() error {
				*field(e) = rawObject(json.RawMessage(raw))
				return nil
			}
		},
		value: func(e *Endpoint) (any, error) {
			doc := rawObject(*field(e))
			if !json.Valid(doc) {
				return nil, fmt.Errorf("encode %s: not valid JSON", column)
			}
			return string(doc), nil
		},
		patch:   patchWith(field, set, slices.Clone[json.RawMessage]),
		toPatch: toPatchWith(field, set, slices.Clone[json.RawMessage]),
	}
}

// endpointFields are the columns of an endpoint besides id and its times.
var endpointFields = []endpointField{
	plain("name", func(e *Endpoint) *string { return &e.Name }, func(p *EndpointPatch) **string { return &p.Name }),
	plain("base_url", func(e *Endpoint) *string { return &e.BaseURL }, func(p *EndpointPatch) **string { return &p.BaseURL }),
	plain("api_key", func(e *Endpoint) *string { return &e.APIKey }, func(p *EndpointPatch) **string { return &p.APIKey }),
	plain("protocol", func(e *Endpoint) *string { return &e.Protocol }, func(p *EndpointPatch) **string { return &p.Protocol }),
	plain("auth", func(e *Endpoint) *string { return &e.Auth }, func(p *EndpointPatch) **string { return &p.Auth }),
	list("models", func(e *Endpoint) *[]string { return &e.Models }, func(p *EndpointPatch) **[]string { return &p.Models }),
	dict("model_map", func(e *Endpoint) *map[string]string { return &e.ModelMap }, func(p *EndpointPatch) **map[string]string { return &p.ModelMap }),
	plain("enabled", func(e *Endpoint) *bool { return &e.Enabled }, func(p *EndpointPatch) **bool { return &p.Enabled }),
	plain("fast", func(e *Endpoint) *bool { return &e.Fast }, func(p *EndpointPatch) **bool { return &p.Fast }),
	plain("fast_sort_order", func(e *Endpoint) *int { return &e.FastSortOrder }, func(p *EndpointPatch) **int { return &p.FastSortOrder }),
	plain("sort_order", func(e *Endpoint) *int { return &e.SortOrder }, func(p *EndpointPatch) **int { return &p.SortOrder }),
	document("breaker_overrides", func(e *Endpoint) *json.RawMessage { return &e.BreakerOverrides }, func(p *EndpointPatch) **json.RawMessage { return &p.BreakerOverrides }),
	plain("price_multiplier", func(e *Endpoint) *float64 { return &e.PriceMultiplier }, func(p *EndpointPatch) **float64 { return &p.PriceMultiplier }),
	plain("hedge_after_ms", func(e *Endpoint) *int64 { return &e.HedgeAfterMs }, func(p *EndpointPatch) **int64 { return &p.HedgeAfterMs }),
	list("drops", func(e *Endpoint) *[]EndpointDrop { return &e.Drops }, func(p *EndpointPatch) **[]EndpointDrop { return &p.Drops }),
	plain("on_model_mismatch", func(e *Endpoint) *string { return &e.OnModelMismatch }, func(p *EndpointPatch) **string { return &p.OnModelMismatch }),
	document("balance", func(e *Endpoint) *json.RawMessage { return &e.Balance }, func(p *EndpointPatch) **json.RawMessage { return &p.Balance }),
	plain("proxy_url", func(e *Endpoint) *string { return &e.ProxyURL }, func(p *EndpointPatch) **string { return &p.ProxyURL }),
	list("keys", func(e *Endpoint) *[]EndpointKey { return &e.Keys }, func(p *EndpointPatch) **[]EndpointKey { return &p.Keys }),
	plain("weight", func(e *Endpoint) *int { return &e.Weight }, func(p *EndpointPatch) **int { return &p.Weight }),
	list("tags", func(e *Endpoint) *[]string { return &e.Tags }, func(p *EndpointPatch) **[]string { return &p.Tags }),
}

// The statements made of endpointFields.
var (
	endpointColumns = "id, " + fieldColumns(", ") + ", created_at, updated_at"
	insertEndpoint  = "INSERT INTO endpoints (" + fieldColumns(", ") + ", created_at, updated_at) VALUES (" +
		strings.Repeat("?, ", len(endpointFields)) + "?, ?)"
	updateEndpointSQL = "UPDATE endpoints SET " + fieldColumns(" = ?, ") + " = ?, updated_at = ? WHERE id = ?"
)

func fieldColumns(sep string) string {
	cols := make([]string, len(endpointFields))
	for i, f := range endpointFields {
		cols[i] = f.column
	}
	return strings.Join(cols, sep)
}

// applyPatch copies the fields p sets into e. Slices and maps are copied so
// the stored endpoint never aliases the caller's input.
func applyPatch(e *Endpoint, p EndpointPatch) {
	for _, f := range endpointFields {
		f.patch(e, &p)
	}
}

// PatchOf is the patch that sets every field of e to e's value, copied:
// what export, import and sync carry of an endpoint.
func PatchOf(e Endpoint) EndpointPatch {
	var p EndpointPatch
	for _, f := range endpointFields {
		f.toPatch(&e, &p)
	}
	return p
}

// endpointArgs are the stored values of e's fields, in endpointFields'
// order (the INSERT's and UPDATE's).
func endpointArgs(e *Endpoint) ([]any, error) {
	args := make([]any, len(endpointFields))
	for i, f := range endpointFields {
		v, err := f.value(e)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	return args, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanEndpoint(s scanner) (Endpoint, error) {
	var (
		e                    Endpoint
		createdAt, updatedAt int64
	)
	dest := make([]any, 0, len(endpointFields)+3)
	finish := make([]func() error, 0, 4)
	dest = append(dest, &e.ID)
	for _, f := range endpointFields {
		d, fin := f.scan(&e)
		dest = append(dest, d)
		if fin != nil {
			finish = append(finish, fin)
		}
	}
	dest = append(dest, &createdAt, &updatedAt)
	if err := s.Scan(dest...); err != nil {
		return Endpoint{}, err
	}
	for _, fin := range finish {
		if err := fin(); err != nil {
			return Endpoint{}, err
		}
	}
	e.CreatedAt, e.UpdatedAt = fromMillis(createdAt), fromMillis(updatedAt)
	return e, nil
}
