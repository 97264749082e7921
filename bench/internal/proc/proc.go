// Package proc starts a ccmesh binary for a measurement and reads what the
// process cost: the bench commands that measure one binary under a hostile
// upstream (bench/hostile, bench/preludeflood) share it.
package proc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// CCMesh is a ccmesh process started headless on a free loopback port and
// a fresh data dir, with an admin token.
type CCMesh struct {
	Base  string // http://127.0.0.1:<port>
	Cmd   *exec.Cmd
	token string
	dir   string
}

// Start runs bin headless and waits until its admin API answers (10 s).
func Start(bin, token string) (*CCMesh, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "ccmesh-proc")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--headless", "--listen", addr, "--data", dir, "--admin-token", token, "--log-level", "error")
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	c := &CCMesh{Base: "http://" + addr, Cmd: cmd, token: token, dir: dir}
	if err := c.waitReady(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop kills the process and removes its data dir.
func (c *CCMesh) Stop() {
	_ = c.Cmd.Process.Kill()
	_ = c.Cmd.Wait()
	os.RemoveAll(c.dir)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func (c *CCMesh) waitReady() error {
	for range 400 {
		if resp, err := http.Get(c.Base + "/api/info"); err == nil {
			resp.Body.Close()
			return nil
		}
		time.Sleep(25 * time.Millisecond)
	}
	return errors.New("ccmesh did not come up within 10 s")
}

// Admin sends an admin API request with the token; a status of 300 or
// more is an error quoting the answer.
func (c *CCMesh) Admin(method, path, body string) error {
	req, err := http.NewRequest(method, c.Base+path, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, b)
	}
	return nil
}

// Usage is the process's CPU seconds so far (utime + stime, from
// /proc/<pid>/stat) and its peak RSS in KiB (VmHWM).
func Usage(pid int) (cpu float64, hwmKiB int64, err error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read CPU time: %w", err)
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 14th and 15th fields of the line.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	const ticks = 100 // USER_HZ on Linux
	hwmKiB, err = PeakRSS(pid)
	return (ut + st) / ticks, hwmKiB, err
}

// PeakRSS reads VmHWM (KiB) from /proc.
func PeakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read peak RSS: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib)
			return kib, err
		}
	}
	return 0, errors.New("no VmHWM in /proc status")
}
