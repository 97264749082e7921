package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := `{"test":"lat","target":"direct","round":1,"p50_us":100,"p99_us":200,"cpu_per_req_us":50}
{"test":"lat","target":"a","round":1,"p50_us":150,"p99_us":500,"cpu_per_req_us":70}
{"test":"lat","target":"direct","round":2,"p50_us":110,"p99_us":210,"cpu_per_req_us":50}
{"test":"lat","target":"a","round":2,"p50_us":130,"p99_us":310,"cpu_per_req_us":90}
{"test":"lat","target":"a","round":3,"p50_us":999,"p99_us":999,"cpu_per_req_us":80}
{"test":"lat","target":"direct-chat","round":1,"p50_us":90}
{"test":"lat","target":"direct-chat","round":2,"p50_us":100}
{"test":"lat","target":"tr","round":1,"p50_us":200}
{"test":"lat","target":"tr","round":2,"p50_us":180}
{"test":"sse8","target":"direct","round":1,"event_p50_us":10,"content_p50_us":20}
{"test":"sse8","target":"a","round":1,"event_p50_us":15,"content_p50_us":60}
`
	rs, err := read(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	got := summary(rs, []string{"tr"})
	for _, want := range []string{
		// round 3 has no direct: left out of the added figures, not of CPU
		"added p50 35 [50 20]  added p99 200 [300 100]  CPU/req 80 [70 90 80]",
		"added event p50 5 [5]  added first content 40 [40]",
		// tr translates to Chat: taken against direct-chat, not direct
		"tr          added p50 95 [110 80]",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "direct-chat ") {
		t.Errorf("direct-chat, a reference, is listed as a target:\n%s", got)
	}
	if _, err := read(strings.NewReader("{not json\n")); err == nil {
		t.Error("a damaged line was read without an error")
	}
}
