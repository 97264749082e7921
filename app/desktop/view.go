package desktop

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"strings"
	"time"

	"github.com/ccmesh/ccmesh/breaker"
	"github.com/ccmesh/ccmesh/store"
)

// The tray's look is computed here, without GTK, so it is tested in the
// plain build; tray.go (desktop tag) only draws it. The app gathers the
// facts (Facts); View words them.

// Overall health, which picks the tray icon's colour (docs/BEHAVIOUR.md#tray).
const (
	HealthAll    = "all"    // every enabled endpoint healthy: green
	HealthSome   = "some"   // some unhealthy or recovering: amber
	HealthNone   = "none"   // none healthy (or none enabled): red
	HealthPaused = "paused" // proxy paused: grey
)

// TrayPauseFor is how long the tray's "Pause for 15 minutes" pauses.
const TrayPauseFor = 15 * time.Minute

// TrayBreakerLines is how many of the latest breaker changes the tray shows.
const TrayBreakerLines = 3

// TrayLabels are the tray menu's fixed words in the UI's language.
type TrayLabels struct {
	Open, Pause, PauseFor, Resume, Copy, Quit string
}

// TrayView is everything the tray shows at one moment.
type TrayView struct {
	Labels TrayLabels
	// Status is "127.0.0.1:3457 · 2/3 healthy · 12 requests, $0.05 today".
	Status  string
	Overall string // one of the Health* constants
	Paused  bool
	// PauseItem is the pause item's label: Pause, or Resume with the time a
	// timed pause ends. "Pause for 15 minutes" is offered while not paused.
	PauseItem string
	// Breaker holds the latest breaker changes in words, newest first; an
	// empty line is not shown.
	Breaker [TrayBreakerLines]string
	// Update is "Update available: v1.4.0 — notes" when the update check
	// found a newer release (docs/BEHAVIOUR.md#update-check), else "";
	// UpdateURL is its release page, which the line opens.
	Update, UpdateURL string
}

// trayText is one language's words for the tray.
type trayText struct {
	labels   TrayLabels
	resumeAt string // the pause item during a timed pause; %s is the time
	healthy  string
	// today words today's requests and cost; %d requests, %s the cost.
	today, todayOne string
	// noPrice stands for the cost when none of today's priced requests
	// had a price, as the UI says it (frontend/src/i18n: noPrice).
	noPrice string
	// A breaker change: %s the time, the endpoint, the transition.
	change string
	why    string // the reason after a transition; %s the reason
	day    string // time.Format layout of a change's day, when not today
	// The API's closed sets in words, as the UI says them (frontend/src/i18n).
	states, reasons, causes map[string]string
	// Desktop notifications of a breaker opening (%s the endpoint, then
	// the reason) and closing (%s the endpoint).
	openedTitle, opened, closedTitle, closed string
	// The lowest balance on the status line (%s the amount, the
	// endpoint), and the notification of one going under its threshold
	// (%s the endpoint, then the amount).
	lowest, lowTitle, low string
	// A newer release: %s the version, then (in updateNotes) its notes.
	update, updateNotes string
}

