// Package apierr is the admin API's error
// (docs/BEHAVIOUR.md#bad-input-and-faults): a status, a stable code the UI
// keys its messages on, the request's field at fault if one is, and what
// to do. The app answers it as it is, as {"error":{"code","message","field"}},
// so a concern package that returns one names the field without knowing
// the app.
package apierr

import (
	"fmt"
	"net/http"

	"github.com/ccmesh/ccmesh/app/strictjson"
)

// Error is the admin API's error body: {"error":{"code","message","field"}}.
// Status is the HTTP status the app answers it with.
type Error struct {
	Status  int    `json:"-"`
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// CodeInvalidSetting is the code of a setting's value refused (Invalid).
const CodeInvalidSetting = "invalid_setting"

// BadRequest is a 400 reply: a request the API cannot read as meant.
func BadRequest(code, field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Rejected is a 422 reply for a bad field value.
func Rejected(code, field, format string, args ...any) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: code, Field: field, Message: fmt.Sprintf(format, args...)}
}

// Invalid is a 422 reply for a bad setting: Rejected with CodeInvalidSetting.
func Invalid(field, format string, args ...any) *Error {
	return Rejected(CodeInvalidSetting, field, format, args...)
}

// Decode decodes one JSON value into v, with errors a user can act on (a
// 400 with the field named): the rules are the package app/strictjson's.
func Decode(body []byte, v any) error {
	if err := strictjson.Decode(body, v); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: err.Code, Field: err.Field, Message: err.Message}
	}
	return nil
}
