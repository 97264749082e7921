package main

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"io"

	"golang.org/x/image/draw"
)

// iconSizes are the hicolor sizes the package installs
// (/usr/share/icons/hicolor/<n>x<n>/apps/ccmesh.png).
var iconSizes = []int{16, 24, 32, 48, 64, 128, 256, 512}

// icons scales the app icon (build/appicon.png, square) to each of
// iconSizes and returns the PNGs by size. The same input always gives the
// same bytes, so the .deb is reproducible.
func icons(src io.Reader) (map[int][]byte, error) {
	img, err := png.Decode(src)
	if err != nil {
		return nil, fmt.Errorf("read the app icon: %w", err)
	}
	b := img.Bounds()
	if b.Dx() != b.Dy() || b.Dx() < iconSizes[len(iconSizes)-1] {
		return nil, fmt.Errorf("the app icon is %dx%d: want a square of at least %d pixels", b.Dx(), b.Dy(), iconSizes[len(iconSizes)-1])
	}
	out := make(map[int][]byte, len(iconSizes))
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	for _, n := range iconSizes {
		dst := image.NewNRGBA(image.Rect(0, 0, n, n))
		// CatmullRom keeps the small sizes sharp where bilinear blurs them.
		draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
		var buf bytes.Buffer
		if err := enc.Encode(&buf, dst); err != nil {
			return nil, fmt.Errorf("encode the %dx%d icon: %w", n, n, err)
		}
		out[n] = buf.Bytes()
	}
	return out, nil
}
