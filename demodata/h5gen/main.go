package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/h5/h5write"
)

func main() {
	out := flag.String("out", filepath.Join("demodata", "files"), "output directory")
	flag.Parse()
	if err := generate(*out, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// generate writes both files under out/physics and logs one line each.
func generate(out string, w io.Writer) error {
	dir := filepath.Join(out, "physics")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, g := range []struct {
		name string
		fn   func(path string) error
	}{
		{"calibration.h5", writeCalibration},
		{"experiment.h5", writeExperiment},
	} {
		p := filepath.Join(dir, g.name)
		// Write beside and rename: a reader never sees a half-written file.
		tmp := p + ".tmp"
		if err := g.fn(tmp); err != nil {
			_ = os.Remove(tmp)
			return fmt.Errorf("%s: %w", g.name, err)
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%s: %d bytes\n", filepath.ToSlash(filepath.Join("physics", g.name)), st.Size())
	}
	return nil
}

// writer keeps the first error and closes what it opened.
type writer struct {
	err  error
	open []h5.ID
}

func (w *writer) check(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

func (w *writer) id(id h5.ID, err error) h5.ID {
	w.check(err)
	if err == nil {
		w.open = append(w.open, id)
	}
	return id
}

func (w *writer) keep(id h5.ID) h5.ID {
	w.open = append(w.open, id)
	return id
}

func (w *writer) close() error {
	for i := len(w.open) - 1; i >= 0; i-- {
		w.check(h5.Close(w.open[i]))
	}
	w.open = nil
	return w.err
}

func ptr[T any](s []T) unsafe.Pointer { return unsafe.Pointer(&s[0]) }

const channels = 64

func writeCalibration(path string) error {
	w := &writer{}
	f := w.id(h5write.CreateFile(path))
	if w.err != nil {
		return w.err
	}
	rng := rand.New(rand.NewPCG(0x5175617272790100, 0xCA1B))
	f64 := w.keep(h5.NewFloat(8))
	gains, offsets := make([]float64, channels), make([]float64, channels)
	for i := range gains {
		gains[i] = math.Round((1+0.05*rng.NormFloat64())*10000) / 10000
		offsets[i] = math.Round(rng.NormFloat64()*2*100) / 100
	}
	d := w.id(h5write.CreateDataset(f, "/gains", f64, []int64{channels}, nil))
	w.check(h5write.WriteValues(d, f64, gains))
	w.check(h5write.SetAttr(d, "units", "counts/MeV"))
	w.check(h5write.SetAttr(d, "long_name", "Per-channel gain"))
	d = w.id(h5write.CreateDataset(f, "/offsets", f64, []int64{channels}, nil))
	w.check(h5write.WriteValues(d, f64, offsets))
	w.check(h5write.SetAttr(d, "units", "counts"))
	w.check(h5write.SetAttr(f, "title", "MUON-2 channel calibration"))
	w.check(h5write.SetAttr(f, "valid_from", "2024-04-01"))
	return w.close()
}

var operators = []string{
	"Արամ Պետրոսյան", "Անի Հովհաննիսյան", "Գոհար Սարգսյան",
	"Տիգրան Մարտիրոսյան", "Նարե Գրիգորյան", "Maria Rossi", "Kenji Sato",
}

const (
	runCount   = 120
	eventCount = 2000
	imgRows    = 128
	imgCols    = 64
)

func writeExperiment(path string) error {
	w := &writer{}
	f := w.id(h5write.CreateFile(path))
	if w.err != nil {
		return w.err
	}
	f64 := w.keep(h5.NewFloat(8))
	f32 := w.keep(h5.NewFloat(4))
	i16 := w.keep(h5.NewInt(2, true))
	i32 := w.keep(h5.NewInt(4, true))
	i64 := w.keep(h5.NewInt(8, true))
	i8 := w.keep(h5.NewInt(1, true))
	boolT := w.id(h5write.NewBoolType())
	vstr := w.keep(h5.NewString(-1, true, h5.StrNullTerm))

	w.check(h5write.SetAttr(f, "title", "MUON-2 muon lifetime experiment (demo data)"))
	w.check(h5write.SetAttr(f, "institution", "Quarry demo laboratory"))
	w.check(h5write.SetAttr(f, "description", "Synthetic detector runs, events and images for trying Quarry on HDF5."))

	// /runs: one dataset per column (pandas/PyTables layout).
	rng := rand.New(rand.NewPCG(0x5175617272790101, 0x2045))
	runID, start, events := make([]int32, runCount), make([]int64, runCount), make([]int64, runCount)
	duration, beam, quality := make([]float64, runCount), make([]int8, runCount), make([]int8, runCount)
	temp := make([]float32, runCount)
	ops := make([]string, runCount)
	t0 := int64(1714521600) // 2024-05-01T00:00:00Z
	for i := 0; i < runCount; i++ {
		runID[i] = int32(1001 + i)
		start[i] = t0 + int64(i)*14400 + rng.Int64N(600)
		duration[i] = math.Round((3000+rng.Float64()*9000)*10) / 10
		temp[i] = float32(math.Round((293+rng.NormFloat64()*0.8)*100) / 100)
		if rng.Float64() < 0.85 {
			beam[i] = 1
			events[i] = int64(duration[i] * (4 + rng.Float64()))
		}
		switch q := rng.Float64(); {
		case q < 0.75:
			quality[i] = 0
		case q < 0.93:
			quality[i] = 1
		default:
			quality[i] = 2
		}
		ops[i] = operators[rng.IntN(len(operators))]
	}
	g := w.id(h5write.CreateGroup(f, "/runs"))
	w.check(h5write.SetAttr(g, "description", "One row per detector run"))
	col := func(name string, typ h5.ID, mem h5.ID, buf unsafe.Pointer, attrs ...string) {
		d := w.id(h5write.CreateDataset(g, name, typ, []int64{runCount}, nil))
		w.check(h5write.Write(d, mem, buf))
		for i := 0; i+1 < len(attrs); i += 2 {
			w.check(h5write.SetAttr(d, attrs[i], attrs[i+1]))
		}
	}
	col("run_id", i32, i32, ptr(runID))
	col("start_unix", i64, i64, ptr(start), "units", "s since 1970-01-01T00:00:00Z")
	col("duration_s", f64, f64, ptr(duration), "units", "s")
	col("temperature_k", f32, f32, ptr(temp), "units", "K", "long_name", "Detector hall temperature")
	col("beam_on", boolT, boolT, ptr(beam))
	col("events", i64, i64, ptr(events))
	qualityT := w.id(h5.NewEnum(i8, []h5.EnumMember{{Name: "GOOD", Value: 0}, {Name: "MARGINAL", Value: 1}, {Name: "BAD", Value: 2}}))
	col("quality", qualityT, qualityT, ptr(quality))
	d := w.id(h5write.CreateDataset(g, "operator", vstr, []int64{runCount}, nil))
	w.check(h5write.WriteStrings(d, ops, true))
	w.check(h5write.SetAttr(d, "description", "Shift operator (UTF-8)"))

	// /events: a 1-D compound table, chunked and compressed.
	hit := w.id(h5.NewCompound(8, []h5.MemberSpec{{Name: "x", Offset: 0, Type: f32}, {Name: "y", Offset: 4, Type: f32}}))
	chans := w.id(h5.NewArray(i16, []int64{4}))
	det := w.keep(h5.NewString(6, false, h5.StrNullPad))
	const recSize = 40
	ev := w.id(h5.NewCompound(recSize, []h5.MemberSpec{
		{Name: "run_id", Offset: 0, Type: i32},
		{Name: "t_ns", Offset: 4, Type: f64},
		{Name: "energy_mev", Offset: 12, Type: f32},
		{Name: "hit", Offset: 16, Type: hit},
		{Name: "channels", Offset: 24, Type: chans},
		{Name: "muon", Offset: 32, Type: boolT},
		{Name: "detector", Offset: 33, Type: det},
	}))
	rng = rand.New(rand.NewPCG(0x5175617272790102, 0xE4E7))
	rec := make([]byte, eventCount*recSize)
	dets := []string{"LEFT", "RIGHT", "TOP"}
	for i := 0; i < eventCount; i++ {
		r := rec[i*recSize:]
		binary.LittleEndian.PutUint32(r[0:], uint32(runID[i*runCount/eventCount]))
		binary.LittleEndian.PutUint64(r[4:], math.Float64bits(math.Round(rng.ExpFloat64()*2197*10)/10))
		binary.LittleEndian.PutUint32(r[12:], math.Float32bits(float32(math.Round((20+rng.ExpFloat64()*30)*100)/100)))
		binary.LittleEndian.PutUint32(r[16:], math.Float32bits(float32(math.Round(rng.NormFloat64()*400)/10)))
		binary.LittleEndian.PutUint32(r[20:], math.Float32bits(float32(math.Round(rng.NormFloat64()*400)/10)))
		for k := 0; k < 4; k++ {
			binary.LittleEndian.PutUint16(r[24+2*k:], uint16(int16(rng.IntN(1024))))
		}
		if rng.Float64() < 0.7 {
			r[32] = 1
		}
		copy(r[33:39], dets[rng.IntN(len(dets))])
	}
	d = w.id(h5write.CreateDataset(f, "/events", ev, []int64{eventCount}, &h5write.DatasetOptions{
		MaxDims: []int64{h5.Unlimited}, Chunk: []int64{500}, Gzip: 4, Shuffle: true,
	}))
	w.check(h5write.Write(d, ev, ptr(rec)))
	w.check(h5write.SetAttr(d, "title", "Reconstructed muon candidate events"))
	w.check(h5write.SetAttr(d, "t_ns_units", "ns after trigger"))

	// /detector: a 2-D image, a 3-D cube and a soft link.
	g = w.id(h5write.CreateGroup(f, "/detector"))
	w.check(h5write.SetAttr(g, "name", "MUON-2"))
	w.check(h5write.SetAttr(g, "pixel_pitch_mm", 2.5))
	rng = rand.New(rand.NewPCG(0x5175617272790103, 0x1A6E))
	img := make([]float64, imgRows*imgCols)
	for i := 0; i < imgRows; i++ {
		for j := 0; j < imgCols; j++ {
			dx, dy := float64(i-imgRows/2)/30, float64(j-imgCols/2)/15
			v := 120*math.Exp(-(dx*dx+dy*dy)/2) + 5 + rng.NormFloat64()
			img[i*imgCols+j] = math.Round(v*10) / 10
		}
	}
	d = w.id(h5write.CreateDataset(g, "image", f64, []int64{imgRows, imgCols}, &h5write.DatasetOptions{Chunk: []int64{32, 32}, Gzip: 6, Shuffle: true}))
	w.check(h5write.WriteValues(d, f64, img))
	w.check(h5write.SetAttr(d, "units", "counts/s"))
	w.check(h5write.SetAttr(d, "description", "Mean hit rate per pixel over all runs"))
	w.check(h5write.SetAttr(d, "exposure_s", 864000.0))
	cube := make([]int16, 16*32*32)
	for k := 0; k < 16; k++ {
		for i := 0; i < 32; i++ {
			for j := 0; j < 32; j++ {
				cube[(k*32+i)*32+j] = int16(rng.IntN(4) + (k*(i+j))%7)
			}
		}
	}
	d = w.id(h5write.CreateDataset(g, "cube", i16, []int64{16, 32, 32}, &h5write.DatasetOptions{Chunk: []int64{4, 32, 32}, Gzip: 6}))
	w.check(h5write.WriteValues(d, i16, cube))
	w.check(h5write.SetAttr(d, "description", "Hit counts per time slice (16) and pixel (32x32)"))
	w.check(h5write.SetAttr(d, "dims", []string{"time_slice", "row", "col"}))
	w.check(h5write.CreateSoftLink(g, "/detector/image", "latest"))
	w.check(h5write.CreateExternalLink(f, "calibration.h5", "/gains", "/calibration"))
	return w.close()
}
