package capture

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/ccmesh/ccmesh/app/apierr"
	"github.com/ccmesh/ccmesh/proxy"
	"github.com/ccmesh/ccmesh/store"
)

// Store is the store as this package reads it. *store.DB is one.
type Store interface {
	GetCapture(ctx context.Context, id int64) (store.Capture, error)
	GetLog(ctx context.Context, id int64) (store.RequestLog, error)
}

// Source hands a proxy capture to the log writer, which calls Capture on
// its own goroutine: the secrets are removed there, off the request path.
// AdminToken is masked too: the proxy does not know it, and a page's
// Referer (/ui/?token=…) or a client's query may carry it.
type Source struct {
	Proxy      *proxy.Capture
	AdminToken string
}

func (s Source) Size() int { return s.Proxy.Size() }

func (s Source) Capture() *store.Capture {
	c := s.Proxy
	c.Redact(s.AdminToken)
	return &store.Capture{
		Method:            c.Method,
		Query:             c.Query,
		RequestHeader:     c.RequestHeader,
		RequestBody:       c.RequestBody,
		RequestTruncated:  c.RequestTruncated,
		Status:            c.Status,
		ResponseHeader:    c.ResponseHeader,
		ResponseBody:      c.ResponseBody,
		ResponseTruncated: c.ResponseTruncated,
	}
}

// Load reads the capture of log row id, with adminToken masked in its
// query. A row that does not exist is the store's error (store.ErrNotFound);
// a row without a capture is a 404 apierr.Error, or with forSending a 409 (there
// is nothing to send), and so is, with forSending, a capture whose request
// body was cut at the cap.
func Load(ctx context.Context, db Store, id int64, adminToken string, forSending bool) (store.Capture, error) {
	c, err := db.GetCapture(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		if _, lerr := db.GetLog(ctx, id); lerr != nil {
			return store.Capture{}, lerr
		}
		status := http.StatusNotFound
		if forSending {
			status = http.StatusConflict
		}
		return store.Capture{}, &apierr.Error{Status: status, Code: "no_capture", Message: fmt.Sprintf(
			"request log %d has no capture, so there is nothing to send again: set capture to errors or all "+
				"in Settings and requests are captured from then on (a capture may also have been dropped "+
				"for the total cap)", id)}
	}
	if err != nil {
		return store.Capture{}, err
	}
	// A capture stored before queries were redacted may still hold a
	// credential there: it is never shown, copied or sent again.
	c.Query = proxy.RedactQuery(c.Query, adminToken)
	if forSending && c.RequestTruncated {
		return store.Capture{}, &apierr.Error{Status: http.StatusConflict, Code: "capture_truncated", Message: fmt.Sprintf(
			"the request body of log %d was cut at the capture cap (or refused unread), so it cannot be sent again", id)}
	}
	return c, nil
}

// CurlCommand is log row id's capture as a curl command against ccmesh at
// proxyURL (Curl). A capture whose request body was cut at the cap is a
// 409 apierr.Error: the command would send a broken body.
func CurlCommand(ctx context.Context, db Store, id int64, adminToken, proxyURL string) (string, error) {
	c, err := Load(ctx, db, id, adminToken, false)
	if err != nil {
		return "", err
	}
	if c.RequestTruncated {
		return "", &apierr.Error{Status: http.StatusConflict, Code: "capture_truncated", Message: fmt.Sprintf(
			"the request body of log %d was cut at the capture cap (or refused unread): a command with it would send a broken body", id)}
	}
	row, err := db.GetLog(ctx, id)
	if err != nil {
		return "", err
	}
	return Curl(proxyURL, row, c), nil
}
