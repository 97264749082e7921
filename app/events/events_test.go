package events

import "testing"

// A watch is signalled by every change, several coalescing into one, and
// without a subscriber nothing is marshalled for it.
func TestHubWatch(t *testing.T) {
	h := NewHub()
	w, unwatch := h.Watch()
	defer unwatch()
	marshalled := 0
	v := marshalCounter{&marshalled}
	h.Publish("log", v)
	h.Publish("log", v)
	h.Wake()
	if len(w) != 1 {
		t.Fatalf("%d signals pending, want 1", len(w))
	}
	<-w
	if marshalled != 0 {
		t.Errorf("marshalled %d times with only a watch", marshalled)
	}
	subs, unsubscribe := h.Subscribe()
	defer unsubscribe()
	h.Publish("log", v)
	if marshalled != 1 || len(subs) != 1 || len(w) != 1 {
		t.Errorf("with a subscriber: marshalled %d, %d events, %d signals; want 1, 1, 1", marshalled, len(subs), len(w))
	}
}

type marshalCounter struct{ n *int }

func (m marshalCounter) MarshalJSON() ([]byte, error) {
	*m.n++
	return []byte(`{}`), nil
}
