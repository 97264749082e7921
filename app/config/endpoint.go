package config

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/app/balance"
	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Codes of an endpoint input's rejections made here; the store's are
// store.Code*, a breaker parameter's breaker.Code*.
const (
	CodeInvalidProtocol = "invalid_protocol"
	CodeInvalidAuth     = "invalid_auth"
	CodeInvalidMismatch = "invalid_on_model_mismatch"
	CodeInvalidProxyURL = "invalid_proxy_url"
	CodeInvalidBalance  = "invalid_balance"
)

// EndpointInput is the body of POST and PUT /api/endpoints, and an
// endpoint of an import: the store's patch with the fields the app owns
// typed, so that decoding checks their JSON types and Validate their
// values. Its fields shadow the patch's of the same JSON names.
type EndpointInput struct {
	store.EndpointPatch
	Protocol         *proxy.Protocol        `json:"protocol"`
	Auth             *proxy.AuthMode        `json:"auth"`
	BreakerOverrides *breaker.Overrides     `json:"breaker_overrides"`
	OnModelMismatch  *proxy.OnModelMismatch `json:"on_model_mismatch"`
	Balance          *balance.Connector     `json:"balance"`
}

// Patch is in as the store takes it; in must have been validated.
func (in EndpointInput) Patch() (store.EndpointPatch, error) {
	p := in.EndpointPatch
	p.Protocol, p.Auth, p.BreakerOverrides, p.OnModelMismatch, p.Balance = nil, nil, nil, nil, nil
	if in.OnModelMismatch != nil {
		v := string(*in.OnModelMismatch)
		p.OnModelMismatch = &v
	}
	if in.Protocol != nil {
		v := string(*in.Protocol)
		p.Protocol = &v
	}
	if in.Auth != nil {
		v := string(*in.Auth)
		p.Auth = &v
	}
	if in.BreakerOverrides != nil {
		// Re-encoded, so the store keeps only the parameters there are, as
		// the API shows them.
		doc, err := json.Marshal(*in.BreakerOverrides)
		if err != nil {
			return store.EndpointPatch{}, fmt.Errorf("encode breaker_overrides: %w", err)
		}
		raw := json.RawMessage(doc)
		p.BreakerOverrides = &raw
	}
	if in.Balance != nil {
		doc, err := json.Marshal(*in.Balance)
		if err != nil {
			return store.EndpointPatch{}, fmt.Errorf("encode balance: %w", err)
		}
		raw := json.RawMessage(doc)
		p.Balance = &raw
	}
	return p, nil
}

// Validate checks the fields of an endpoint input that the app owns, in
// the order the admin API has always reported them. create says whether
// the input makes a new endpoint: its protocol is then required, and a
// left-out auth mode becomes the default (docs/BEHAVIOUR.md#endpoints).
func (in *EndpointInput) Validate(create bool) *apierr.Error {
	switch {
	case in.Protocol != nil && in.Protocol.Valid():
	case in.Protocol == nil && !create:
	case in.Protocol == nil || *in.Protocol == "":
		return apierr.Rejected(store.CodeRequired, "protocol", "protocol is required: %s", Words(proxy.Protocols, " or "))
	default:
		return apierr.Rejected(CodeInvalidProtocol, "protocol", "protocol %q is not one of %s", *in.Protocol, Words(proxy.Protocols, ", "))
	}
	if in.Auth == nil && create {
		auth := proxy.AuthModes[0]
		in.Auth = &auth
	}
	if in.Auth != nil && !in.Auth.Valid() {
		return apierr.Rejected(CodeInvalidAuth, "auth", "auth %q is not one of %s", *in.Auth, Words(proxy.AuthModes, ", "))
	}
	if err := CheckRanges(CodeOutOfRange, "", in.EndpointPatch); err != nil {
		return err
	}
	if in.BreakerOverrides != nil {
		if err := ValidOverrides("breaker_overrides", *in.BreakerOverrides); err != nil {
			return err
		}
	}
	if in.OnModelMismatch != nil && *in.OnModelMismatch != "" && !in.OnModelMismatch.Valid() {
		return apierr.Rejected(CodeInvalidMismatch, "on_model_mismatch", "on_model_mismatch %q is not one of %s", *in.OnModelMismatch, Words(proxy.MismatchModes, ", "))
	}
	if in.Drops != nil {
		if err := ValidDrops(*in.Drops, time.Now()); err != nil {
			return err
		}
	}
	if in.BaseURL != nil {
		if err := in.CheckBalance(*in.BaseURL); err != nil {
			return err
		}
	}
	if in.ProxyURL != nil {
		v := strings.TrimSpace(*in.ProxyURL)
		in.ProxyURL = &v
		if v != "" {
			if _, err := proxy.ParseProxyURL(v); err != nil {
				// The message never quotes the URL: it may hold a password.
				return apierr.Rejected(CodeInvalidProxyURL, "proxy_url", "%s (or leave it empty to connect directly)", err.Error())
			}
		}
	}
	return nil
}

