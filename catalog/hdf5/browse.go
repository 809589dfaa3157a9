//go:build cgo && !nohdf5

package hdf5

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/quarrydb/quarry/internal/h5"
	"github.com/quarrydb/quarry/internal/qerr"
)

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
