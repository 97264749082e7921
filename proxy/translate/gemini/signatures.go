package gemini

import (
	"container/list"
	"sync"
	"time"
)

// SignatureStore keeps the thoughtSignature of each function call a Gemini
// upstream made, per conversation and by the call's id, so that a client
// of another protocol — which has nowhere to keep it — can return the call
// and Gemini still gets its signature (Gemini 3 refuses the turn
// otherwise; ai.google.dev/gemini-api/docs/thought-signatures). It is
// bounded: entries older than the TTL (since they were stored or last
// read) are gone, and past the memory cap the least recently used go
// first. Safe for concurrent use.
type SignatureStore struct {
	mu       sync.Mutex
	ttl      time.Duration
	maxBytes int
	size     int
	byKey    map[sigKey]*list.Element
	lru      list.List // of *sigEntry, least recently used first
}

type sigKey struct{ conv, call string }

type sigEntry struct {
	key     sigKey
	sig     string
	touched time.Time
}

// Defaults for the proxy's one store. A signature is a few hundred bytes
// to a few KB of base64, so 16 MiB keeps thousands of calls; every turn
// reads the calls of its history again, which keeps a live conversation's
// entries, and a day covers a session left overnight. A call past either
// bound gets the fallback signature (encode.go), which Gemini takes.
const (
	DefaultStoreBytes = 16 << 20
	DefaultStoreTTL   = 24 * time.Hour
)

// entryOverhead is what one entry costs beyond its strings: the map
// slot, the list element and the entry, roughly.
const entryOverhead = 192

// NewSignatureStore returns a store of at most maxBytes (the strings and
// entryOverhead per entry) whose entries live ttl.
func NewSignatureStore(maxBytes int, ttl time.Duration) *SignatureStore {
	return &SignatureStore{ttl: ttl, maxBytes: maxBytes, byKey: map[sigKey]*list.Element{}}
}

func entrySize(k sigKey, sig string) int { return len(k.conv) + len(k.call) + len(sig) + entryOverhead }

// Put records sig for call id in conversation conv. An empty sig or id is
// not recorded; one larger than the whole cap neither.
func (s *SignatureStore) Put(conv, id, sig string) {
	if s == nil || id == "" || sig == "" {
		return
	}
	k := sigKey{conv, id}
	size := entrySize(k, sig)
	if size > s.maxBytes {
		return
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	if el, ok := s.byKey[k]; ok {
		s.remove(el)
	}
	s.byKey[k] = s.lru.PushBack(&sigEntry{key: k, sig: sig, touched: now})
	s.size += size
	for s.size > s.maxBytes {
		s.remove(s.lru.Front())
	}
}

// Get returns the signature of call id in conversation conv, and keeps it
// another TTL.
func (s *SignatureStore) Get(conv, id string) (string, bool) {
	if s == nil || id == "" {
		return "", false
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(now)
	el, ok := s.byKey[sigKey{conv, id}]
	if !ok {
		return "", false
	}
	e := el.Value.(*sigEntry)
	e.touched = now
	s.lru.MoveToBack(el)
	return e.sig, true
}

// Len is the number of signatures kept.
func (s *SignatureStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expire(time.Now())
	return s.lru.Len()
}

// expire drops the entries not touched for ttl; the list is in the order
// of their last touch, so they are at its front.
func (s *SignatureStore) expire(now time.Time) {
	for el := s.lru.Front(); el != nil; el = s.lru.Front() {
		if now.Sub(el.Value.(*sigEntry).touched) < s.ttl {
			return
		}
		s.remove(el)
	}
}

func (s *SignatureStore) remove(el *list.Element) {
	e := s.lru.Remove(el).(*sigEntry)
	delete(s.byKey, e.key)
	s.size -= entrySize(e.key, e.sig)
}
