package infer

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWidenFastPaths: the cells Keeps (and so Widen) keeps at a kind
// without classifying them are cells Classify puts there.
func TestWidenFastPaths(t *testing.T) {
	cases := []string{"0", "-0", "00", "01", "-01", "1", "-1", "123456789012345", "1234567890123456", "-123456789012345",
		"0.0", "-0.0", "0.5", "-0.5", "00.5", "1.", ".5", "1.5e3", "1e3", "123456789.012345", "123456789.0123456",
		"0.000000000000001", "0.0000000000000001", "9007199254740993", "1.10", "+1", "1_0", "0x1", "NaN", "-", ".", ""}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := "0123456789-.e+"
	for range 200_000 {
		var b strings.Builder
		for range 1 + rng.IntN(19) {
			c := alphabet[rng.IntN(len(alphabet))]
			if rng.IntN(3) > 0 {
				c = alphabet[rng.IntN(10)]
			}
			b.WriteByte(c)
		}
		cases = append(cases, b.String())
	}
	stamps := []string{"2023-05-31", "2023-02-29", "2024-02-29", "2023-13-01", "2023-05-31 03:10:13", "2023-05-31T03:10:13Z",
		"2023-05-31T03:10:13.123+02:00", "2023-05-31 03:10:13.5", "2023-05-31 24:10:13", "2023/05/31", "2023-05-31T03:10",
		"2023-05-31 03:10:13+0200", "1e10", "true", "TRUE"}
	for range 50_000 {
		b := []byte(stamps[rng.IntN(6)])
		for range rng.IntN(3) {
			b[rng.IntN(len(b))] = "0123456789-:T Z+."[rng.IntN(17)]
		}
		stamps = append(stamps, string(b))
	}
	for _, s := range stamps {
		for _, k := range []Kind{KindDate, KindTSNaive, KindTSZoned, KindBool, KindString} {
			if Keeps(k, s) && Classify(s) != k {
				t.Fatalf("Keeps(%v, %q), Classify says %v", k, s, Classify(s))
			}
		}
	}
	for _, s := range cases {
		for _, k := range []Kind{KindInt, KindFloat} {
			want := JoinKinds(k, Classify(s))
			if s == "" {
				want = k // Widen is never called with an empty cell; the fast paths must not take it
				if plainInt(s) || plainDecimal(s) {
					t.Fatal("empty cell taken")
				}
				continue
			}
			if got := Widen(k, s); got != want {
				t.Fatalf("Widen(%v, %q) = %v, Classify says %v", k, s, got, want)
			}
			if plainInt(s) && Classify(s) != KindInt || plainDecimal(s) && Classify(s) != KindFloat {
				t.Fatalf("%q: fast path taken, Classify says %v", s, Classify(s))
			}
		}
	}
}