var trayWords = map[string]trayText{
	"en": {
		labels: TrayLabels{Open: "Open ccmesh", Pause: "Pause proxy", PauseFor: "Pause for 15 minutes",
			Resume: "Resume proxy", Copy: "Copy Claude Code setup", Quit: "Quit"},
		resumeAt: "Resume proxy (paused until %s)",
		healthy:  "healthy",
		today:    "%d requests, %s today",
		todayOne: "%d request, %s today",
		noPrice:  "no price",
		change:   "%s %s: %s",
		why:      " (%s)",
		day:      "Jan 2",
		states:   map[string]string{"closed": "closed", "open": "open", "half_open": "half-open"},
		reasons: map[string]string{"broken": "broken", "rate_limited": "rate limited",
			"quota_exhausted": "quota exhausted", "manual": "forced open"},
		causes:      map[string]string{"force_open": "forced open", "force_close": "forced closed"},
		openedTitle: "ccmesh: %s is unhealthy", opened: "Its circuit breaker opened (%s); requests go to the other endpoints.",
		closedTitle: "ccmesh: %s is healthy again", closed: "Its circuit breaker closed.",
		lowest:   "lowest %s (%s)",
		lowTitle: "ccmesh: %s is running low", low: "%s left: top it up before requests fail.",
		update: "Update available: %s", updateNotes: " — %s",
	},
	"zh-CN": {
		labels: TrayLabels{Open: "打开 ccmesh", Pause: "暂停代理", PauseFor: "暂停 15 分钟",
			Resume: "恢复代理", Copy: "复制 Claude Code 配置", Quit: "退出"},
		resumeAt: "恢复代理（暂停至 %s）",
		healthy:  "健康",
		today:    "今日 %d 次请求，%s",
		todayOne: "今日 %d 次请求，%s",
		noPrice:  "无价格",
		change:   "%s %s：%s",
		why:      "（%s）",
		day:      "1月2日",
		states:   map[string]string{"closed": "闭合", "open": "熔断", "half_open": "半开"},
		reasons: map[string]string{"broken": "故障", "rate_limited": "限流",
			"quota_exhausted": "额度耗尽", "manual": "手动熔断"},
		causes:      map[string]string{"force_open": "手动熔断", "force_close": "手动恢复"},
		openedTitle: "ccmesh：%s 已熔断", opened: "熔断器已打开（%s）；请求改走其他端点。",
		closedTitle: "ccmesh：%s 已恢复健康", closed: "熔断器已关闭。",
		lowest:   "最低余额 %s（%s）",
		lowTitle: "ccmesh：%s 余额不足", low: "剩余 %s：请在请求失败前充值。",
		update: "有可用更新：%s", updateNotes: " — %s",
	},
}

func trayTextOf(lang string) trayText {
	if w, ok := trayWords[lang]; ok {
		return w
	}
	return trayWords["en"]
}

// Today is today's requests and cost (local time).
type Today struct {
	Requests int64
	USD      float64
	Unpriced int64 // attempts with usage but no price: their cost is unknown
}

// Facts is what the tray shows, as the app knows it at one moment.
type Facts struct {
	Lang   string // the UI's language
	Listen string // the proxy's address
	// Healthy, Enabled and Total count the endpoints: healthy ones, enabled
	// ones, and all of them.
	Healthy, Enabled, Total int
	Today                   Today
	// Lowest is the lowest known balance; nil when no endpoint has one.
	Lowest      *Lowest
	Paused      bool
	PausedUntil time.Time // zero: until resumed
	// Recent holds the latest breaker changes, newest first.
	Recent []store.BreakerEvent
	// Update is the newer release the update check found, if any.
	Update *Update
	Now    time.Time
}

// Lowest is a balance in words ("$2.00") and its endpoint.
type Lowest struct{ Amount, Endpoint string }

// Update is a newer release: its version, release page and notes.
type Update struct{ Latest, URL, Notes string }

// View words f as the tray shows it.
func View(f Facts) TrayView {
	w := trayTextOf(f.Lang)
	// The status line counts every endpoint, as the UI's header does
	// (docs/BEHAVIOUR.md#tray: healthy/total); the colour judges only the enabled ones.
	v := TrayView{Labels: w.labels, Paused: f.Paused, PauseItem: w.labels.Pause}
	v.Status = fmt.Sprintf("%s · %d/%d %s · %s", f.Listen, f.Healthy, f.Total, w.healthy, TodayWords(f.Lang, f.Today))
	if low := f.Lowest; low != nil {
		v.Status += " · " + fmt.Sprintf(w.lowest, low.Amount, low.Endpoint)
	}
	switch {
	case f.Paused && !f.PausedUntil.IsZero():
		v.PauseItem = fmt.Sprintf(w.resumeAt, f.PausedUntil.In(time.Local).Format("15:04"))
	case f.Paused:
		v.PauseItem = w.labels.Resume
	}
	for i, ev := range f.Recent {
		if i == TrayBreakerLines {
			break
		}
		v.Breaker[i] = ChangeWords(f.Lang, ev, f.Now)
	}
	if u := f.Update; u != nil {
		v.Update, v.UpdateURL = fmt.Sprintf(w.update, u.Latest), u.URL
		if u.Notes != "" {
			v.Update += fmt.Sprintf(w.updateNotes, u.Notes)
		}
	}
	switch {
	case v.Paused:
		v.Overall = HealthPaused
	case f.Enabled > 0 && f.Healthy == f.Enabled:
		v.Overall = HealthAll
	case f.Healthy > 0:
		v.Overall = HealthSome
	default:
		v.Overall = HealthNone
	}
	return v
}

