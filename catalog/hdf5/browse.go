//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

// Object kinds reported by Browse.
const (
	KindGroup         = "group"
	KindDataset       = "dataset"
	KindSoftLink      = "soft_link"
	KindExternalLink  = "external_link"
	KindNamedDatatype = "named_datatype"
)

// maxBrowseMembers bounds the members Browse describes for one group.
const maxBrowseMembers = 1000

// Object describes one HDF5 object for the model. It marshals to JSON with
// snake_case keys; only the fields of its kind are present.
type Object struct {
	// Path is the internal path as requested (normalized).
	Path string `json:"path"`
	// Kind is group, dataset, soft_link, external_link or named_datatype.
	Kind string `json:"kind"`
	// ResolvedPath is the object's own path when Path went through links.
	ResolvedPath string `json:"resolved_path,omitempty"`
	// ResolvedFile is the file holding the object when an external link was
	// followed (relative to the data root when one is set, else its name).
	ResolvedFile string `json:"resolved_file,omitempty"`
	// Attributes of a group, dataset or named datatype (the first 256 by
	// name), as JSON-safe values (see h5.ReadAttribute): numbers, strings,
	// booleans, nested lists and objects; NaN and infinities as "NaN",
	// "Infinity", "-Infinity"; opaque bytes as {"base64", "size_bytes"}.
	// An attribute over the caps (4096 elements, 4096 characters per
	// string, 3072 bytes per opaque value, 64K characters of text) is an
	// object {"truncated": true, "dtype", "shape", "element_count"} with
	// its first elements in "values" (flattened row-major) or, for a
	// scalar, the cut "value" (and a string's full "length").
	Attributes map[string]any `json:"attributes,omitempty"`
	*GroupInfo
	*TypeInfo
	*DatasetInfo
	*LinkInfo
}

// GroupInfo lists a group's members.
type GroupInfo struct {
	// Members are the first links of the group, in name order.
	Members []Member `json:"members"`
	// MemberCount is the total number of links in the group.
	MemberCount int64 `json:"member_count"`
	// MembersTruncated is set when only the first members are listed.
	MembersTruncated bool `json:"members_truncated,omitempty"`
}

// Member is one entry of a group listing.
type Member struct {
	// Name is the link name.
	Name string `json:"name"`
	// Kind is group, dataset, soft_link, external_link or named_datatype.
	Kind string `json:"kind"`
	// Shape of a dataset member (omitted for scalars, which set Scalar).
	Shape []int64 `json:"shape,omitempty"`
	// Scalar marks a scalar dataset member.
	Scalar bool `json:"scalar,omitempty"`
	// DType of a dataset member.
	DType string `json:"dtype,omitempty"`
	// Target of a link member (the object path); TargetFile for external links.
	Target string `json:"target,omitempty"`
	// TargetFile is the file an external link points to, as stored.
	TargetFile string `json:"target_file,omitempty"`
	// Internal marks format bookkeeping: PyTables index groups (_i_*) and
	// NetCDF-4 dimensions that are not variables.
	Internal bool `json:"internal,omitempty"`
}

// TypeInfo is the element type of a dataset or a named datatype.
type TypeInfo struct {
	// DType is the compact notation (see h5.Type.String): "float64",
	// "int32", "|S8", "vlen utf-8 string", "compound{...}", ...
	DType string `json:"dtype"`
	// DTypeDetail is the structured layout.
	DTypeDetail *DType `json:"dtype_detail"`
}

// DatasetInfo is a dataset's shape and storage.
type DatasetInfo struct {
	// Shape is [] for a scalar dataset and null for a null dataspace.
	Shape []int64 `json:"shape"`
	// MaxShape uses -1 for unlimited dimensions.
	MaxShape []int64 `json:"maxshape"`
	// SizeBytes is the logical size: elements x element size.
	SizeBytes int64 `json:"size_bytes"`
	// StorageBytes is the space allocated in the file.
	StorageBytes int64 `json:"storage_bytes"`
	// Layout is compact, contiguous, chunked or virtual.
	Layout string `json:"layout"`
	// Chunks is null unless the dataset is chunked.
	Chunks []int64 `json:"chunks"`
	// Filters is the filter pipeline, in order.
	Filters []FilterInfo `json:"filters"`
	// FillValue is the fill value (null when undefined or not representable).
	FillValue any `json:"fill_value"`
	// Unreadable says why read_dataset_slice will refuse this dataset.
	Unreadable string `json:"unreadable,omitempty"`
}

