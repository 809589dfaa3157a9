package charttest

import (
	"image"
	"image/color"
	"testing"
)

func TestSpread(t *testing.T) {
	blank := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for i := range blank.Pix {
		blank.Pix[i] = 0xFF
	}
	half := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			c := color.RGBA{0xFF, 0xFF, 0xFF, 0xFF}
			if x < 20 {
				c = color.RGBA{0, 0, 0, 0xFF}
			}
			half.Set(x, y, c)
		}
	}
	if s := Spread(blank); s > 1e-3 {
		t.Fatalf("blank image spread %v", s)
	}
	if s := Spread(half); s < 127 || s > 128 {
		t.Fatalf("half black image spread %v, want 127.5", s)
	}
}
