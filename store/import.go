package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Import applies an export document in one transaction: each endpoint whose
// name exists is updated with the fields it sets (so an export without keys
// keeps the stored keys), any other is created; settings, a document as
// PutSettings takes it, replaces the stored one unless it is nil. It returns how many endpoints it created or
// updated. A rejected endpoint is a *ValidationError whose Field is
// prefixed with its position ("endpoints[2].base_url"), and nothing is
// changed. A name may appear once in a document: a second one is a
// duplicate_name, not a second edit of the first.
func (db *DB) Import(ctx context.Context, endpoints []EndpointPatch, settings json.RawMessage) (int, error) {
	first := make(map[string]int, len(endpoints))
	for i, p := range endpoints {
		if p.Name == nil {
			continue
		}
		if j, ok := first[*p.Name]; ok {
			return 0, &ValidationError{Field: fmt.Sprintf("endpoints[%d].name", i), Code: CodeDuplicateName,
				Message: fmt.Sprintf("endpoint %d (%s): the name %q appears twice in this import (endpoints %d and %d); "+
					"each endpoint may appear once", i+1, *p.Name, *p.Name, j+1, i+1)}
		}
		first[*p.Name] = i
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		for i, p := range endpoints {
			if err := importEndpoint(ctx, tx, p); err != nil {
				var verr *ValidationError
				if errors.As(err, &verr) {
					return &ValidationError{
						Field:   fmt.Sprintf("endpoints[%d].%s", i, verr.Field),
						Code:    verr.Code,
						Message: fmt.Sprintf("endpoint %d (%s): %s", i+1, deref(p.Name), verr.Message),
					}
				}
				return err
			}
		}
		if settings != nil {
			return putSettings(ctx, tx, settings)
		}
		return nil
	})
	if err != nil {
		return 0, endpointError("import", err)
	}
	return len(endpoints), nil
}

func importEndpoint(ctx context.Context, tx *sql.Tx, p EndpointPatch) error {
	if p.Name != nil {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM endpoints WHERE name = ?`, *p.Name).Scan(&id)
		switch {
		case err == nil:
			_, err = updateEndpoint(ctx, tx, id, p)
			return err
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
	}
	_, err := createEndpoint(ctx, tx, p)
	return err
}
