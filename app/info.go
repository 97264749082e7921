package app

import "net/http"

// Info is GET /api/info: what the header and the tray show.
type Info struct {
	Version  string `json:"version"`
	Listen   string `json:"listen"`
	ProxyURL string `json:"proxy_url"`
	DataDir  string `json:"data_dir"`
	Paused   bool   `json:"paused"`
	Headless bool   `json:"headless"`
}

// Version is set at build time with -ldflags "-X github.com/ccmesh/ccmesh/app.Version=…".
var Version = "dev"

// Info describes the running instance.
func (a *App) Info() Info {
	return Info{
		Version:  Version,
		Listen:   a.opts.Listen,
		ProxyURL: a.ProxyURL(),
		DataDir:  a.opts.DataDir,
		Paused:   a.paused.Load(),
		Headless: a.opts.Headless,
	}
}

// ProxyURL is the base URL clients point at.
func (a *App) ProxyURL() string { return "http://" + a.opts.Listen }

func (a *App) getInfo(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, a.Info())
	return nil
}
