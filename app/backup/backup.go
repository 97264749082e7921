// Package backup is ccmesh's backups and sync
// (docs/BEHAVIOUR.md#backup-and-sync), the admin API's export, import and
// sync routes with all they decide: the export document and its hash
// (export.go), the import's reading, plan, report and application
// (import.go, diff.go), the sync's settings, push, pull and conflicts
// (sync.go), and under them the file sealed with a passphrase and opened
// again (age.go: age, scrypt, one at a time) and the sync file on a WebDAV
// server, read whole and replaced only as the push read it (dav.go).
//
// They are one package rather than a document package over this one's
// transport: the sync's decisions are made of the document's hash, the
// import's plan and the remote file's bytes and ETag together, and split
// across two packages each would have to export its internals to the
// other. The app's own types stay the app's: the settings document is
// the type parameter S (app.Settings, which says its key and this
// machine's parts through Settings), and the app is reached through the
// port Host and the store through Store. A refusal is an Error
// (apierr.Error), which the app answers as it is.
package backup

import "github.com/ccmesh/ccmesh/app/apierr"

// Error is a refusal the admin API answers as it is: its HTTP status, its
// code, the request's field at fault if one is, and what to do.
type Error = apierr.Error
