package engine

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
)

// valueIDs numbers strings by value: short ones (inline table, trailing
// zero bytes and the empty string included) and long ones (Go map) alike,
// ids dense in first-seen order, every value kept.
func TestStrIDsByValue(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	alphabet := "ab\x00"
	a := acct{b: &budget{}}
	v := newValueIDs(arrow.BinaryTypes.String, false, &a)
	want := map[string]int32{}
	for range 200_000 {
		var sb strings.Builder
		for range r.IntN(20) {
			sb.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
		s := sb.String()
		id, ok := want[s]
		if !ok {
			id = int32(len(want))
			want[s] = id
		}
		if got := v.strID(s); got != id {
			t.Fatalf("%q: id %d, want %d", s, got, id)
		}
	}
	if int(v.n) != len(want) || len(v.strs) != len(want) {
		t.Fatalf("%d ids, %d values kept, want %d", v.n, len(v.strs), len(want))
	}
	for s, id := range want {
		if v.value(id) != s {
			t.Fatalf("id %d: value %q, want %q", id, v.value(id), s)
		}
	}
	if a.n <= 0 {
		t.Fatalf("nothing charged")
	}
}
