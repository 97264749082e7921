package app

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ccmesh/ccmesh/proxy"
)

// Endpoint replies mask the key with the proxy's mask, the one mask of the
// product: never more than 4 characters of a key under 20
// (docs/BEHAVIOUR.md#safety).
func TestEndpointReplyMasksKey(t *testing.T) {
	h := newHarness(t)
	for i, key := range []string{"k", "sk-1234", "sk-12345", "sk-0123456789a", "sk-0123456789abcde", "sk-ant-0123456789abcdef"} {
		e := h.mustCreate(fmt.Sprintf(`{"name":"e%d","base_url":"https://e%d.example","protocol":"anthropic","api_key":%q}`, i, i, key))
		var got EndpointReply
		h.do("GET", fmt.Sprintf("/api/endpoints/%d", e.ID), "").decode(t, &got)
		if got.APIKeyMasked != proxy.MaskKey(key) || !got.HasKey {
			t.Errorf("key %q: api_key_masked %q (has_key %v), want %q", key, got.APIKeyMasked, got.HasKey, proxy.MaskKey(key))
		}
		if shown := len(strings.ReplaceAll(got.APIKeyMasked, "…", "")); len(key) < 20 && shown > 4 {
			t.Errorf("key %q (%d characters): the mask %q shows %d of them", key, len(key), got.APIKeyMasked, shown)
		}
	}
}
