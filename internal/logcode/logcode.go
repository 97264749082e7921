// Package logcode is the one list of the process log's codes: the `code`
// field of a log line a user may be asked to look for, each documented in
// docs/BEHAVIOUR.md#process-log-codes. app, store and proxy use these
// constants rather than spelling a code; the test in this package holds
// every code unique, documented, and spelled nowhere else. It imports
// nothing, so any package may import it.
package logcode

// Field is the log field a code goes in.
const Field = "code"

// The codes, by the package that logs them.
const (
	// app
	BreakerNotPersisted = "APP-001"  // persisting breaker state failed; the loop retries
	ForceNotSaved       = "APP-002"  // a forced breaker state is live but was not saved
	HandlerPanic        = "APP-003"  // an admin API handler panicked; answered 500 internal
	DropsNotSaved       = "APP-004"  // what an endpoint refuses was not saved; kept in memory until restart
	OtherModelsUncount  = "APP-005"  // counting answers from another model failed at start; the figure starts at 0
	AdminAPIFailed      = "API-500"  // an admin API call failed with an unexpected error; answered 500 internal
	LogTablesDamaged    = "DB-002"   // the background check found the request log tables damaged
	SyncNotEnded        = "SYNC-001" // a push or pull could not release its hold; it ends by itself
	TestNotStored       = "TEST-001" // an endpoint test's result could not be stored

	// store
	LogRowsLost   = "LOG-001" // a batch of request log rows could not be written
	LogEncode     = "LOG-002" // a request log value could not be encoded
	LogPruneFail  = "LOG-003" // pruning the request log failed
	LogCheckpoint = "LOG-004" // the idle checkpoint of the database's WAL failed

	// proxy
	LearnedDrop = "PXY-001" // an endpoint refused parts of a request; they are left out from now on
)
