// Package persist saves what changes on the request path without making
// a request wait for the database (docs/BEHAVIOUR.md#breaker-persistence,
// docs/BEHAVIOUR.md#refused-fields): breaker transitions, as each
// breaker's state row and the audit trail (Breakers), and the parts of a
// request an endpoint refuses, as the proxy learns them (Drops). Either
// only takes note where it is told and writes on its own goroutine (Run),
// or in a synchronous Flush. It reaches the app through the ports Source
// and Host and the store through BreakerStore and DropStore.
package persist
