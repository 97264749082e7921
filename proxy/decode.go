package proxy

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// decodeBody undoes Content-Encoding on a copy of a body so ccmesh can read
// it (docs/BEHAVIOUR.md#headers: Claude Code asks for gzip, br and zstd). The client still
// gets the raw bytes. Undecodable input is returned as it is: a garbled
// head in the log beats losing the attempt.
func decodeBody(encoding string, raw []byte, limit int64) []byte {
	if encoding == "" || len(raw) == 0 {
		return raw
	}
	out := raw
	codings := strings.Split(encoding, ",")
	for i := len(codings) - 1; i >= 0; i-- {
		dec, ok := decodeOne(strings.ToLower(strings.TrimSpace(codings[i])), out, limit)
		if !ok {
			return raw
		}
		out = dec
	}
	return out
}

func decodeOne(coding string, b []byte, limit int64) ([]byte, bool) {
	if coding == "" || coding == "identity" {
		return b, true
	}
	r, err := newDecoder(coding, bytes.NewReader(b))
	if err != nil {
		return nil, false
	}
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, limit))
	// A body cut at our read cap ends in a truncated stream; what was
	// decoded so far is still worth reading.
	if err != nil && len(out) == 0 {
		return nil, false
	}
	return out, true
}

var errUnknownCoding = errors.New("unknown content coding")

// errAnswerTooLarge is an answer whose decoded body is past the limit
// readDecoded was given.
var errAnswerTooLarge = errors.New("answer too large")

// codingError is a body whose content coding could not be undone: the
// upstream's fault, not the connection's.
type codingError struct{ err error }

func (e *codingError) Error() string { return "decode the body: " + e.err.Error() }
func (e *codingError) Unwrap() error { return e.err }

// readDecoded reads a whole body through its content codings as it
// arrives, keeping at most limit decoded bytes: a few KiB of brotli can
// stand for gigabytes, so neither the coded nor the decoded body is held
// past the limit (errAnswerTooLarge). A coding ccmesh does not know is
// read as it came, for the caller to refuse; an error of r comes back as
// it is, one of a decoder as a *codingError.
func readDecoded(r io.Reader, encoding string, limit int64) ([]byte, error) {
	src := &tapReader{r: r}
	var dec io.Reader = src
	codings := strings.Split(encoding, ",")
	for i := len(codings) - 1; i >= 0; i-- {
		c := strings.ToLower(strings.TrimSpace(codings[i]))
		if c == "" || c == "identity" {
			continue
		}
		d, err := newDecoder(c, dec)
		if errors.Is(err, errUnknownCoding) {
			dec = src
			break
		}
		if err != nil {
			return nil, readError(src, err)
		}
		defer d.Close()
		dec = d
	}
	b, err := io.ReadAll(io.LimitReader(dec, limit+1))
	if err != nil {
		return nil, readError(src, err)
	}
	if int64(len(b)) > limit {
		return nil, errAnswerTooLarge
	}
	return b, nil
}

// readError tells a failed read of the connection from a failed decode.
func readError(src *tapReader, err error) error {
	if src.err != nil && !errors.Is(src.err, io.EOF) {
		return src.err
	}
	return &codingError{err}
}

// tapReader remembers the error its reader returned.
type tapReader struct {
	r   io.Reader
	err error
}

func (t *tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil {
		t.err = err
	}
	return n, err
}

// decoders read each content coding ccmesh understands from r as it
// arrives, so a compressed event stream can be parsed event by event.
var decoders = map[string]func(r io.Reader) (io.ReadCloser, error){
	"gzip":   gunzip,
	"x-gzip": gunzip,
	"deflate": func(r io.Reader) (io.ReadCloser, error) {
		// RFC 9110's deflate is zlib-wrapped; some servers send raw deflate.
		br := bufio.NewReader(r)
		if hdr, err := br.Peek(2); err == nil && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 && hdr[0]&0x0f == 8 {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	},
	"br": func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(brotli.NewReader(r)), nil },
	"zstd": func(r io.Reader) (io.ReadCloser, error) {
		zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(64<<20))
		if err != nil {
			return nil, err
		}
		return zr.IOReadCloser(), nil
	},
}

func gunzip(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }

// newDecoder reads coding from r; an unknown coding is errUnknownCoding.
func newDecoder(coding string, r io.Reader) (io.ReadCloser, error) {
	dec, ok := decoders[coding]
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownCoding, coding)
	}
	return dec(r)
}

// upstreamErrorText pulls the message out of an Anthropic or OpenAI error
// body ("type: message"), or returns a short plain-text head.
func upstreamErrorText(body []byte) string {
	var doc struct {
		Error json.RawMessage `json:"error"`
		Msg   string          `json:"message"`
	}
	if json.Unmarshal(body, &doc) == nil {
		var inner struct {
			Type    string `json:"type"`
			Code    any    `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(doc.Error, &inner) == nil && (inner.Message != "" || inner.Type != "") {
			if inner.Type == "" || inner.Message == "" {
				return inner.Type + inner.Message
			}
			return inner.Type + ": " + inner.Message
		}
		var s string
		if json.Unmarshal(doc.Error, &s) == nil && s != "" {
			return s
		}
		if doc.Msg != "" {
			return doc.Msg
		}
	}
	return strings.TrimSpace(Head(body, 200))
}
