// Package charttest checks drawn charts in tests: a PNG decodes, has the
// size asked for and is not blank. Only tests import it.
package charttest

import (
	"bytes"
	"image"
	"image/png"
	"math"
	"testing"
)

// MinSpread is the least standard deviation of luminance (0..255) a chart
// must show: a blank or single-colour image has 0, a chart with axes,
// text and marks on white well over 10.
const MinSpread = 5

// CheckPNG decodes b as a PNG and fails t unless it is w×h pixels and not
// blank. It returns the image.
func CheckPNG(t testing.TB, b []byte, w, h int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	if got := img.Bounds().Size(); got.X != w || got.Y != h {
		t.Fatalf("image is %dx%d, want %dx%d", got.X, got.Y, w, h)
	}
	if sd := Spread(img); sd < MinSpread {
		t.Fatalf("image looks blank: luminance standard deviation %.2f", sd)
	}
	return img
}

// Spread is the standard deviation of img's pixel luminance (0..255).
func Spread(img image.Image) float64 {
	var n, sum, sq float64
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
			n++
			sum += l
			sq += l * l
		}
	}
	if n == 0 {
		return 0
	}
	m := sum / n
	return math.Sqrt(max(sq/n-m*m, 0))
}
