// Package frontend embeds the built web UI (frontend/dist, made by `make ui`).
// A fresh checkout has only dist/.gitkeep, which is enough to compile.
package frontend

import "embed"

// Dist holds dist/ as built by Vite.
//
//go:embed all:dist
var Dist embed.FS
