package hdf5

// The types Browse returns, declared without cgo so that the build
// without HDF5 (nohdf5.go) shares them.

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

// internalAttrs are NetCDF-4/dimension-scale bookkeeping attributes that
// carry object references and mean nothing to a reader.
var internalAttrs = map[string]bool{
	"DIMENSION_LIST": true, "REFERENCE_LIST": true, "_Netcdf4Dimid": true,
	"_Netcdf4Coordinates": true, "_nc3_strict": true,
}

// IsInternalAttr reports NetCDF-4 and dimension-scale bookkeeping
// attributes (object references, dimension ids), which mean nothing to a
// reader: the catalog drops them and browse_hdf5 hides them unless asked.
func IsInternalAttr(name string) bool { return internalAttrs[name] }
