package conv

import (
	"slices"
	"testing"
)

// A model list page of either shape gives its ids, whether more exist,
// and the cursor that asks for the next page.
func TestReadModelList(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       ModelPage
		bad        bool
	}{
		{"anthropic", `{"data":[{"id":"a"},{"id":"b"}],"has_more":true,"first_id":"a","last_id":"b"}`,
			ModelPage{IDs: []string{"a", "b"}, More: true, Cursor: "b"}, false},
		{"openai", `{"object":"list","data":[{"id":"gpt-x"}]}`, ModelPage{IDs: []string{"gpt-x"}, Cursor: "gpt-x"}, false},
		{"paged openai without last_id", `{"data":[{"id":"x"},{"id":"y"}],"has_more":true}`,
			ModelPage{IDs: []string{"x", "y"}, More: true, Cursor: "y"}, false},
		{"empty", `{"data":[]}`, ModelPage{IDs: []string{}}, false},
		{"not a list", `[1,2]`, ModelPage{}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ReadModelList([]byte(c.body))
			if (err != nil) != c.bad {
				t.Fatalf("err %v, want error %v", err, c.bad)
			}
			if !slices.Equal(got.IDs, c.want.IDs) || got.More != c.want.More || got.Cursor != c.want.Cursor {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// A Spec's model list is /v1/models read by ReadModelList unless it says
// otherwise; its upstream path is its first inbound path unless it says
// otherwise.
func TestSpecDefaults(t *testing.T) {
	plain := &Spec{Inbound: []string{"/v1/x", "/v1/x/count"}}
	own := &Spec{
		Inbound:    []string{"/v1/x"},
		ModelsPath: "/v1beta/models",
		ModelsPage: func([]byte) (ModelPage, error) { return ModelPage{IDs: []string{"own"}}, nil },
		UpstreamPath: func(model string, stream bool) (string, string) {
			if stream {
				return "/v1beta/models/" + model + ":streamGenerateContent", "alt=sse"
			}
			return "/v1beta/models/" + model + ":generateContent", ""
		},
	}
	for _, c := range []struct {
		name             string
		s                *Spec
		stream           bool
		models, path, rq string
		ids              []string
	}{
		{"plain", plain, true, "/v1/models", "/v1/x", "", []string{"m"}},
		{"own", own, false, "/v1beta/models", "/v1beta/models/m:generateContent", "", []string{"own"}},
		{"own stream", own, true, "/v1beta/models", "/v1beta/models/m:streamGenerateContent", "alt=sse", []string{"own"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, rq := c.s.Upstream("m", c.stream)
			page, err := c.s.ReadModels([]byte(`{"data":[{"id":"m"}]}`))
			if c.s.Models() != c.models || path != c.path || rq != c.rq || err != nil || !slices.Equal(page.IDs, c.ids) {
				t.Errorf("models %s, upstream %s?%s, page %v (%v); want %s, %s?%s, %v", c.s.Models(), path, rq, page.IDs, err, c.models, c.path, c.rq, c.ids)
			}
		})
	}
}

// Codecs tell a protocol of their own family from any other by the
// families their packages declare, never by name.
func TestSameFamily(t *testing.T) {
	Declare(&Spec{Protocol: "test-a", Family: "test-f"})
	Declare(&Spec{Protocol: "test-b", Family: "test-f"})
	Declare(&Spec{Protocol: "test-c", Family: "test-g"})
	for _, c := range []struct {
		p, q Protocol
		want bool
	}{
		{"test-a", "test-b", true},
		{"test-b", "test-a", true},
		{"test-a", "test-c", false},
		{"test-a", "test-undeclared", false},
		{"test-undeclared", "test-other-undeclared", false},
	} {
		t.Run(string(c.p)+"/"+string(c.q), func(t *testing.T) {
			if got := SameFamily(c.p, c.q); got != c.want {
				t.Errorf("SameFamily(%q, %q) = %v, want %v", c.p, c.q, got, c.want)
			}
		})
	}
}