// FilterInfo is one filter of a dataset's pipeline.
type FilterInfo struct {
	// ID is the HDF5 filter id (1 deflate, 2 shuffle, 32001 blosc, ...).
	ID int `json:"id"`
	// Name is the registered name ("unregistered" when unknown).
	Name string `json:"name"`
	// Level is the deflate (gzip) level.
	Level *int `json:"level,omitempty"`
	// Optional is set for filters the library may skip (H5Z_FLAG_OPTIONAL).
	Optional bool `json:"optional,omitempty"`
	// Available reports whether this server's library can apply the filter.
	Available bool `json:"available"`
}

// LinkInfo describes a soft or external link (not followed).
type LinkInfo struct {
	// Target is the object path the link points to.
	Target string `json:"target"`
	// TargetFile is the external link's file name, as stored.
	TargetFile string `json:"target_file,omitempty"`
	// Dangling is set when the target does not exist.
	Dangling bool `json:"dangling"`
	// OutsideRoot is set when an external link points outside the data root.
	OutsideRoot bool `json:"outside_root,omitempty"`
}

// DType is the structured description of an HDF5 datatype.
type DType struct {
	// Class is the HDF5 class: integer, float, string, enum, compound,
	// array, vlen, opaque, reference, bitfield or time.
	Class string `json:"class"`
	// Size of one element in bytes (in the file).
	Size int `json:"size"`
	// ByteOrder is "little" or "big" for numbers.
	ByteOrder string `json:"byte_order,omitempty"`
	// Signed is set for integers and enums.
	Signed *bool `json:"signed,omitempty"`
	// Charset ("ascii" or "utf-8"), VariableLength and Padding ("nullterm",
	// "nullpad", "spacepad") describe strings.
	Charset        string `json:"charset,omitempty"`
	VariableLength bool   `json:"variable_length,omitempty"` // variable-length string
	Padding        string `json:"padding,omitempty"`         // fixed-length string padding
	// Members of a compound, with byte offsets.
	Members []DTypeMember `json:"members,omitempty"`
	// EnumMembers of an enumeration.
	EnumMembers []EnumValue `json:"enum_members,omitempty"`
	// Dims of an array type.
	Dims []int64 `json:"dims,omitempty"`
	// Base type of an array, vlen or enum.
	Base *DType `json:"base,omitempty"`
	// Tag of an opaque type.
	Tag string `json:"tag,omitempty"`
}

// DTypeMember is one compound member with its byte offset.
type DTypeMember struct {
	Name   string `json:"name"`   // member name
	Offset int    `json:"offset"` // byte offset in the record
	Type   *DType `json:"type"`   // member type
}

// EnumValue is one enumeration member.
type EnumValue struct {
	Name  string `json:"name"`  // member name
	Value int64  `json:"value"` // integer value
}

func dtypeDetail(t *h5.Type, depth int) *DType {
	if t == nil || depth > 16 {
		return nil
	}
	d := &DType{Class: t.Class.String(), Size: t.Size}
	switch t.Order {
	case h5.OrderLE:
		d.ByteOrder = "little"
	case h5.OrderBE:
		d.ByteOrder = "big"
	}
	switch t.Class {
	case h5.ClassInteger, h5.ClassEnum:
		s := t.Signed
		d.Signed = &s
	case h5.ClassString:
		d.Charset = "ascii"
		if t.CharSet == h5.CharSetUTF8 {
			d.Charset = "utf-8"
		}
		d.VariableLength = t.VarString
		if !t.VarString {
			d.Padding = [...]string{"nullterm", "nullpad", "spacepad"}[min(max(int(t.Pad), 0), 2)]
		}
	case h5.ClassCompound:
		for _, m := range t.Members {
			d.Members = append(d.Members, DTypeMember{Name: m.Name, Offset: m.Offset, Type: dtypeDetail(m.Type, depth+1)})
		}
	case h5.ClassOpaque:
		d.Tag = t.Tag
	}
	for _, e := range t.Enum {
		d.EnumMembers = append(d.EnumMembers, EnumValue{Name: e.Name, Value: e.Value})
	}
	d.Dims = t.Dims
	if t.Class != h5.ClassEnum || depth == 0 {
		d.Base = dtypeDetail(t.Base, depth+1)
	}
	return d
}

