package main

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"testing"
)

func TestIcons(t *testing.T) {
	// A 512 square, opaque red on the left half, transparent on the right.
	src := image.NewNRGBA(image.Rect(0, 0, 512, 512))
	for y := range 512 {
		for x := range 256 {
			src.SetNRGBA(x, y, color.NRGBA{R: 255, A: 255})
		}
	}
	var in bytes.Buffer
	if err := png.Encode(&in, src); err != nil {
		t.Fatal(err)
	}
	got, err := icons(bytes.NewReader(in.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(iconSizes) {
		t.Fatalf("got %d icons, want %d", len(got), len(iconSizes))
	}
	for _, n := range iconSizes {
		img, err := png.Decode(bytes.NewReader(got[n]))
		if err != nil {
			t.Fatalf("%d: %v", n, err)
		}
		if b := img.Bounds(); b.Dx() != n || b.Dy() != n {
			t.Errorf("icon %d is %dx%d", n, b.Dx(), b.Dy())
		}
		if r, _, _, a := img.At(n/8, n/2).RGBA(); r>>8 != 255 || a>>8 != 255 {
			t.Errorf("icon %d: left side r=%d a=%d, want opaque red", n, r>>8, a>>8)
		}
		if _, _, _, a := img.At(n-1-n/8, n/2).RGBA(); a != 0 {
			t.Errorf("icon %d: right side alpha %d, want transparent", n, a>>8)
		}
	}
	again, err := icons(bytes.NewReader(in.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range iconSizes {
		if !bytes.Equal(got[n], again[n]) {
			t.Errorf("icon %d differs between two runs", n)
		}
	}
}

func TestIconsRefuses(t *testing.T) {
	for _, r := range []image.Rectangle{image.Rect(0, 0, 512, 256), image.Rect(0, 0, 256, 256)} {
		var in bytes.Buffer
		if err := png.Encode(&in, image.NewNRGBA(r)); err != nil {
			t.Fatal(err)
		}
		if _, err := icons(&in); err == nil {
			t.Errorf("%v: want an error", r)
		}
	}
	if _, err := icons(bytes.NewReader([]byte("not a png"))); err == nil {
		t.Error("not a PNG: want an error")
	}
}
