// Package config is the checks of ccmesh's configuration
// (docs/BEHAVIOUR.md#bad-input-and-faults): the words and parameters the
// store keeps without knowing them, checked once, whichever way they come
// in (the admin API's create, update and settings routes, an import, a
// sync's pull). It holds the range tags' reading and checking
// (ranges.go), the checks of single settings (checks.go), an endpoint
// as the admin API takes it and its checks (endpoint.go), and the routing
// rules' checks with the warning for a rule that can never match
// (rules.go).
//
// A rejection is an *apierr.Error naming the field, with a stable code the
// UI keys its messages on; the app answers it unchanged. What storage
// relies on (names, URLs, keys, model patterns) the store checks.
//
// The settings document itself (Settings, its defaults and the merge of a
// PUT onto it) stays the app's: its types are named app.Settings,
// app.BreakerProfiles and app.Warning in the API's generated types
// (frontend/src/api/types.gen.ts), which only a type declared in the app
// keeps. The app's validateSettings puts the checks here together.
package config
