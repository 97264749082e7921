package proxy

import (
	"net/http"
	"testing"
	"time"
)

func BenchmarkClassify(b *testing.B) {
	h := http.Header{"Retry-After": {"12"}, "Content-Type": {"application/json"}}
	body := []byte(anthropicCredit)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		classifyLimit(http.StatusBadRequest, h, body, now)
	}
}