// CheckBalance validates the balance connector in sets against the base
// URL it will read for (docs/BEHAVIOUR.md#balance).
func (in *EndpointInput) CheckBalance(baseURL string) *apierr.Error {
	if in.Balance == nil {
		return nil
	}
	if field, msg := in.Balance.Check(baseURL); field != "" {
		return apierr.Rejected(CodeInvalidBalance, field, "%s", msg)
	}
	return nil
}

// ValidateImport validates an import's endpoints as the store will apply
// them, in order: one whose name exists updates it, any other is a
// create. existing names the endpoints stored now. A name given twice
// passes here as an update, for the store to refuse as a duplicate with
// both places.
func ValidateImport(eps []EndpointInput, existing []store.Endpoint) *apierr.Error {
	names := make(map[string]bool, len(existing)+len(eps))
	for _, e := range existing {
		names[e.Name] = true
	}
	for i := range eps {
		in := &eps[i]
		var name string
		if in.Name != nil {
			name = *in.Name
		}
		create := in.Name == nil || !names[name]
		if err := in.Validate(create); err != nil {
			return &apierr.Error{Status: err.Status, Code: err.Code, Field: fmt.Sprintf("endpoints[%d].%s", i, err.Field),
				Message: fmt.Sprintf("endpoint %d (%s): %s", i+1, name, err.Message)}
		}
		if in.Name != nil {
			names[name] = true
		}
	}
	return nil
}

// An endpoint's drops are the parts of a request it refuses and gets
// without (docs/BEHAVIOUR.md#refused-fields); the app keeps them with the
// endpoint.

// Bounds of an endpoint's drops.
const (
	MaxDrops     = 100
	MaxDropError = 512
)

// Drop sources.
const (
	DropLearned = "learned"
	DropManual  = "manual"
)

// ValidDrops checks and completes the drops an input sets: each a part
// ccmesh may leave out, once; a source of learned or manual (manual when
// left out); a time (now when left out); an error of at most 512 bytes.
func ValidDrops(ds []store.EndpointDrop, now time.Time) *apierr.Error {
	if len(ds) > MaxDrops {
		return apierr.Invalid("drops", "an endpoint keeps at most %d drops, got %d", MaxDrops, len(ds))
	}
	seen := make(map[string]int, len(ds))
	for i := range ds {
		d := &ds[i]
		field := fmt.Sprintf("drops[%d]", i)
		if _, ok := proxy.Drop(d.Drop).Why(); !ok {
			return apierr.Invalid(field+".drop", "%q is not a part ccmesh may leave out: name one of GET /api/droppable's parts, or beta:<value> for an anthropic-beta value", d.Drop)
		}
		if j, dup := seen[d.Drop]; dup {
			return apierr.Invalid(field+".drop", "%q is given twice (drops %d and %d)", d.Drop, j, i)
		}
		seen[d.Drop] = i
		switch d.Source {
		case "":
			d.Source = DropManual
		case DropLearned, DropManual:
		default:
			return apierr.Invalid(field+".source", "source %q is not learned or manual", d.Source)
		}
		if d.At.IsZero() {
			d.At = now.UTC().Truncate(time.Millisecond)
		}
		if len(d.Error) > MaxDropError {
			return apierr.Invalid(field+".error", "the error is %d bytes, more than %d", len(d.Error), MaxDropError)
		}
	}
	return nil
}
