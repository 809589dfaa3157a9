package chunk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
)

// newline is the record boundary of newline-delimited records.
func newline(b []byte) int { return bytes.LastIndexByte(b, '\n') + 1 }

// lines is n newline-delimited records, one of them long bytes long.
func lines(n, long int, bom, final bool) string {
	var b strings.Builder
	if bom {
		b.WriteString("\ufeff")
	}
	for i := range n {
		fmt.Fprintf(&b, `{"i":%d,"s":"Երևան %s"}`, i, strings.Repeat("é", i%7))
		if i == n/2 {
			b.WriteString(strings.Repeat("x", long))
		}
		if i < n-1 || final {
			b.WriteString([]string{"\n", "\r\n", "\n\n"}[i%3])
		}
	}
	return b.String()
}

func TestReaderChunks(t *testing.T) {
	tests := []struct {
		name string
		text string
		size int
	}{
		{"BOM, final newline", lines(2000, 0, true, true), 4 << 10},
		{"no final newline", lines(2000, 0, false, false), 4<<10 + 7},
		{"a line longer than a chunk", lines(2000, 50_000, false, true), 4 << 10},
		{"smaller than a chunk", lines(3, 0, true, false), 64 << 10},
		{"one chunk exactly", lines(100, 0, false, true), len(lines(100, 0, false, true))},
		{"empty", "", 4 << 10},
		{"BOM only", "\ufeff", 4 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cr := NewReader(strings.NewReader(tc.text), nil, Config{Size: tc.size, Boundary: newline, What: "test"})
			defer cr.Close()
			var all strings.Builder
			var off int64
			for seq := 0; ; seq++ {
				ch, err := cr.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if ch.Seq != seq || ch.First != (seq == 0) || ch.Start != off {
					t.Fatalf("chunk seq %d first %v start %d, want %d %v %d", ch.Seq, ch.First, ch.Start, seq, seq == 0, off)
				}
				if len(ch.Data) == 0 {
					t.Fatal("empty chunk")
				}
				off += int64(len(ch.Data))
				all.Write(ch.Data)
				last := !strings.HasSuffix(string(ch.Data), "\n")
				cr.Release(ch)
				if last {
					if _, err := cr.Next(); err != io.EOF {
						t.Fatalf("a chunk not ending with a newline before the end: %v", err)
					}
					break
				}
			}
			if all.String() != strings.TrimPrefix(tc.text, "\ufeff") {
				t.Fatal("the chunks do not add up to the input")
			}
		})
	}
}

func TestReaderRecordLimit(t *testing.T) {
	tooLong := errors.New("too long")
	text := lines(100, 20_000, false, true)
	cr := NewReader(strings.NewReader(text), nil, Config{Size: 4 << 10, Boundary: newline, MaxRecord: 10_000, TooLong: tooLong})
	for {
		ch, err := cr.Next()
		if err != nil {
			if err != tooLong {
				t.Fatalf("error %v, want the record limit", err)
			}
			return
		}
		cr.Release(ch)
	}
}

// TestPipeline: results come in input order; the reader never runs more
// than workers+3 chunks ahead of the consumer; a panic in work is an
// error naming the format; Close before the end releases what was not
// consumed.
func TestPipeline(t *testing.T) {
	text := lines(20_000, 0, false, true)
	for _, workers := range []int{1, 2, 4} {
		t.Run(fmt.Sprint(workers), func(t *testing.T) {
			cr := NewReader(strings.NewReader(text), nil, Config{Size: 4 << 10, Boundary: newline, What: "test"})
			var started atomic.Int64
			p := Start(cr, workers, func(_ int, ch *Chunk) (int, error) {
				started.Add(1)
				return ch.Seq, nil
			}, nil)
			defer p.Close()
			for consumed := int64(0); ; consumed++ {
				seq, ok, err := p.Next()
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				if int64(seq) != consumed {
					t.Fatalf("result %d is chunk %d", consumed, seq)
				}
				if ahead := started.Load() - consumed; ahead > int64(workers)+3 {
					t.Fatalf("%d chunks started ahead of the consumer, more than workers+3", ahead)
				}
			}
		})
	}
	t.Run("panic", func(t *testing.T) {
		cr := NewReader(strings.NewReader(text), nil, Config{Size: 4 << 10, Boundary: newline, What: "test"})
		p := Start(cr, 2, func(_ int, ch *Chunk) (int, error) {
			if ch.Seq == 3 {
				panic("boom")
			}
			return ch.Seq, nil
		}, nil)
		defer p.Close()
		for {
			_, ok, err := p.Next()
			if err != nil {
				if !strings.Contains(err.Error(), "panic while parsing test: boom") {
					t.Fatalf("error %v", err)
				}
				return
			}
			if !ok {
				t.Fatal("no error")
			}
		}
	})
	t.Run("close early", func(t *testing.T) {
		cr := NewReader(strings.NewReader(text), nil, Config{Size: 4 << 10, Boundary: newline, What: "test"})
		var live atomic.Int64
		p := Start(cr, 2, func(_ int, ch *Chunk) (*int, error) {
			live.Add(1)
			return new(ch.Seq), nil
		}, func(*int) { live.Add(-1) })
		if _, _, err := p.Next(); err != nil {
			t.Fatal(err)
		}
		live.Add(-1) // the consumed one
		p.Close()
		if n := live.Load(); n != 0 {
			t.Fatalf("%d results neither consumed nor dropped", n)
		}
	})
}
