//go:build !linux

package faults

import "os/exec"

// dieWithTest: only Linux has a parent-death signal; elsewhere the test's
// cleanup is what stops ccmesh.
func dieWithTest(*exec.Cmd) {}
