// Package backup is the transport of ccmesh's backups and sync
// (docs/BEHAVIOUR.md#backup-and-sync): a file sealed with a passphrase and
// opened again (age, scrypt, one at a time), the sync file on a WebDAV
// server, read whole and replaced only as the push read it, and the
// report of what an import changes (Diff, over any settings struct). It
// knows nothing of the app: what the file holds — the export document,
// the import's validation, the sync's decisions — is the app's (export.go,
// backup.go, sync.go), and a refusal here is an Error (apierr.Error) the
// app answers as it says.
package backup

import "github.com/ccmesh/ccmesh/app/apierr"

// Error is a refusal the admin API answers as it is: its HTTP status, its
// code, the request's field at fault if one is, and what to do.
type Error = apierr.Error
