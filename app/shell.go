package app

import "github.com/ccmesh/ccmesh/app/clients"

// shellQuote makes s one word of a POSIX shell line that nothing in it can
// break out of (clients.ShellQuote): the curl line of a captured request
// goes through it as the clients' export lines do.
func shellQuote(s string) string { return clients.ShellQuote(s) }
