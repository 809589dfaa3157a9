//go:build cgo && !nohdf5

package hdf5

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/quarrydb/quarry/internal/h5"
)

// UnsupportedMetaKey is the Arrow field metadata key marking a column whose
// HDF5 type Quarry cannot represent; its value is the HDF5 type. Such
// columns have type arrow.Null and read as nulls.
const UnsupportedMetaKey = "quarry.unsupported"

// leafKind says how one HDF5 element type becomes an Arrow array.
type leafKind uint8

const (
	kindNumeric     leafKind = iota // integers and floats: fixed-width primitives
	kindBool                        // h5py FALSE/TRUE enum -> Boolean
	kindEnum                        // other integer enums -> String (member names)
	kindFixedString                 // fixed-length string -> String (trimmed)
	kindVarString                   // variable-length string -> String
	kindList                        // array of numbers -> FixedSizeList
	kindStruct                      // compound (slices only) -> Struct
	kindUnsupported                 // -> Null with UnsupportedMetaKey metadata
)

// leaf is the mapping of one HDF5 type to Arrow.
type leaf struct {
	kind leafKind
	t    *h5.Type
	dt   arrow.DataType
	// list element (kindList) and struct fields (kindStruct).
	elem   *leaf
	listN  int
	fields []*leaf
	names  []string
}

// maxListLen bounds the element count of array types read as lists.
const maxListLen = 1 << 20

// mapType maps an HDF5 type to Arrow. Compounds map to structs (used for
// slices; tables flatten them instead).
func mapType(t *h5.Type) *leaf {
	return mapTypeDepth(t, 0)
}

func mapTypeDepth(t *h5.Type, depth int) *leaf {
	l := &leaf{t: t, kind: kindUnsupported, dt: arrow.Null}
	if depth > 16 {
		return l
	}
	switch t.Class {
	case h5.ClassInteger:
		l.kind = kindNumeric
		l.dt = intType(t.Size, t.Signed)
	case h5.ClassFloat:
		l.kind = kindNumeric
		if t.Size <= 4 {
			l.dt = arrow.PrimitiveTypes.Float32
		} else {
			l.dt = arrow.PrimitiveTypes.Float64
		}
	case h5.ClassEnum:
		if t.Base == nil || t.Base.Class != h5.ClassInteger {
			break
		}
		if t.IsBool() {
			l.kind, l.dt = kindBool, arrow.FixedWidthTypes.Boolean
		} else {
			l.kind, l.dt = kindEnum, arrow.BinaryTypes.String
		}
	case h5.ClassString:
		if t.VarString {
			l.kind = kindVarString
		} else {
			l.kind = kindFixedString
		}
		l.dt = arrow.BinaryTypes.String
	case h5.ClassArray:
		e := mapTypeDepth(t.Base, depth+1)
		n := t.NumElements()
		if e.kind != kindNumeric || n <= 0 || n > maxListLen {
			break
		}
		l.kind, l.elem, l.listN = kindList, e, int(n)
		l.dt = arrow.FixedSizeListOf(int32(n), e.dt)
	case h5.ClassCompound:
		if len(t.Members) == 0 {
			break
		}
		fields := make([]arrow.Field, 0, len(t.Members))
		for _, m := range t.Members {
			sub := mapTypeDepth(m.Type, depth+1)
			l.fields = append(l.fields, sub)
			l.names = append(l.names, m.Name)
			fields = append(fields, sub.field(m.Name))
		}
		l.kind, l.dt = kindStruct, arrow.StructOf(fields...)
	}
	return l
}

func intType(size int, signed bool) arrow.DataType {
	switch {
	case size <= 1:
		if signed {
			return arrow.PrimitiveTypes.Int8
		}
		return arrow.PrimitiveTypes.Uint8
	case size <= 2:
		if signed {
			return arrow.PrimitiveTypes.Int16
		}
		return arrow.PrimitiveTypes.Uint16
	case size <= 4:
		if signed {
			return arrow.PrimitiveTypes.Int32
		}
		return arrow.PrimitiveTypes.Uint32
	}
	if signed {
		return arrow.PrimitiveTypes.Int64
	}
	return arrow.PrimitiveTypes.Uint64
}

// field is the Arrow field for a column of this leaf.
func (l *leaf) field(name string) arrow.Field {
	f := arrow.Field{Name: name, Type: l.dt, Nullable: true}
	if l.kind == kindUnsupported {
		f.Metadata = arrow.NewMetadata([]string{UnsupportedMetaKey}, []string{l.t.String()})
	}
	return f
}

// supported reports whether the leaf (and, for structs, at least one field)
// can be read.
func (l *leaf) supported() bool {
	if l.kind == kindStruct {
		for _, f := range l.fields {
			if f.supported() {
				return true
			}
		}
		return false
	}
	return l.kind != kindUnsupported
}

// flatColumn is one column of a flattened compound.
type flatColumn struct {
	name   string
	member []string
	lf     *leaf
}

// flatten turns a compound type into columns: nested compounds become
// "a.b" columns, everything else one column per member.
func flatten(t *h5.Type) []flatColumn {
	var out []flatColumn
	var walk func(t *h5.Type, prefix string, path []string, depth int)
	walk = func(t *h5.Type, prefix string, path []string, depth int) {
		for _, m := range t.Members {
			p := append(append([]string(nil), path...), m.Name)
			name := m.Name
			if prefix != "" {
				name = prefix + "." + m.Name
			}
			if m.Type.Class == h5.ClassCompound && len(m.Type.Members) > 0 && depth < 16 {
				walk(m.Type, name, p, depth+1)
				continue
			}
			out = append(out, flatColumn{name: name, member: p, lf: mapType(m.Type)})
		}
	}
	walk(t, "", nil, 0)
	return out
}
