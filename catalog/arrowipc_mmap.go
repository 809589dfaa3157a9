package catalog

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Memory-mapped Arrow IPC files. A scan of an uncompressed Arrow file
// (the random-access format) without dictionary columns maps the file
// and reads each record batch through arrow-go's mapped reader, whose
// arrays point into the mapping; before the batch leaves the reader,
// the columns the query needs are copied out into the scan's allocator
// (the other columns are never touched, so their pages are never read).
// Nothing that points into the mapping outlives ipcMapped.batch, so
// unmapping when the scan ends is safe.
//
// A mapped page whose file was truncated after the mapping raises SIGBUS
// when touched. Every access to the mapping happens inside batch, on the
// goroutine calling it, with debug.SetPanicOnFault on: the fault becomes
// a recovered panic and the scan fails with ErrFileChanged (a structured
// dataset_not_found error with "changed": true), never a crash. The
// copies are checked (checkIPCData) like the batches of the ReadAt path,
// so a file rewritten in place after validation is caught the same way.
//
// Compressed files keep the ReadAt path (the decompressor reads its input
// once anyway), and so do files with dictionary columns (arrow-go's
// mapped reader does not set up its dictionary memo) and streams.

// arrowNoMmap turns mapped scans off (tests and benchmarks compare the
// two paths).
var arrowNoMmap atomic.Bool

// arrowMappedScans counts the scans that mapped their file (tests check
// that the mapped path ran).
var arrowMappedScans atomic.Int64

// ipcMapped reads the record batches of a mapped Arrow file, copying out
// the columns at cols (stored schema indices) of each batch.
type ipcMapped struct {
	data   []byte
	fr     *ipc.FileReader
	cols   []int
	schema *arrow.Schema // the stored fields at cols
	mem    memory.Allocator
}

// mapArrowScan returns a mapped reader of fh for the stored columns at
// cols, or nil when the file is read with ReadAt instead (not eligible,
// mapping unsupported or failed). lay is the file's validated layout,
// opts the reader's options (ipcOptions).
func mapArrowScan(fh *os.File, lay ipcLayout, stored *arrow.Schema, cols []int, mem memory.Allocator, opts []ipc.Option) *ipcMapped {
	if arrowNoMmap.Load() || lay.stream || lay.compressed || hasDictionary(stored) {
		return nil
	}
	// The validated size is mapped: the footer read is the one checked.
	if lay.size <= 0 || int64(int(lay.size)) != lay.size {
		return nil
	}
	data, err := mapFile(fh, int(lay.size))
	if err != nil {
		return nil
	}
	m := &ipcMapped{data: data, cols: cols, mem: mem}
	fields := make([]arrow.Field, len(cols))
	for k, j := range cols {
		fields[k] = stored.Field(j)
	}
	m.schema = arrow.NewSchema(fields, nil)
	err = m.access(func() error {
		fr, err := ipc.NewMappedFileReader(data, opts...)
		if err != nil {
			return err
		}
		m.fr = fr
		if !fr.Schema().Equal(stored) || fr.NumRecords() != len(lay.batches) {
			return fmt.Errorf("%w since it was validated", ErrFileChanged)
		}
		return nil
	})
	if err != nil {
		m.Close()
		return nil
	}
	arrowMappedScans.Add(1)
	return m
}

// hasDictionary reports whether a field of sc holds a dictionary type at
// any depth.
func hasDictionary(sc *arrow.Schema) bool {
	var walk func(dt arrow.DataType) bool
	walk = func(dt arrow.DataType) bool {
		switch t := dt.(type) {
		case *arrow.DictionaryType:
			return true
		case arrow.ExtensionType:
			return walk(t.StorageType())
		case arrow.NestedType:
			for _, f := range t.Fields() {
				if walk(f.Type) {
					return true
				}
			}
		}
		return false
	}
	for _, f := range sc.Fields() {
		if walk(f.Type) {
			return true
		}
	}
	return false
}

// errMappedFault is the error of a fault on a mapped page.
var errMappedFault = errors.New("a page of the memory-mapped file is gone (was the file truncated?)")

// access runs fn, which touches the mapping, with faults turned into
// panics, and returns a panic as an error: a fault wraps ErrFileChanged,
// anything else is panicError's.
func (m *ipcMapped) access(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if p := recover(); p != nil {
			if f, ok := p.(interface{ Addr() uintptr }); ok && f.Addr() != 0 {
				err = fmt.Errorf("%w: %w", ErrFileChanged, errMappedFault)
				return
			}
			err = panicError("the Arrow file does not decode", p)
		}
	}()
	return fn()
}

// Schema implements ipcReader: the stored fields at cols.
func (m *ipcMapped) Schema() *arrow.Schema { return m.schema }

// batch implements ipcReader: record batch i, its columns at cols copied
// out of the mapping.
func (m *ipcMapped) batch(i int) (rec arrow.RecordBatch, err error) {
	err = m.access(func() error {
		full, err := m.fr.RecordBatchAt(i)
		if err != nil {
			return err
		}
		defer full.Release()
		cols := make([]arrow.Array, 0, len(m.cols))
		defer func() { releaseAll(cols) }()
		for _, j := range m.cols {
			d := CopyArrayData(m.mem, full.Column(j).Data())
			cols = append(cols, array.MakeFromData(d))
			d.Release()
		}
		rec = array.NewRecordBatch(m.schema, cols, full.NumRows())
		return nil
	})
	return rec, err
}

// Close implements ipcReader: closes the reader and unmaps the file.
func (m *ipcMapped) Close() {
	if m.fr != nil {
		m.fr.Close()
		m.fr = nil
	}
	if m.data != nil {
		_ = unmapFile(m.data)
		m.data = nil
	}
}
