package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"

	"filippo.io/age"
	"filippo.io/age/armor"
)

// Codes of a file that cannot be opened (422).
const (
	CodePassphraseRequired = "passphrase_required"
	CodeBadPassphrase      = "bad_passphrase"
	CodeCorruptFile        = "corrupt_file"
)

// MinPassphrase is the shortest passphrase ccmesh encrypts with: the file
// may sit on someone else's server, and scrypt only slows a guess down.
const MinPassphrase = 8

// DefaultScryptWorkFactor is log2 of the scrypt cost of a new encrypted
// file: age's own default (about a second, and 256 MiB of memory).
const DefaultScryptWorkFactor = 18

// ScryptWorkFactor is the factor Seal writes with. Tests lower it.
var ScryptWorkFactor = DefaultScryptWorkFactor

// MaxScryptWorkFactor bounds the cost of opening a file, which says its
// own: the factor ccmesh writes and one step more (512 MiB). age's own
// bound, 2²², let a 266-byte crafted file take 4 GiB and 15 s.
const MaxScryptWorkFactor = DefaultScryptWorkFactor + 1

// scryptSlot lets one scrypt run at a time, opening or sealing a file:
// each takes up to 512 MiB of memory, so parallel ones would add up.
var scryptSlot = make(chan struct{}, 1)

// TakeScryptSlot waits for the slot, or for ctx to end (the client left);
// release gives it back.
func TakeScryptSlot(ctx context.Context) (release func(), err error) {
	if err := ctx.Err(); err != nil { // select would pick a free slot as readily
		return nil, fmt.Errorf("encrypt or decrypt a file: %w", err)
	}
	select {
	case scryptSlot <- struct{}{}:
		return func() {
			// The scrypt's buffer is garbage now; collected before the next
			// one starts, its memory serves that one too rather than the heap
			// growing to two of them (measured: 1.07 GB for three files at
			// 2^19 without this, 0.54 GB with it).
			runtime.GC()
			<-scryptSlot
		}, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for another file to be encrypted or decrypted: %w", ctx.Err())
	}
}

// Seal encrypts plain for the passphrase: an age file with one scrypt
// recipient, which authenticates every chunk, so a cut or damaged file
// fails to open rather than open as less.
func Seal(ctx context.Context, plain []byte, passphrase string) ([]byte, error) {
	rcpt, err := age.NewScryptRecipient(passphrase)
	if err != nil {
		return nil, fmt.Errorf("encrypt the export: %w", err)
	}
	rcpt.SetWorkFactor(ScryptWorkFactor)
	release, err := TakeScryptSlot(ctx)
	if err != nil {
		return nil, fmt.Errorf("encrypt the export: %w", err)
	}
	var out bytes.Buffer
	w, err := age.Encrypt(&out, rcpt) // the scrypt runs here
	release()
	if err != nil {
		return nil, fmt.Errorf("encrypt the export: %w", err)
	}
	if _, err := w.Write(plain); err != nil {
		return nil, fmt.Errorf("encrypt the export: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encrypt the export: %w", err)
	}
	return out.Bytes(), nil
}

// Open returns the plain bytes of a file: body itself unless it is an age
// file (binary or armored), which must open with passphrase and hold at
// most maxPlain bytes. Files open one at a time (see scryptSlot). A file
// that does not open is an Error (422) saying why.
func Open(ctx context.Context, body []byte, passphrase string, maxPlain int) (plain []byte, encrypted bool, err error) {
	var src io.Reader
	switch trimmed := bytes.TrimLeft(body, " \t\r\n"); {
	case bytes.HasPrefix(body, []byte("age-encryption.org/")):
		src = bytes.NewReader(body)
	case bytes.HasPrefix(trimmed, []byte(armor.Header)):
		src = armor.NewReader(bytes.NewReader(trimmed))
	default:
		return body, false, nil
	}
	if passphrase == "" {
		return nil, true, &Error{Status: http.StatusUnprocessableEntity, Code: CodePassphraseRequired, Field: "passphrase",
			Message: "this file is encrypted: give the passphrase it was exported with"}
	}
	id, err := age.NewScryptIdentity(passphrase)
	if err != nil {
		return nil, true, err
	}
	id.SetMaxWorkFactor(MaxScryptWorkFactor)
	release, err := TakeScryptSlot(ctx)
	if err != nil {
		return nil, true, err
	}
	r, err := age.Decrypt(src, id)
	if err == nil {
		plain, err = io.ReadAll(io.LimitReader(r, int64(maxPlain)+1))
		if err == nil && len(plain) > maxPlain {
			err = fmt.Errorf("it holds more than %d bytes", maxPlain)
		}
	}
	release()
	var nomatch *age.NoIdentityMatchError
	switch {
	case err == nil:
		return plain, true, nil
	case errors.As(err, &nomatch) && !slices.Contains(nomatch.StanzaTypes, "scrypt"):
		return nil, true, &Error{Status: http.StatusUnprocessableEntity, Code: CodeBadPassphrase, Field: "passphrase",
			Message: "this age file is encrypted to a key, not a passphrase: ccmesh cannot open it"}
	case errors.As(err, &nomatch):
		return nil, true, &Error{Status: http.StatusUnprocessableEntity, Code: CodeBadPassphrase, Field: "passphrase",
			Message: "wrong passphrase: this file does not open with it; nothing was changed"}
	default:
		return nil, true, &Error{Status: http.StatusUnprocessableEntity, Code: CodeCorruptFile,
			Message: fmt.Sprintf("the file is damaged or incomplete, so nothing was changed (%v)", err)}
	}
}