// Browse describes the object at internalPath ("/" = root group) in
// absFile. Links in the middle of the path are followed; a final soft or
// external link is described (target, dangling), not followed. Missing
// objects fail with resource_not_found.
func (f *Format) Browse(ctx context.Context, absFile, internalPath string) (*Object, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ip, err := CleanInternalPath(internalPath)
	if err != nil {
		return nil, err
	}
	res, err := f.resolve(absFile, ip, false)
	if err != nil {
		return nil, err
	}
	defer res.release()
	obj := &Object{Path: ip}
	if res.followed && res.path != ip {
		obj.ResolvedPath = res.path
	}
	if res.absFile != absFile {
		obj.ResolvedFile = f.displayPath(res.absFile)
	}
	if res.link != nil {
		return f.browseLink(absFile, ip, obj, res.link), nil
	}
	fid := res.file.ID()
	oid, err := h5.OpenObject(fid, res.path)
	if err != nil {
		return nil, qerr.Internal(err, "opening %s: %v", res.path, err)
	}
	defer h5.Close(oid)
	obj.Attributes, _ = h5.ReadAttributes(oid, maxAttrs)
	if len(obj.Attributes) == 0 {
		obj.Attributes = nil
	}
	switch res.obj.Type {
	case h5.ObjGroup:
		obj.Kind = KindGroup
		gi, err := browseGroup(ctx, fid, res.path, oid)
		if err != nil {
			return nil, err
		}
		obj.GroupInfo = gi
	case h5.ObjDataset:
		obj.Kind = KindDataset
		ti, di, err := browseDataset(oid)
		if err != nil {
			return nil, err
		}
		obj.TypeInfo, obj.DatasetInfo = ti, di
	case h5.ObjNamedDatatype:
		obj.Kind = KindNamedDatatype
		t, err := h5.DescribeType(oid)
		if err != nil {
			return nil, qerr.Internal(err, "reading named datatype %s: %v", res.path, err)
		}
		obj.TypeInfo = &TypeInfo{DType: t.String(), DTypeDetail: dtypeDetail(t, 0)}
	default:
		return nil, qerr.Unsupported(qerr.CodeUnsupportedType, "%s is an HDF5 object of unknown type", ip)
	}
	return obj, nil
}

