package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Validation codes of key pools.
const (
	CodeDuplicateKey = "duplicate_key"
	CodeInvalidKey   = "invalid_key"
)

// maxKeyWeight bounds a key's and an endpoint's weight.
const maxKeyWeight = 1000

// mergeKeys makes e.Keys the pool p asks for, given the pool stored before
// (nil on create; e.Keys already holds p.Keys when p sets it), and keeps
// APIKey the first key's secret (docs/BEHAVIOUR.md#key-pools). Keys it
// adds have id 0 until assignKeyIDs.
func mergeKeys(e *Endpoint, before []EndpointKey, p EndpointPatch) *ValidationError {
	switch {
	case p.Keys != nil:
		stored := make(map[int64]EndpointKey, len(before))
		for _, k := range before {
			stored[k.ID] = k
		}
		for i := range e.Keys {
			k := &e.Keys[i]
			old, ok := stored[k.ID]
			if !ok {
				k.ID = 0 // an id from elsewhere (an import, a guess) is never taken over
			} else if k.Key == "" {
				k.Key = old.Key
			}
			delete(stored, k.ID)
		}
	case p.APIKey != nil:
		one := Endpoint{APIKey: *p.APIKey}
		if verr := checkAPIKey(&one); verr != nil {
			return verr
		}
		key := one.APIKey
		switch {
		case key == "":
			e.Keys = []EndpointKey{}
		case len(before) > 0 && before[0].Key == key:
			e.Keys = slices.Clone(before) // the same first key: the pool stays as it was
		default:
			e.Keys = []EndpointKey{{Key: key, Weight: 1, Enabled: true}}
		}
	default:
		// A copy: checkKeys normalises in place, and before may be a
		// snapshot others read (CheckReplace).
		e.Keys = slices.Clone(before)
	}
	if e.Keys == nil {
		e.Keys = []EndpointKey{}
	}
	if e.Weight < 0 || e.Weight > maxKeyWeight {
		return invalid("weight", CodeInvalidKey, "weight must be 0 to %d", maxKeyWeight)
	}
	if verr := checkKeys(e.Keys); verr != nil {
		return verr
	}
	e.APIKey = ""
	if len(e.Keys) > 0 {
		e.APIKey = e.Keys[0].Key
	}
	return nil
}

// checkKeys trims and checks every key of a pool: a secret as api_key's
// rule says, a label of at most 64 characters without control characters,
// a weight in 0–1000, and no secret twice.
func checkKeys(keys []EndpointKey) *ValidationError {
	seen := make(map[string]int, len(keys))
	for i := range keys {
		k := &keys[i]
		field := fmt.Sprintf("keys[%d]", i)
		k.Key, k.Label = strings.TrimSpace(k.Key), strings.TrimSpace(k.Label)
		switch {
		case k.Key == "":
			return invalid(field+".key", CodeRequired, "%s has no key; paste one (an existing key keeps its own when sent with its id)", field)
		case strings.ContainsFunc(k.Key, unicode.IsControl):
			return invalid(field+".key", CodeInvalidAPIKey, "%s contains control characters; paste the key alone", field)
		case !utf8.ValidString(k.Key) || strings.ContainsRune(k.Key, utf8.RuneError):
			return invalid(field+".key", CodeInvalidAPIKey, "%s is not valid UTF-8 text (it was damaged when copied); paste the key again", field)
		case utf8.RuneCountInString(k.Label) > 64 || strings.ContainsFunc(k.Label, unicode.IsControl):
			return invalid(field+".label", CodeInvalidKey, "the label of %s must be at most 64 characters, without control characters", field)
		case k.Weight < 0 || k.Weight > maxKeyWeight:
			return invalid(field+".weight", CodeInvalidKey, "the weight of %s must be 0 to %d", field, maxKeyWeight)
		}
		if j, dup := seen[k.Key]; dup {
			return invalid(field+".key", CodeDuplicateKey, "%s is the same key as keys[%d]; each key is listed once", field, j)
		}
		seen[k.Key] = i
	}
	return nil
}

// assignKeyIDs gives every key of e without an id a new one from the
// counter, which never hands one out twice.
func assignKeyIDs(ctx context.Context, tx *sql.Tx, e *Endpoint) error {
	for i := range e.Keys {
		if e.Keys[i].ID != 0 {
			continue
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO endpoint_key_ids DEFAULT VALUES`)
		if err != nil {
			return fmt.Errorf("new key id: %w", err)
		}
		if e.Keys[i].ID, err = res.LastInsertId(); err != nil {
			return fmt.Errorf("new key id: %w", err)
		}
	}
	return nil
}
