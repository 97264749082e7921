// Package faults is the fault matrix: it builds the real
// ccmesh binary, starts it headless on loopback, points it at fake
// upstreams that misbehave in one way each, and checks what the client
// gets, what the breaker does and what the request log holds (docs/BEHAVIOUR.md,
// from #attempt-loop to #request-log). It also kills ccmesh with SIGKILL under load and checks that a
// restart loses no endpoint edit and no breaker state (docs/BEHAVIOUR.md#breaker-persistence, docs/BEHAVIOUR.md#bad-input-and-faults).
//
// Everything lives in the _test files; this file only names the package.
package faults
