package app

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"time"
)

// The tray's look is computed here, without GTK, so it is tested in the
// plain build; tray.go (desktop tag) only draws it.

// Overall health, which picks the tray icon's colour (docs/BEHAVIOUR.md#tray).
const (
	HealthAll    = "all"    // every enabled endpoint healthy: green
	HealthSome   = "some"   // some unhealthy or recovering: amber
	HealthNone   = "none"   // none healthy (or none enabled): red
	HealthPaused = "paused" // proxy paused: grey
)

// TrayLabels are the tray menu's words in the UI's language.
type TrayLabels struct {
	Open, Pause, Resume, Copy, Quit string
}

// TrayView is everything the tray shows at one moment.
type TrayView struct {
	Labels  TrayLabels
	Status  string // "127.0.0.1:3457 · 2/3 healthy"
	Overall string // one of the Health* constants
	Paused  bool
}

var trayWords = map[string]TrayLabels{
	"en":    {Open: "Open ccmesh", Pause: "Pause proxy", Resume: "Resume proxy", Copy: "Copy Claude Code setup", Quit: "Quit"},
	"zh-CN": {Open: "打开 ccmesh", Pause: "暂停代理", Resume: "恢复代理", Copy: "复制 Claude Code 配置", Quit: "退出"},
}

// TrayView computes the tray's state from health and settings.
func (a *App) TrayView() TrayView {
	lang := a.state.Load().Settings.Language
	labels, ok := trayWords[lang]
	if !ok {
		labels = trayWords["en"]
	}
	// The status line counts every endpoint, as the UI's header does
	// (docs/BEHAVIOUR.md#tray: healthy/total); the colour judges only the enabled ones.
	hs := a.Health()
	healthy, enabled := 0, 0
	for _, h := range hs {
		if h.Status != "disabled" {
			enabled++
		}
		if h.Status == "healthy" {
			healthy++
		}
	}
	v := TrayView{Labels: labels, Paused: a.Paused()}
	word := "healthy"
	if lang == "zh-CN" {
		word = "健康"
	}
	usd, unpriced := a.today.get(time.Now())
	v.Status = fmt.Sprintf("%s · %d/%d %s · %s", a.opts.Listen, healthy, len(hs), word, todayWords(lang, usd, unpriced))
	switch {
	case v.Paused:
		v.Overall = HealthPaused
	case enabled > 0 && healthy == enabled:
		v.Overall = HealthAll
	case healthy > 0:
		v.Overall = HealthSome
	default:
		v.Overall = HealthNone
	}
	return v
}

// todayWords is today's cost for the status line: "$1.23 today", with a
// "+" when some of today's requests had no price (their cost is unknown,
// docs/BEHAVIOUR.md#cost).
func todayWords(lang string, usd float64, unpriced int64) string {
	more := ""
	if unpriced > 0 {
		more = "+"
	}
	if lang == "zh-CN" {
		return fmt.Sprintf("今日 $%.2f%s", usd, more)
	}
	return fmt.Sprintf("$%.2f%s today", usd, more)
}

var iconColours = map[string]color.RGBA{
	HealthAll:    {0x2e, 0xa0, 0x43, 0xff},
	HealthSome:   {0xe0, 0x9b, 0x10, 0xff},
	HealthNone:   {0xd0, 0x30, 0x30, 0xff},
	HealthPaused: {0x88, 0x88, 0x88, 0xff},
}

// TrayIcon returns a 32×32 PNG: a filled disc in the colour of overall.
func TrayIcon(overall string) []byte {
	c, ok := iconColours[overall]
	if !ok {
		c = iconColours[HealthPaused]
	}
	const n = 32
	img := image.NewRGBA(image.Rect(0, 0, n, n))
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			dx, dy := float64(x)-15.5, float64(y)-15.5
			if dx*dx+dy*dy <= 14*14 {
				img.SetRGBA(x, y, c)
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // encoding an in-memory RGBA cannot fail
	return buf.Bytes()
}
