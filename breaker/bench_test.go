package breaker

import (
	"testing"
	"time"
)

func BenchmarkAvailable(b *testing.B) {
	br := NewSet(Config{}, nil).Get(1)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if !br.Available(now) {
			b.Fatal("closed breaker unavailable")
		}
	}
}

func BenchmarkAllowDone(b *testing.B) {
	br := NewSet(Config{}, nil).Get(1)
	b.ReportAllocs()
	for b.Loop() {
		p, err := br.Allow(Claude, time.Time{})
		if err != nil {
			b.Fatal(err)
		}
		p.Done(success)
	}
}

func BenchmarkAllowDoneParallel(b *testing.B) {
	br := NewSet(Config{}, nil).Get(1)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p, err := br.Allow(OpenAI, time.Time{})
			if err != nil {
				b.Error(err)
				return
			}
			p.Done(success)
		}
	})
}

func BenchmarkView(b *testing.B) {
	br := NewSet(Config{}, nil).Get(1)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		_ = br.View(now)
	}
}
