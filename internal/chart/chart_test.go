package chart

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarrydb/quarry/internal/chart/charttest"
	"github.com/quarrydb/quarry/internal/testutil/golden"
)

var update = flag.Bool("update", false, "rewrite the golden SVGs in testdata")

// fixture is a small fixed frame per chart kind.
func fixture(k Kind) (Spec, *Frame) {
	s := Spec{Kind: k, Title: "Test " + string(k), XLabel: "x", YLabel: "y", Width: 640, Height: 400}
	regions := []string{"north", "south", "east"}
	switch k {
	case Bar:
		f := &Frame{}
		for i, cat := range []string{"apples", "pears", "plums", "cherries"} {
			for j, r := range regions {
				f.XCat = append(f.XCat, cat)
				f.Y = append(f.Y, float64(1000*(i+1)+250*j))
				f.Group = append(f.Group, r)
			}
		}
		s.ColorLabel = "region"
		return s, f
	case Line, Area:
		f := &Frame{}
		start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		for d := range 60 {
			for j, r := range regions[:2] {
				f.XNum = append(f.XNum, float64(start.AddDate(0, 0, d).Unix()))
				f.Y = append(f.Y, 10+5*math.Sin(float64(d)/7)+float64(4*j))
				f.Group = append(f.Group, r)
			}
		}
		s.XTime, s.ColorLabel = true, "region"
		return s, f
	case Scatter:
		f := &Frame{}
		for i := range 200 {
			x := float64(i) / 10
			f.XNum = append(f.XNum, x)
			f.Y = append(f.Y, 2*x+3*math.Sin(float64(i)))
			f.Facet = append(f.Facet, regions[i%2])
		}
		return s, f
	case Histogram:
		f := &Frame{}
		for i := range 12 {
			f.XNum = append(f.XNum, float64(i*5))
			f.XEnd = append(f.XEnd, float64(i*5+5))
			f.Y = append(f.Y, float64(100*(6-int(math.Abs(float64(i-6))))+10))
		}
		return s, f
	case Box:
		f := &Frame{}
		for i, r := range regions {
			b := float64(10 * i)
			f.XCat = append(f.XCat, r)
			f.Box = append(f.Box, FiveNum{Min: b, Q1: b + 5, Median: b + 8, Q3: b + 12, Max: b + 25})
		}
		return s, f
	case Heatmap:
		f := &Frame{}
		for i, r := range regions {
			for j, m := range []string{"Jan", "Feb", "Mar", "Apr"} {
				f.XCat = append(f.XCat, m)
				f.YCat = append(f.YCat, r)
				f.Y = append(f.Y, float64(i*4+j))
			}
		}
		s.ColorLabel = "orders"
		return s, f
	}
	panic(k)
}

// TestRenderPNG decodes every kind's PNG and checks its size and that it
// is not blank (the pixel values vary).
func TestRenderPNG(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			s, f := fixture(k)
			b, err := Render(s, f, PNG)
			if err != nil {
				t.Fatal(err)
			}
			charttest.CheckPNG(t, b, s.Width, s.Height)
			if os.Getenv("CHART_PNG_DIR") != "" {
				_ = os.WriteFile(filepath.Join(os.Getenv("CHART_PNG_DIR"), string(k)+".png"), b, 0o644)
			}
		})
	}
}

// TestRenderSVGGolden compares each kind's SVG with testdata/<kind>.svg
// (go test ./internal/chart -update rewrites them).
func TestRenderSVGGolden(t *testing.T) {
	for _, k := range Kinds {
		t.Run(string(k), func(t *testing.T) {
			s, f := fixture(k)
			b, err := Render(s, f, SVG)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte(s.Title)) {
				t.Fatalf("not an SVG with the title: %.200s", b)
			}
			golden.Check(t, filepath.Join("testdata", string(k)+".svg"), b, *update)
		})
	}
}

func TestRenderErrors(t *testing.T) {
	s, f := fixture(Bar)
	cases := []struct {
		name string
		s    Spec
		f    *Frame
		want string
	}{
		{"too small", Spec{Kind: Bar, Width: 100, Height: 400}, f, "outside"},
		{"too big", Spec{Kind: Bar, Width: 640, Height: 4000}, f, "outside"},
		{"empty", s, &Frame{}, "nothing to draw"},
		{"ragged", s, &Frame{XCat: []string{"a", "b"}, Y: []float64{1}}, "rows"},
		{"kind", Spec{Kind: "pie", Width: 640, Height: 400}, f, "unknown kind"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Render(c.s, c.f, PNG)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestThousands(t *testing.T) {
	for in, want := range map[string]string{
		"0": "0", "999": "999", "1000": "1,000", "-12345.5": "-12,345.5", "1234567": "1,234,567",
		"1e+06": "1e+06", "2024-01": "2024-01", "": "", "+1000": "+1,000",
	} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%q) = %q, want %q", in, got, want)
		}
	}
}
