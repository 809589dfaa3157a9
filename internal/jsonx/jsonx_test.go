package jsonx

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// reference is what AppendFloat must produce for finite values:
// encoding/json's text for float64 (and for float32 values, strconv's
// shortest float32 form in encoding/json's layout).
func reference(f float64, bits int) string {
	if bits == 64 {
		b, err := json.Marshal(f)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	b, err := json.Marshal(float32(f))
	if err != nil {
		panic(err)
	}
	return string(b)
}

func checkFloat(t *testing.T, f float64, bits int) {
	t.Helper()
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return
	}
	if bits == 32 {
		f = float64(float32(f))
	}
	got := string(AppendFloat(nil, f, bits))
	if want := reference(f, bits); got != want {
		t.Fatalf("AppendFloat(%v (%b), %d) = %s, want %s", f, math.Float64bits(f), bits, got, want)
	}
	if back, err := strconv.ParseFloat(got, bits); err != nil || (bits == 64 && back != f) || (bits == 32 && float32(back) != float32(f)) {
		t.Fatalf("AppendFloat(%v) = %s does not parse back: %v %v", f, got, back, err)
	}
}

// TestAppendFloatMatchesEncodingJSON covers the short-decimal fast path
// (1 to 4 fraction digits, both signs, around the path's bounds), integers,
// and random bit patterns.
func TestAppendFloatMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, f := range []float64{0.1, 0.2, 0.3, 1.5, 2.25, 0.0001, 0.00011, 0.0009999, 99999999999.9, 1e11 - 0.5, 1e11 + 0.5, 123.456, 9.995, 0.05,
		1e-4, 1.0001e-4, 5e-5, 1 << 50, (1 << 50) + 0.5, 1e15, 1e15 + 1, 0.1 + 0.2, 2.0 / 3, 1e21, 1e-7, 123456789.0123, 4503599627370495.5} {
		checkFloat(t, f, 64)
		checkFloat(t, -f, 64)
		checkFloat(t, f, 32)
	}
	for range 200_000 {
		k := r.IntN(5)
		v := r.Int64N(1 << uint(r.IntN(50)+1))
		f := float64(v) / math.Pow10(k)
		if r.IntN(2) == 0 {
			f = -f
		}
		checkFloat(t, f, 64)
		checkFloat(t, f, 32)
		// The neighbours of a short decimal need their long form.
		checkFloat(t, math.Nextafter(f, math.Inf(1)), 64)
		checkFloat(t, math.Nextafter(f, math.Inf(-1)), 64)
		checkFloat(t, math.Float64frombits(r.Uint64()), 64)
		checkFloat(t, float64(math.Float32frombits(r.Uint32())), 32)
	}
}

// FuzzAppendFloat compares AppendFloat with encoding/json on any bits.
func FuzzAppendFloat(f *testing.F) {
	f.Add(uint64(math.Float64bits(0.1)), false)
	f.Add(uint64(math.Float64bits(12.34)), true)
	f.Fuzz(func(t *testing.T, bits uint64, f32 bool) {
		if f32 {
			checkFloat(t, float64(math.Float32frombits(uint32(bits))), 32)
			return
		}
		checkFloat(t, math.Float64frombits(bits), 64)
	})
}

func BenchmarkAppendFloatPrices(b *testing.B) {
	vs := make([]float64, 10_000)
	for i := range vs {
		vs[i] = float64(200+i*37%99_800) / 100
	}
	buf := make([]byte, 0, 1<<17)
	for b.Loop() {
		buf = buf[:0]
		for _, v := range vs {
			buf = AppendFloat(buf, v, 64)
		}
	}
}
