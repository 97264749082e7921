package app

import (
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/ccmesh/ccmesh/proxy"
)

// storedCaptureText is every column of every stored capture, blobs
// decompressed, as one text.
func storedCaptureText(t *testing.T, h *harness) string {
	t.Helper()
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	db, err := sql.Open("sqlite", "file:"+h.app.db.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(t.Context(), `SELECT method, query, request_headers, request_body,
		response_headers, response_body FROM captures`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var all strings.Builder
	for rows.Next() {
		var (
			method, query, reqHdr, respHdr string
			reqBody, respBody              []byte
		)
		if err := rows.Scan(&method, &query, &reqHdr, &reqBody, &respHdr, &respBody); err != nil {
			t.Fatal(err)
		}
		all.WriteString(method + query + reqHdr + respHdr)
		for _, b := range [][]byte{reqBody, respBody} {
			if len(b) > 0 {
				out, err := dec.DecodeAll(b, nil)
				if err != nil {
					t.Fatal(err)
				}
				all.Write(out)
			}
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return all.String()
}

// TestCaptureQueryAndAdminTokenRedacted: a key in the query and the admin
// token (in the query, a Referer, any header, the body) are stored
// nowhere, shown in neither the capture nor the curl command, and a
// resend to another endpoint carries no query secret of the original
// (docs/BEHAVIOUR.md#capture-and-resend).
func TestCaptureQueryAndAdminTokenRedacted(t *testing.T) {
	const queryKey = "AIzaSyQueryKey-0001112223"
	h, _, b := captureHarness(t, "all")
	admin := h.app.AdminToken()
	body := strings.Replace(capBody, `"hi"`, fmt.Sprintf("%q", "the admin token is "+admin), 1)
	id, _ := h.send("/v1/messages?beta=true&key="+queryKey+"&Access_Token="+queryKey+"&note="+admin, body,
		"Referer", "http://127.0.0.1:3457/ui/?token="+admin, "X-Debug", admin)
	secrets := []string{queryKey, admin}

	_, capt := h.capture(id)
	var curl CurlReply
	cr := h.do("GET", fmt.Sprintf("/api/logs/%d/curl", id), "")
	cr.decode(t, &curl)
	if capt.status != 200 || cr.status != 200 {
		t.Fatalf("capture %d %s; curl %d %s", capt.status, capt.body, cr.status, cr.body)
	}
	for what, text := range map[string]string{"the capture": string(capt.body), "the curl command": curl.Command,
		"the database": storedCaptureText(t, h)} {
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s holds %q: %s", what, s, text)
			}
		}
	}
	if want := "/v1/messages?beta=true&note=" + url.QueryEscape(proxy.MaskKey(admin)); !strings.Contains(curl.Command, want) {
		t.Errorf("curl command %s, want the URL %s", curl.Command, want)
	}

	r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), `{"endpoint":"b"}`)
	if r.status != 200 {
		t.Fatalf("resend: %d %s", r.status, r.body)
	}
	h.lastLogID()
	up := b.Requests()[len(b.Requests())-1]
	if strings.Contains(up.RawQuery, queryKey) || strings.Contains(up.RawQuery, admin) || strings.Contains(strings.ToLower(up.RawQuery), "key=") {
		t.Errorf("the resend sent ?%s", up.RawQuery)
	}
	if up.Header.Get("Referer") != "" {
		t.Errorf("the resend sent Referer %q", up.Header.Get("Referer"))
	}
}

// TestResendOldCaptureQuery: a capture stored before queries were
// redacted still sends no query secret again, nor shows it in a curl
// command.
func TestResendOldCaptureQuery(t *testing.T) {
	const queryKey = "AIzaSyQueryKey-0001112223"
	h, _, b := captureHarness(t, "all")
	id, _ := h.send("/v1/messages?beta=true", capBody)
	db, err := sql.Open("sqlite", "file:"+h.app.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), `UPDATE captures SET query = ? WHERE log_id = ?`,
		"beta=true&api_key="+queryKey+"&token="+h.app.AdminToken(), id); err != nil {
		t.Fatal(err)
	}
	var curl CurlReply
	h.do("GET", fmt.Sprintf("/api/logs/%d/curl", id), "").decode(t, &curl)
	if strings.Contains(curl.Command, queryKey) || !strings.Contains(curl.Command, "/v1/messages?beta=true'") {
		t.Errorf("curl command %s", curl.Command)
	}
	if r := h.do("POST", fmt.Sprintf("/api/logs/%d/resend", id), `{"endpoint":"b"}`); r.status != 200 {
		t.Fatalf("resend: %d %s", r.status, r.body)
	}
	h.lastLogID()
	if got := b.Requests()[len(b.Requests())-1].RawQuery; got != "beta=true" {
		t.Errorf("the resend sent ?%s, want ?beta=true", got)
	}
}
