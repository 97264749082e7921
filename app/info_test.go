package app

import (
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Request log rows the writer could not write are logged with a code and
// counted in GET /api/info, which the live stream re-sends when the counts
// change (docs/BEHAVIOUR.md#request-log).
func TestInfoCountsLostLogRows(t *testing.T) {
	h := newHarness(t)
	var info map[string]any
	h.do("GET", "/api/info", "").decode(t, &info)
	for _, k := range []string{"log_rows_dropped", "log_rows_failed"} {
		if info[k] != float64(0) {
			t.Fatalf("info[%q] = %v at start, want 0", k, info[k])
		}
	}

	// Another connection makes every insert into the request log fail.
	raw, err := sql.Open("sqlite", filepath.Join(h.dir, DBFile))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`CREATE TRIGGER refuse_logs BEFORE INSERT ON request_logs
		BEGIN SELECT RAISE(ABORT, 'test refuses request log rows'); END`); err != nil {
		t.Fatal(err)
	}
	events, unsubscribe := h.app.Events().Subscribe()
	defer unsubscribe()
	res, err := http.Get(h.srv.URL + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()

	timeout := time.After(5 * time.Second)
	for failed := false; !failed; {
		select {
		case ev := <-events:
			var got Info
			if ev.Name == "info" && json.Unmarshal(ev.Data, &got) == nil && got.LogRowsFailed > 0 {
				failed = true
			}
		case <-timeout:
			t.Fatal("no info event with log_rows_failed > 0 within 5s")
		}
	}
	var got Info
	h.do("GET", "/api/info", "").decode(t, &got)
	if got.LogRowsFailed != 1 || got.LogRowsDropped != 0 {
		t.Errorf("info: %d failed, %d dropped; want 1 and 0", got.LogRowsFailed, got.LogRowsDropped)
	}
	if logs := h.logs.String(); !strings.Contains(logs, `"code":"LOG-001"`) || !strings.Contains(logs, "test refuses request log rows") {
		t.Errorf("process log lacks the failed write with code LOG-001:\n%s", logs)
	}
}
