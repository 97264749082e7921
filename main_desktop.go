//go:build desktop

package main

import "runtime"

// GTK, which Wails and the tray share, must run on the main thread.
func init() { runtime.LockOSThread() }
