package probe

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/proxy/translate/conv"
	"github.com/ccmesh/ccmesh/store"
)

// ModelList is the models an upstream lists, for the user to accept into
// the endpoint's models with an ordinary PUT; nothing is saved here
// (docs/BEHAVIOUR.md#health).
type ModelList struct {
	Models []string `json:"models"`
	// Truncated: the upstream lists more than MaxModels models, or more
	// pages than maxModelPages; Models holds the first ones.
	Truncated bool `json:"truncated"`
}

const (
	// MaxModels bounds the list: a relay listing every model of every
	// provider must not make a list no one can read or route by.
	MaxModels = 2000
	// maxModelPages bounds the requests one fetch sends, whatever an
	// upstream says about having more.
	maxModelPages = 50
)

// Error is a model list that could not be had; the app answers it as a
// 502 with its Code.
type Error struct {
	Code    string // upstream_unreachable, upstream_redirect, upstream_error or upstream_bad_models
	Message string
}

func (e *Error) Error() string { return e.Message }

// FetchModels reads e's model list (conv.Spec.Models), following its pages
// (Anthropic: has_more and last_id, asked for with after_id; OpenAI-style
// lists: one page unless they say has_more, then after), and returns the
// ids without saving them. A list that could not be had, or holds no
// model, is an *Error.
func FetchModels(ctx context.Context, h Host, e store.Endpoint) (ModelList, error) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	q := url.Values{}
	spec := specOf(e)
	if spec.ModelsLimit[0] != "" {
		q.Set(spec.ModelsLimit[0], spec.ModelsLimit[1])
	}
	after := spec.ModelsAfter
	out := ModelList{Models: []string{}}
	seen := map[string]bool{}
pages:
	for page := 1; ; page++ {
		p, err := modelsPage(ctx, h, e, q, page)
		if err != nil {
			return ModelList{}, err
		}
		for _, m := range p.IDs {
			if m == "" || seen[m] {
				continue
			}
			if len(out.Models) == MaxModels {
				out.Truncated = true
				break pages
			}
			seen[m] = true
			out.Models = append(out.Models, m)
		}
		if !p.More {
			break
		}
		cursor := p.Cursor
		// More is said to exist, but there is no way to ask for it, or no
		// more requests may be sent: what came is a part.
		if cursor == "" || cursor == q.Get(after) || page == maxModelPages {
			out.Truncated = true
			break
		}
		q.Set(after, cursor)
	}
	if len(out.Models) == 0 {
		return ModelList{}, &Error{Code: "upstream_bad_models",
			Message: fmt.Sprintf("%s's %s did not list any models", e.Name, spec.Models())}
	}
	return out, nil
}

// modelsPage reads page number n of e's model list, with query q.
func modelsPage(ctx context.Context, h Host, e store.Endpoint, q url.Values, n int) (conv.ModelPage, error) {
	spec := specOf(e)
	which := "GET " + spec.Models()
	if n > 1 {
		which = fmt.Sprintf("GET %s (page %d)", spec.Models(), n)
	}
	rep, err := call(ctx, h, e, http.MethodGet, spec.Models(), q, nil)
	if errors.As(err, new(*proxy.ProxyError)) {
		return conv.ModelPage{}, &Error{Code: "upstream_unreachable",
			Message: redact(h, e, fmt.Sprintf("%s, %s: %s", e.Name, which, proxyFailure(err)))}
	}
	if err != nil {
		return conv.ModelPage{}, &Error{Code: "upstream_unreachable",
			Message: redact(h, e, fmt.Sprintf("could not reach %s for %s: %v", e.Name, which, err))}
	}
	if redirect, ok := rep.redirected(); ok {
		return conv.ModelPage{}, &Error{Code: "upstream_redirect",
			Message: redact(h, e, fmt.Sprintf("%s, %s: %s", e.Name, which, redirect))}
	}
	if rep.status != http.StatusOK {
		return conv.ModelPage{}, &Error{Code: "upstream_error",
			Message: redact(h, e, fmt.Sprintf("%s answered %d to %s: %s", e.Name, rep.status, which, Head(rep.body, 300)))}
	}
	p, err := spec.ReadModels(rep.body)
	if err != nil {
		return conv.ModelPage{}, &Error{Code: "upstream_bad_models",
			Message: fmt.Sprintf("%s's answer to %s is not a model list: %v", e.Name, which, err)}
	}
	return p, nil
}