// TransitionNotice words a notification for a breaker of the endpoint
// name opening or closing, in the UI's language and words (the tray's);
// the lazy Open → HalfOpen step is not worth one.
func TransitionNotice(lang, name string, t breaker.Transition) (title, body string, ok bool) {
	w := trayTextOf(lang)
	switch {
	case t.To == breaker.Open:
		return fmt.Sprintf(w.openedTitle, name), fmt.Sprintf(w.opened, wordOf(w.reasons, t.Reason.String())), true
	case t.To == breaker.Closed && t.From != breaker.Closed:
		return fmt.Sprintf(w.closedTitle, name), w.closed, true
	}
	return "", "", false
}

// LowBalanceNotice words the notification of the endpoint name's balance
// going under its threshold; amount is the balance in words.
func LowBalanceNotice(lang, name, amount string) (title, body string) {
	w := trayTextOf(lang)
	return fmt.Sprintf(w.lowTitle, name), fmt.Sprintf(w.low, amount)
}

// TodayWords is today's requests and cost for the status line: "12
// requests, $1.23 today", with a "+" after the cost when some of today's
// requests had no price (their cost is unknown, docs/BEHAVIOUR.md#cost),
// and "no price" instead of "$0.00+" when none that had usage had one.
func TodayWords(lang string, t Today) string {
	w := trayTextOf(lang)
	cost := fmt.Sprintf("$%.2f", t.USD)
	switch {
	case t.Unpriced > 0 && t.USD == 0:
		cost = w.noPrice
	case t.Unpriced > 0:
		cost += "+"
	}
	if t.Requests == 1 {
		return fmt.Sprintf(w.todayOne, t.Requests, cost)
	}
	return fmt.Sprintf(w.today, t.Requests, cost)
}

// ChangeWords is one breaker change as the tray says it: "15:04 relay-a:
// closed → open (rate limited)", with the day before the time when it was
// not today. The words are the UI's (frontend/src/words.ts and the
// breaker history), never the API's identifiers.
func ChangeWords(lang string, ev store.BreakerEvent, now time.Time) string {
	w := trayTextOf(lang)
	at := ev.At.In(time.Local)
	when := at.Format("15:04")
	if y, m, d := now.In(time.Local).Date(); at.Year() != y || at.Month() != m || at.Day() != d {
		when = at.Format(w.day) + " " + when
	}
	what := wordOf(w.states, ev.From) + " → " + wordOf(w.states, ev.To)
	switch {
	case ev.Reason != "" && !(ev.Cause == breaker.CauseForceOpen.String() && ev.Reason == breaker.Manual.String()):
		what += fmt.Sprintf(w.why, wordOf(w.reasons, ev.Reason))
	case w.causes[ev.Cause] != "":
		what += fmt.Sprintf(w.why, w.causes[ev.Cause])
	}
	return fmt.Sprintf(w.change, when, ev.Endpoint, what)
}

// wordOf is a word of one of the API's closed sets in words; one the tray
// does not know yet reads with spaces for its underscores.
func wordOf(words map[string]string, v string) string {
	if s, ok := words[v]; ok {
		return s
	}
	return strings.ReplaceAll(v, "_", " ")
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
