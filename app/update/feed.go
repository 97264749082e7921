package update

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultFeed is the project's own releases, as GitHub's REST API lists
// them.
const DefaultFeed = "https://api.github.com/repos/ccmesh/ccmesh/releases"

// Limits of one check.
const (
	Timeout  = 10 * time.Second
	MaxBytes = 1 << 20 // the feed's answer; more is an error
	// NotesRunes is how much of a release's notes the summary keeps.
	NotesRunes = 200
)

// Release is one entry of the feed: the fields of a GitHub release that
// the check reads.
type Release struct {
	TagName    string `json:"tag_name"`
	Name       string `json:"name"`
	HTMLURL    string `json:"html_url"`
	Body       string `json:"body"`
	Draft      bool   `json:"draft"`
	Prerelease bool   `json:"prerelease"`
}

// Latest is the newest release of a feed, as the check reports it.
type Latest struct {
	Version string // canonical semver, e.g. v1.4.0
	URL     string // the release page; "" when the feed's was not an http(s) URL
	Notes   string // the first line of the release notes, cut at NotesRunes
}

// Newest picks the newest release that is neither a draft nor a
// prerelease (nor has a prerelease tag, such as v2.0.0-rc.1), by semver;
// tags that are not semver are left out. ok is false when none is left.
func Newest(rs []Release) (Latest, bool) {
	var best Latest
	for _, r := range rs {
		v, ok := canonical(r.TagName)
		if !ok || r.Draft || r.Prerelease || strings.Contains(v, "-") {
			continue
		}
		if best.Version == "" || Newer(v, best.Version) {
			best = Latest{Version: v, URL: pageURL(r.HTMLURL), Notes: summary(r.Body, r.Name)}
		}
	}
	return best, best.Version != ""
}

// pageURL keeps a release page only as an absolute http(s) URL: the UI
// links to it, and a javascript: or file: URL from a feed must not become
// a link.
func pageURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return u.String()
}

// summary is the notes' first non-empty line (the release's name when
// they have none), cut at NotesRunes.
func summary(body, name string) string {
	line := strings.TrimSpace(name)
	for l := range strings.SplitSeq(body, "\n") {
		if l = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "#*- ")); l != "" {
			line = l
			break
		}
	}
	if utf8.RuneCountInString(line) > NotesRunes {
		line = string([]rune(line)[:NotesRunes]) + "…"
	}
	return line
}

// Client reads a feed. It follows no redirect, gives up after Timeout,
// refuses an answer over MaxBytes, and sends no credential: only its
// User-Agent and, after a first answer, If-None-Match with that answer's
// ETag, so an unchanged feed answers 304 and the release it listed is kept.
type Client struct {
	http      *http.Client
	userAgent string

	mu     sync.Mutex // one check at a time; guards what follows
	feed   string     // the feed that etag and last belong to
	etag   string
	last   Latest
	hasAny bool
}

// NewClient returns a client that reaches the feed through rt
// (http.DefaultTransport when nil) as userAgent.
func NewClient(rt http.RoundTripper, userAgent string) *Client {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return &Client{userAgent: userAgent, http: &http.Client{
		Transport: rt,
		Timeout:   Timeout,
		// GitHub answers the releases list directly; a redirect is
		// reported as the feed's answer rather than followed elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Check reads feed and returns its newest release; found is false when it
// lists none (or only drafts and prereleases).
func (c *Client) Check(ctx context.Context, feed string) (latest Latest, found bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if feed != c.feed { // another feed: what was kept is not its
		c.feed, c.etag, c.last, c.hasAny = feed, "", Latest{}, false
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, feed, nil)
	if err != nil {
		return Latest{}, false, fmt.Errorf("update check: build the request: %w", err)
	}
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/vnd.github+json")
	if c.etag != "" {
		req.Header.Set("If-None-Match", c.etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Latest{}, false, fmt.Errorf("update check: read the feed: %w", withoutQuery(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && c.etag != "":
		return c.last, c.hasAny, nil
	case resp.StatusCode != http.StatusOK:
		return Latest{}, false, fmt.Errorf("update check: the feed answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
	if err != nil {
		return Latest{}, false, fmt.Errorf("update check: read the feed: %w", err)
	}
	if len(body) > MaxBytes {
		return Latest{}, false, errors.New("update check: the feed's answer is over 1 MiB")
	}
	var rs []Release
	if err := json.Unmarshal(body, &rs); err != nil {
		return Latest{}, false, fmt.Errorf("update check: decode the feed (a list of releases): %w", err)
	}
	c.last, c.hasAny = Newest(rs)
	c.etag = resp.Header.Get("ETag")
	return c.last, c.hasAny, nil
}

// withoutQuery names the feed in a transport error without its query, which
// the error is shown in the UI and logged with, and a query may hold a
// token.
func withoutQuery(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	u, perr := url.Parse(ue.URL)
	if perr != nil {
		return &url.Error{Op: ue.Op, URL: "the feed", Err: ue.Err}
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return &url.Error{Op: ue.Op, URL: u.String(), Err: ue.Err}
}
