//go:build desktop && linux

package desktop

import "github.com/godbus/dbus/v5"

// notify shows a desktop notification through the freedesktop D-Bus
// service; without a notification daemon it fails quietly.
func notify(title, body string) error {
	conn, err := dbus.SessionBus()
	if err != nil {
		return err
	}
	obj := conn.Object("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
	return obj.Call("org.freedesktop.Notifications.Notify", 0, "ccmesh", uint32(0), "",
		title, body, []string{}, map[string]dbus.Variant{}, int32(6000)).Err
}
