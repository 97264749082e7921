package faults

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the kernel kill ccmesh if the test process dies first
// (a `go test -timeout` panic), so no ccmesh outlives its test.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
