// Package faults is the fault matrix: it builds the real
// ccmesh binary, starts it headless on loopback, points it at fake
// upstreams that misbehave in one way each, and checks what the client
// gets, what the breaker does and what the request log holds (docs/BEHAVIOUR.md,
// from #attempt-loop to #request-log). The matrix runs twice: as Claude Code
// against Anthropic endpoints, and as an OpenAI Chat client whose faulty
// endpoint speaks Anthropic and whose healthy one speaks Chat, so every
// fault also crosses a translation (docs/BEHAVIOUR.md#translation). It also
// kills ccmesh with SIGKILL under load and checks that a restart loses no endpoint edit and no breaker state (docs/BEHAVIOUR.md#breaker-persistence, docs/BEHAVIOUR.md#bad-input-and-faults). It also drives balances and key
// pools through the binary: a spent relay left out of routing until a
// refresh shows credit, a connector's key kept on the endpoint's origin,
// a bad key in a pool, a conversation on its key and endpoint weights
// (docs/BEHAVIOUR.md#balance, #key-pools, #rotation).
//
// Everything lives in the _test files; this file only names the package.
package faults
