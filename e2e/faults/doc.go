// Package faults is the fault matrix of issue 7 §2: it builds the real
// ccmesh binary, starts it headless on loopback, points it at fake
// upstreams that misbehave in one way each, and checks what the client
// gets, what the breaker does and what the request log holds (SPEC §6–§9,
// §11). It also kills ccmesh with SIGKILL under load and checks that a
// restart loses no endpoint edit and no breaker state (SPEC §7.6, §17).
//
// Everything lives in the _test files; this file only names the package.
package faults
