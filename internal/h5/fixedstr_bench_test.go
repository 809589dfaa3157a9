package h5

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// benchFixedData returns n NULL-padded product-like names of size bytes in
// records of stride bytes.
func benchFixedData(n, stride, size int) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"Heavy", "Compact", "Urban", "Onyx", "Silent", "Ivory", "Gentle", "Emerald", "Portable"}
	nouns := []string{"Watch", "Kettle", "Drone", "Cooler", "Charger", "Boot", "Keyboard", "Jacket", "Lantern"}
	data := make([]byte, n*stride)
	for i := range n {
		s := fmt.Sprintf("%s %s", words[rng.IntN(len(words))], nouns[rng.IntN(len(nouns))])
		copy(data[i*stride:i*stride+size], s)
	}
	return data
}

func BenchmarkPackFixedStrings(b *testing.B) {
	const n, size = 1 << 20, 17
	orig := benchFixedData(n, size, size)
	data := make([]byte, len(orig))
	offs := make([]int32, n+1)
	b.SetBytes(int64(len(orig)))
	for b.Loop() {
		copy(data, orig)
		PackFixedStrings(data, n, size, StrNullPad, offs)
	}
}

func BenchmarkPackFixedStringsFrom(b *testing.B) {
	const n, stride, size = 1 << 20, 35, 8
	src := benchFixedData(n, stride, size)
	dst := make([]byte, n*size)
	offs := make([]int32, n+1)
	b.SetBytes(int64(n * size))
	for b.Loop() {
		PackFixedStringsFrom(dst, src, n, stride, size, StrNullPad, offs)
	}
}