// displayPath shows a file relative to the root, or by name without one.
func (f *Format) displayPath(abs string) string {
	if f.root != "" {
		if rel, err := filepath.Rel(f.root, abs); err == nil && within(f.root, abs) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(abs)
}

func (f *Format) browseLink(absFile, ip string, obj *Object, l *h5.Link) *Object {
	obj.Kind = KindSoftLink
	if l.Type == h5.LinkExternal {
		obj.Kind = KindExternalLink
	}
	obj.LinkInfo = &LinkInfo{Target: l.Target, TargetFile: l.TargetFile}
	res, err := f.resolve(absFile, ip, true)
	if err == nil {
		res.release()
		return obj
	}
	switch qerr.Code(err) {
	case qerr.CodeDanglingLink, qerr.CodeResourceNotFound:
		obj.Dangling = true
	case qerr.CodePathOutsideRoot:
		obj.OutsideRoot = true
	case qerr.CodeUnsupportedFormat:
		// The target file exists but is not readable HDF5.
		obj.Dangling = true
	}
	return obj
}

func browseGroup(ctx context.Context, fid h5.ID, p string, gid h5.ID) (*GroupInfo, error) {
	members, total, err := h5.ListMembers(gid, maxBrowseMembers)
	if err != nil {
		return nil, qerr.Internal(err, "listing %s: %v", p, err)
	}
	gi := &GroupInfo{Members: make([]Member, 0, len(members)), MemberCount: total, MembersTruncated: total > int64(len(members))}
	for _, m := range members {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		mb := Member{Name: m.Name, Internal: internalName(m.Name)}
		switch m.Link {
		case h5.LinkSoft, h5.LinkExternal:
			mb.Kind = KindSoftLink
			if m.Link == h5.LinkExternal {
				mb.Kind = KindExternalLink
			}
			if l, ok, err := h5.GetLink(fid, join(p, m.Name)); err == nil && ok {
				mb.Target, mb.TargetFile = l.Target, l.TargetFile
			}
		case h5.LinkHard:
			switch m.Obj {
			case h5.ObjGroup:
				mb.Kind = KindGroup
			case h5.ObjNamedDatatype:
				mb.Kind = KindNamedDatatype
			case h5.ObjDataset:
				mb.Kind = KindDataset
				if did, err := h5.OpenObject(fid, join(p, m.Name)); err == nil {
					if sp, err := h5.DatasetSpace(did); err == nil {
						mb.Shape = sp.Dims
						mb.Scalar = sp.Class == h5.SpaceScalar
					}
					if t, err := h5.DatasetType(did); err == nil {
						mb.DType = t.String()
					}
					mb.Internal = mb.Internal || netCDFDimOnly(did)
					_ = h5.Close(did)
				}
			default:
				mb.Kind = "unknown"
			}
		default:
			mb.Kind = "user_defined_link"
		}
		gi.Members = append(gi.Members, mb)
	}
	return gi, nil
}

func browseDataset(did h5.ID) (*TypeInfo, *DatasetInfo, error) {
	sp, err := h5.DatasetSpace(did)
	if err != nil {
		return nil, nil, qerr.Internal(err, "reading dataset shape: %v", err)
	}
	t, err := h5.DatasetType(did)
	if err != nil {
		return nil, nil, qerr.Internal(err, "reading dataset type: %v", err)
	}
	info, err := h5.GetDatasetInfo(did)
	if err != nil {
		return nil, nil, qerr.Internal(err, "reading dataset storage: %v", err)
	}
	ti := &TypeInfo{DType: t.String(), DTypeDetail: dtypeDetail(t, 0)}
	di := &DatasetInfo{
		MaxShape:     sp.MaxDims,
		StorageBytes: info.StorageSize,
		Layout:       info.Layout.String(),
		Chunks:       info.Chunk,
		Filters:      []FilterInfo{},
	}
	switch sp.Class {
	case h5.SpaceScalar:
		di.Shape, di.MaxShape = []int64{}, []int64{}
	case h5.SpaceSimple:
		di.Shape = sp.Dims
	}
	di.SizeBytes = mulSat(sp.NumElements(), int64(t.Size))
	for _, fl := range info.Filters {
		fi := FilterInfo{ID: fl.ID, Name: fl.Name, Optional: fl.Flags&1 != 0, Available: fl.Available}
		if fi.Name == "" {
			fi.Name = "unregistered"
		}
		if fl.ID == h5.FilterDeflate && len(fl.ClientData) > 0 {
			lvl := int(fl.ClientData[0])
			fi.Level = &lvl
		}
		di.Filters = append(di.Filters, fi)
	}
	if info.FillDefined != 0 {
		di.FillValue = fillValue(did, t)
	}
	lf := mapType(t)
	switch {
	case sp.Class == h5.SpaceNull:
		di.Unreadable = "the dataset has a null dataspace (no data)"
	case !lf.supported():
		di.Unreadable = "unsupported element type " + t.String()
	}
	if fl, bad := info.UnavailableFilter(); bad {
		name := fl.Name
		if name == "" {
			name = "unregistered"
		}
		di.Unreadable = fmt.Sprintf("the %s filter (id %d) is not available in this server's HDF5 library", name, fl.ID)
	} else if err := storageErr("this dataset", info); err != nil {
		di.Unreadable = qerr.As(err).Message
	}
	return ti, di, nil
}

func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > (1<<63-1)/b {
		return 1<<63 - 1
	}
	return a * b
}

// fillValue decodes a dataset's fill value for types with a JSON form.
func fillValue(did h5.ID, t *h5.Type) any {
	if t.HasVarData() || !decodableType(t) {
		return nil
	}
	mt, size, err := h5.MemType(t)
	if err != nil {
		return nil
	}
	defer h5.Close(mt)
	buf := make([]byte, size)
	if err := h5.FillValue(did, mt, buf); err != nil {
		return nil
	}
	return h5.DecodeValue(t, buf)
}

func decodableType(t *h5.Type) bool {
	switch t.Class {
	case h5.ClassInteger, h5.ClassFloat, h5.ClassString, h5.ClassEnum:
		return true
	case h5.ClassCompound:
		for _, m := range t.Members {
			if !decodableType(m.Type) {
				return false
			}
		}
		return true
	case h5.ClassArray:
		return decodableType(t.Base)
	}
	return false
}
